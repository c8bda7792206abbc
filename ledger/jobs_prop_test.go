package ledger

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testknob"
)

// model is what the property test knows independently of the State: which token of
// each job is live (granted and not yet ended by a receipt, a reap or a resume), every
// token ever issued, and the gas charged.
type model struct {
	t       *testing.T
	rng     *rand.Rand
	h       *Header
	s       *State
	now     time.Time
	live    map[string]string    // job -> its one live token
	expiry  map[string]time.Time // job -> its live lease's expiry
	issued  []string             // every token ever granted
	jobOf   map[string]string    // token -> job
	grants  int
	gasCap  int // the gas limit seen at the first grant; 0 before it
	trace   []string
	nextJob int
}

// TestJobMachineProperties drives the pure job machine with random sequences of
// claim, renew, receipt, clock, reap, resume-reset and add, from fixed seeds, and
// checks after every step: no job is ever granted while another lease of it is live,
// gas never goes below zero or past its limit and equals the claims granted, only the
// current token is ever accepted (every other one is refused and changes nothing), and
// from any state, working on leads to a halt: no job ready and none running. 600 seeds
// with the sweeps build tag, 150 without.
func TestJobMachineProperties(t *testing.T) {
	t.Parallel()
	seeds := testknob.Rounds(150, 600)
	if testing.Short() {
		seeds = 100
	}
	for seed := 0; seed < seeds; seed++ {
		m := newModel(t, uint64(seed))
		for step := range 150 {
			m.step()
			m.check()
			if t.Failed() {
				t.Fatalf("seed %d, step %d; trace:\n%s", seed, step, joinLines(m.trace))
			}
		}
		m.drain()
		if t.Failed() {
			t.Fatalf("seed %d draining; trace:\n%s", seed, joinLines(m.trace))
		}
	}
}

func joinLines(l []string) string {
	if len(l) > 60 {
		l = l[len(l)-60:]
	}
	out := ""
	for _, s := range l {
		out += "  " + s + "\n"
	}
	return out
}

func newModel(t *testing.T, seed uint64) *model {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	m := &model{t: t, rng: rng, now: t0, live: map[string]string{}, expiry: map[string]time.Time{}, jobOf: map[string]string{}}
	m.h = &Header{RunID: "r", Kind: KindGraph, MaxAttempts: 1 + rng.IntN(3)}
	m.s = &State{RunID: "r", Status: RunRunning}
	n := 1 + rng.IntN(12)
	if rng.IntN(3) == 0 {
		m.h.Gas = rng.IntN(2 * n) // sometimes tight, sometimes 0 (the default)
	}
	for range n {
		m.addJob()
	}
	return m
}

func (m *model) addJob() {
	id := fmt.Sprintf("j%d", m.nextJob)
	m.nextJob++
	var needs []string
	for _, j := range m.s.Jobs {
		if j.State != JobFailed && m.rng.IntN(4) == 0 {
			needs = append(needs, j.ID)
		}
	}
	if err := AddJobs(m.s, []JobSpec{{ID: id, Needs: needs}}); err != nil {
		m.t.Errorf("add %s needs %v: %v", id, needs, err)
	}
	m.trace = append(m.trace, fmt.Sprintf("add %s needs %v", id, needs))
}

// pickJob: a random job id, now and then one that does not exist.
func (m *model) pickJob() string {
	if len(m.s.Jobs) == 0 || m.rng.IntN(20) == 0 {
		return "ghost"
	}
	return m.s.Jobs[m.rng.IntN(len(m.s.Jobs))].ID
}

// pickToken: the job's live token most of the time, else any token ever issued
// (usually stale), a well-formed token never issued, or garbage.
func (m *model) pickToken(job string) string {
	switch r := m.rng.IntN(10); {
	case r < 6 && m.live[job] != "":
		return m.live[job]
	case r < 8 && len(m.issued) > 0:
		return m.issued[m.rng.IntN(len(m.issued))]
	case r < 9 && m.live[job] != "" && m.rng.IntN(2) == 0:
		// The live grant's job, attempt and epoch with another nonce: what a second
		// clone's claim of the same state holds.
		j, at, ep, _, _ := ParseLeaseToken(m.live[job])
		return LeaseToken(j, at, ep, []string{"", "0badf00d"}[m.rng.IntN(2)])
	case r < 9:
		return LeaseToken(job, m.rng.IntN(3), m.rng.IntN(3), []string{"", "0badf00d"}[m.rng.IntN(2)])
	default:
		return []string{"", job, job + "#0", "x#y@z", job + "#-1@0"}[m.rng.IntN(5)]
	}
}

// mutate runs f and, when it fails, checks that it changed nothing.
func (m *model) mutate(what string, f func() error) error {
	before := deepCopy(reflect.ValueOf(*m.s)).Interface().(State)
	err := f()
	m.trace = append(m.trace, fmt.Sprintf("%s -> %v", what, err))
	if err != nil && !reflect.DeepEqual(before, *m.s) {
		m.t.Errorf("%s failed (%v) but changed the state:\n%s\n%s", what, err, js(&before), js(m.s))
	}
	return err
}

// deepCopy is v with nothing shared: the state as it was before a step, for
// reflect.DeepEqual after it (stricter than comparing the JSON: a nil list made
// empty counts as a change). Marshalling the whole state before every step was most
// of this test's time under -race. The State's types have exported fields only.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			c.Field(i).Set(deepCopy(v.Field(i)))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	}
	return v
}

func (m *model) step() {
	switch r := m.rng.IntN(100); {
	case r < 30:
		m.claim("")
	case r < 38:
		m.claim(m.pickJob())
	case r < 46:
		id := m.pickJob()
		tok := m.pickToken(id)
		ttl := time.Duration(m.rng.IntN(5)) * time.Minute // 0 is refused
		err := m.mutate(fmt.Sprintf("renew %s %s %s", id, tok, ttl), func() error { return Renew(m.s, id, tok, m.now, ttl) })
		m.expectAccepted("renew", id, tok, err, ttl > 0)
		if err == nil {
			m.expiry[id] = m.now.Add(ttl)
		}
	case r < 75:
		id := m.pickJob()
		tok := m.pickToken(id)
		status := []string{ReceiptOK, ReceiptOK, ReceiptTimeout, ReceiptFailed}[m.rng.IntN(4)]
		before := m.s.Job(id)
		var attempts int
		if before != nil {
			attempts = before.Attempts
		}
		var o Outcome
		err := m.mutate(fmt.Sprintf("done %s %s %s", id, tok, status), func() (err error) {
			o, err = Done(m.h, m.s, id, tok, status, nil)
			return err
		})
		m.expectAccepted("done", id, tok, err, true)
		if err == nil {
			m.end(id)
			m.checkReceipt(id, status, attempts, o)
		}
	case r < 85:
		m.now = m.now.Add(time.Duration(m.rng.IntN(4)) * time.Minute)
		m.trace = append(m.trace, fmt.Sprintf("clock %s", m.now.Format(time.TimeOnly)))
	case r < 93:
		m.reap()
	case r < 96:
		reset := ResumeReset(m.s)
		m.s.Epoch++
		m.trace = append(m.trace, fmt.Sprintf("resume reset %v, epoch %d", reset, m.s.Epoch))
		if len(reset) != len(m.live) {
			m.t.Errorf("resume reset %v, live leases %v", reset, m.live)
		}
		for _, id := range reset {
			if m.live[id] == "" {
				m.t.Errorf("resume reset %s, which had no live lease", id)
			}
			m.end(id)
		}
	default:
		m.addJob()
	}
}

func (m *model) claim(want string) {
	ttl := time.Duration(1+m.rng.IntN(4)) * time.Minute
	spent := m.s.GasSpent
	var g Grant
	err := m.mutate(fmt.Sprintf("claim %q", want), func() (err error) {
		g, err = Claim(m.h, m.s, want, "w", m.now, ttl, RandomNonce())
		return err
	})
	if err != nil || g.Job == nil {
		if err == nil && (g.Reason == "" || m.s.GasSpent != spent) {
			m.t.Errorf("claim granted nothing without a reason, or charged gas: %+v", g)
		}
		if err == nil && want != "" {
			m.t.Errorf("a named claim granted nothing without an error")
		}
		return
	}
	id := g.Job.ID
	m.trace[len(m.trace)-1] += " " + g.Lease
	if old := m.live[id]; old != "" {
		m.t.Errorf("job %s granted as %s while %s is live", id, g.Lease, old)
	}
	if _, seen := m.jobOf[g.Lease]; seen {
		m.t.Errorf("token %s issued twice", g.Lease)
	}
	if m.s.GasSpent != spent+1 {
		m.t.Errorf("claim charged %d gas", m.s.GasSpent-spent)
	}
	m.grants++
	m.live[id], m.expiry[id], m.jobOf[g.Lease] = g.Lease, m.now.Add(ttl), id
	m.issued = append(m.issued, g.Lease)
}

// expectAccepted: a receipt or renewal is accepted exactly when its token is the
// job's live one (and its other arguments are valid).
func (m *model) expectAccepted(what, id, tok string, err error, valid bool) {
	want := valid && m.live[id] != "" && tok == m.live[id]
	if want && err != nil {
		m.t.Errorf("%s %s with the live token %s refused: %v", what, id, tok, err)
	}
	if !want && err == nil {
		m.t.Errorf("%s %s accepted token %s; live token is %q", what, id, tok, m.live[id])
	}
	if !want && err != nil && valid && m.s.Job(id) != nil {
		if _, _, _, _, perr := ParseLeaseToken(tok); perr == nil && !errors.Is(err, fault.ErrConflict) {
			m.t.Errorf("%s %s with stale token %s: %v, want a conflict", what, id, tok, err)
		}
	}
}

func (m *model) end(id string) {
	delete(m.live, id)
	delete(m.expiry, id)
}

func (m *model) checkReceipt(id, status string, attempts int, o Outcome) {
	j := m.s.Job(id)
	want, wantAttempts := "", attempts
	switch status {
	case ReceiptOK:
		want = JobDone
	case ReceiptFailed:
		want = JobFailed
	case ReceiptTimeout:
		wantAttempts++
		want = JobPending
		if wantAttempts >= MaxAttempts(m.h) {
			want = JobFailed
		}
	}
	if j.State != want || j.Attempts != wantAttempts || o.To != want {
		m.t.Errorf("receipt %s on %s: %s attempts %d, want %s %d", status, id, j.State, j.Attempts, want, wantAttempts)
	}
}

func (m *model) reap() {
	var out []Outcome
	_ = m.mutate("reap", func() error { out = Reap(m.h, m.s, m.now); return nil })
	reaped := map[string]bool{}
	for _, o := range out {
		reaped[o.ID] = true
		if m.live[o.ID] != o.Lease {
			m.t.Errorf("reaped %s lease %s; live lease %q", o.ID, o.Lease, m.live[o.ID])
		}
		if m.now.Before(m.expiry[o.ID]) {
			m.t.Errorf("reaped %s before its lease expired", o.ID)
		}
		m.end(o.ID)
	}
	for id, exp := range m.expiry {
		if !m.now.Before(exp) && !reaped[id] {
			m.t.Errorf("reap left %s, expired at %s", id, exp)
		}
	}
}

// check is every invariant of a state.
func (m *model) check() {
	max := MaxAttempts(m.h)
	for _, j := range m.s.Jobs {
		running := j.State == JobRunning
		if running != (m.live[j.ID] != "") || (running && j.Lease != m.live[j.ID]) {
			m.t.Errorf("job %s is %s with lease %q; live token %q", j.ID, j.State, j.Lease, m.live[j.ID])
		}
		if !running && (j.Lease != "" || j.Holder != "" || j.ExpiresAt != "") {
			m.t.Errorf("job %s is %s and keeps a lease", j.ID, j.State)
		}
		if j.Attempts > max || (j.State == JobPending && j.Attempts >= max) {
			m.t.Errorf("job %s is %s with %d attempts (max %d)", j.ID, j.State, j.Attempts, max)
		}
		for _, n := range j.Needs {
			d := m.s.Job(n)
			if j.State == JobPending && d.State == JobFailed {
				m.t.Errorf("job %s is PENDING though its need %s FAILED", j.ID, n)
			}
			if (j.State == JobRunning || j.State == JobDone) && d.State != JobDone {
				m.t.Errorf("job %s is %s though its need %s is %s", j.ID, j.State, n, d.State)
			}
		}
	}
	if m.s.GasSpent != m.grants {
		m.t.Errorf("gas spent %d, claims granted %d", m.s.GasSpent, m.grants)
	}
	if m.s.GasSpent > GasLimit(m.h, m.s) || GasRemaining(m.h, m.s) < 0 {
		m.t.Errorf("gas spent %d of %d", m.s.GasSpent, GasLimit(m.h, m.s))
	}
	// Gas is fixed at the first claim: no later add, receipt, reap or resume raises it.
	if m.grants > 0 {
		if m.gasCap == 0 {
			m.gasCap = GasLimit(m.h, m.s)
		}
		if got := GasLimit(m.h, m.s); got != m.gasCap {
			m.t.Errorf("gas limit %d after the first claim fixed it at %d", got, m.gasCap)
		}
	}
}

// drain works on with random receipts and expired leases until the run halts, which
// must happen within a bound set by gas and attempts.
func (m *model) drain() {
	for i := 0; i < 20*(GasLimit(m.h, m.s)+len(m.s.Jobs)+1); i++ {
		f := JobFrontier(m.h, m.s)
		if len(f.Ready) == 0 && len(f.Running) == 0 {
			if !Halted(m.h, m.s) || (f.Reason != ReasonHalted && f.Reason != ReasonGasExhausted && f.Reason != ReasonFinished) {
				m.t.Errorf("stopped with reason %q", f.Reason)
			}
			ended := len(m.s.Jobs) > 0
			for _, j := range m.s.Jobs {
				ended = ended && (j.State == JobDone || j.State == JobFailed)
			}
			if (f.Reason == ReasonFinished) != ended {
				m.t.Errorf("reason %q, but every job ended: %v", f.Reason, ended)
			}
			if f.Reason == ReasonHalted {
				for _, j := range m.s.Jobs {
					if j.State != JobDone && j.State != JobFailed && GasRemaining(m.h, m.s) > 0 {
						m.t.Errorf("halted with gas left and job %s %s", j.ID, j.State)
					}
				}
			}
			return
		}
		switch {
		case len(f.Ready) > 0 && m.rng.IntN(2) == 0:
			m.claim("")
		case len(f.Running) > 0 && m.rng.IntN(3) == 0:
			m.now = m.now.Add(10 * time.Minute)
			m.reap()
		case len(f.Running) > 0:
			id := f.Running[m.rng.IntN(len(f.Running))]
			status := []string{ReceiptOK, ReceiptTimeout, ReceiptFailed}[m.rng.IntN(3)]
			attempts := m.s.Job(id).Attempts
			o, err := Done(m.h, m.s, id, m.live[id], status, nil)
			m.trace = append(m.trace, fmt.Sprintf("drain: done %s %s -> %v", id, status, err))
			if err != nil {
				m.t.Errorf("drain receipt: %v", err)
				return
			}
			m.end(id)
			m.checkReceipt(id, status, attempts, o)
		}
		m.check()
		if m.t.Failed() {
			return
		}
	}
	m.t.Errorf("did not halt: %s", js(JobFrontier(m.h, m.s)))
}
