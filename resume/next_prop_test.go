package resume

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// world is a run held in memory and driven the way the ledger drives it: every
// operation runs the gitstate function its command runs, on a copy that replaces the
// run only when the operation succeeds (a ledger write is all or nothing).
type world struct {
	t     *testing.T
	rng   *rand.Rand
	r     *ledger.Run
	now   time.Time
	trace []string
	// tokens are every stage token ever issued; alive the pids the fake host runs.
	tokens []string
	alive  map[int]bool
	host   Host
	nonces int
}

// TestNextActionIsAccepted drives runs (single and graph, with gates, budgets and
// rework targets) through random sequences of dispatches and other transitions,
// verify outcomes as resume applies them, claims, receipts, reaps, unions, driver
// leases, stops and resumes; after each step, whatever Next suggests must be accepted
// by the ledger when executed (docs/contract.md §6.7), and wait, stop and done must be true.
func TestNextActionIsAccepted(t *testing.T) {
	t.Parallel()
	seeds := 3000
	if testenv.Long() {
		seeds = 30000
	}
	for seed := 0; seed < seeds; seed++ {
		w := newWorld(t, uint64(seed))
		for step, ended := 0, 0; step < 80 && ended < 3 && !t.Failed(); step++ {
			w.step()
			w.checkNext()
			if ledger.RunTerminal(w.r.State.Status) {
				ended++ // a finished run changes no more: a few steps prove it
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d; trace:\n%s", seed, strings.Join(w.trace, "\n"))
		}
	}
}

func newWorld(t *testing.T, seed uint64) *world {
	rng := rand.New(rand.NewPCG(seed, 10))
	w := &world{t: t, rng: rng, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), alive: map[int]bool{}}
	w.host = Host{Name: func() string { return "here" }, PIDAlive: func(pid int) bool { return w.alive[pid] }}
	var defs []ledger.StageDef
	for i := 0; i < rng.IntN(4); i++ {
		d := ledger.StageDef{Name: fmt.Sprintf("s%d", i), MaxRetries: rng.IntN(3)}
		if rng.IntN(2) == 0 {
			d.Gate = ledger.Gates[1+rng.IntN(3)]
		}
		if i > 0 && rng.IntN(3) == 0 {
			d.ReworkTo = fmt.Sprintf("s%d", rng.IntN(i+1))
		}
		if rng.IntN(3) == 0 {
			d.IdleBudget = fmt.Sprintf("%dm", 1+rng.IntN(3))
		}
		if rng.IntN(3) == 0 {
			d.WallBudget = fmt.Sprintf("%dm", 2+rng.IntN(4))
		}
		defs = append(defs, d)
	}
	kind := ledger.KindSingle
	if len(defs) == 0 || rng.IntN(2) == 0 {
		kind = ledger.KindGraph
	}
	r := &ledger.Run{Header: ledger.Header{RunID: "r", Kind: kind, Stages: defs}, State: ledger.State{RunID: "r", Status: ledger.RunRunning}}
	if kind == ledger.KindGraph {
		r.Header.MaxAttempts = 2
		if rng.IntN(2) == 0 {
			r.Header.Gas = 1 + rng.IntN(6)
		}
	}
	for _, d := range defs {
		r.State.Stages = append(r.State.Stages, ledger.StageState{Name: d.Name, Status: ledger.StagePending})
	}
	if kind == ledger.KindGraph {
		var specs []ledger.JobSpec
		for i := 0; i < rng.IntN(5); i++ {
			sp := ledger.JobSpec{ID: fmt.Sprintf("j%d", i)}
			if i > 0 && rng.IntN(2) == 0 {
				sp.Needs = []string{fmt.Sprintf("j%d", rng.IntN(i))}
			}
			specs = append(specs, sp)
		}
		if err := ledger.AddJobs(&r.State, specs); err != nil {
			t.Fatal(err)
		}
	}
	w.r = r
	return w
}

func cloneRun(r *ledger.Run) *ledger.Run {
	c := *r
	c.State.Stages = nil
	for _, s := range r.State.Stages {
		s.Attempts = slices.Clone(s.Attempts)
		c.State.Stages = append(c.State.Stages, s)
	}
	c.State.Jobs = slices.Clone(r.State.Jobs)
	if r.State.Union != nil {
		u := *r.State.Union
		u.Integrated = slices.Clone(u.Integrated)
		c.State.Union = &u
	}
	if r.State.Driver != nil {
		d := *r.State.Driver
		c.State.Driver = &d
	}
	return &c
}

// try runs op on a copy and keeps the copy only if op succeeded.
func (w *world) try(name string, op func(r *ledger.Run) error) error {
	c := cloneRun(w.r)
	err := op(c)
	if err == nil {
		w.r = c
	}
	w.trace = append(w.trace, fmt.Sprintf("%s: err=%v -> %s", name, err, w.describe()))
	return err
}

func (w *world) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s epoch %d;", w.r.State.Status, w.r.State.Epoch)
	for _, s := range w.r.State.Stages {
		def, _, _ := w.r.Stage(s.Name)
		fmt.Fprintf(&b, " %s=%s/%d(max %d,gate %q)", s.Name, s.Status, len(s.Attempts), def.MaxRetries, def.Gate)
	}
	for _, j := range w.r.State.Jobs {
		fmt.Fprintf(&b, " %s=%s/%d", j.ID, j.State, j.Attempts)
	}
	fmt.Fprintf(&b, " gas %d/%d", w.r.State.GasSpent, ledger.GasLimit(&w.r.Header, &w.r.State))
	return b.String()
}

// dispatched records what `transition … dispatched --thread-id --pid` adds to the new
// attempt: sometimes a thread, sometimes a pid of this host, alive or not.
func (w *world) dispatched(r *ledger.Run, stage string) {
	_, st, _ := r.Stage(stage)
	a := &st.Attempts[len(st.Attempts)-1]
	w.tokens = append(w.tokens, a.Lease)
	if w.rng.IntN(2) == 0 {
		a.ThreadID = fmt.Sprintf("thread-%d", len(w.tokens))
	}
	if w.rng.IntN(2) == 0 {
		a.PID, a.Host = 1000+len(w.tokens), w.host.hostname()
		w.alive[a.PID] = w.rng.IntN(2) == 0
	}
}

// heartbeat beats the current stage's open attempt with its token or another.
func (w *world) heartbeat() {
	cur := w.r.CurrentStage()
	if cur == nil || len(w.tokens) == 0 {
		return
	}
	tok := w.tokens[w.rng.IntN(len(w.tokens))]
	before := cloneRun(w.r)
	err := w.try("heartbeat "+cur.Name+" "+tok, func(r *ledger.Run) error {
		return ledger.Heartbeat(r, cur.Name, tok, "", w.now)
	})
	if err == nil && tok != lastToken(before, cur.Name) {
		w.t.Errorf("heartbeat with stale token %s accepted", tok)
	}
}

// staleReport reports passed on a stage with a token that is not its current one: it
// must be refused as a conflict and change nothing.
func (w *world) staleReport() {
	if len(w.tokens) == 0 {
		return
	}
	tok := w.tokens[w.rng.IntN(len(w.tokens))]
	stage, _, _, _, _ := ledger.ParseLeaseToken(tok)
	if tok == lastToken(w.r, stage) {
		return
	}
	before := cloneRun(w.r)
	err := w.try("stale report "+tok, func(r *ledger.Run) error {
		if err := ledger.CheckStageToken(r, stage, tok); err != nil {
			return err
		}
		return ledger.ApplyStageTransition(r, stage, ledger.StagePassed, "", testenv.HexOID(""), w.stamp(), w.nonce())
	})
	if !errors.Is(err, fault.ErrConflict) || !reflect.DeepEqual(before, w.r) {
		w.t.Errorf("stale token %s: err %v, run changed %v", tok, err, !reflect.DeepEqual(before, w.r))
	}
}

func stageStatus(r *ledger.Run, stage string) string {
	_, st, ok := r.Stage(stage)
	if !ok {
		return ""
	}
	return st.Status
}

func lastAttempt(r *ledger.Run, stage string) *ledger.Attempt {
	_, st, ok := r.Stage(stage)
	if !ok || len(st.Attempts) == 0 {
		return nil
	}
	return &st.Attempts[len(st.Attempts)-1]
}

func lastToken(r *ledger.Run, stage string) string {
	_, st, ok := r.Stage(stage)
	if !ok || len(st.Attempts) == 0 {
		return ""
	}
	return st.Attempts[len(st.Attempts)-1].Lease
}

func (w *world) stamp() string { return ledger.Stamp(w.now) }

// nonce is the next token nonce: distinct, and the same for the same seed.
func (w *world) nonce() string {
	w.nonces++
	return fmt.Sprintf("%08x", w.nonces)
}

func (w *world) pickStage() string {
	if len(w.r.State.Stages) == 0 {
		return "none"
	}
	return w.r.State.Stages[w.rng.IntN(len(w.r.State.Stages))].Name
}

func (w *world) step() {
	rng := w.rng
	switch k := rng.IntN(100); {
	case k < 25: // do what Next says (drives runs toward their end)
		w.execute(Next(w.r, w.now, w.host), false)
	case k < 45: // any stage transition, as `git atlas transition`
		stage, to := w.pickStage(), ledger.StageStatuses[rng.IntN(len(ledger.StageStatuses))]
		_ = w.try("transition "+stage+" "+to, func(r *ledger.Run) error {
			if err := ledger.ApplyStageTransition(r, stage, to, "", testenv.HexOID("base"), w.stamp(), w.nonce()); err != nil {
				return err
			}
			if to == ledger.StageDispatched {
				w.dispatched(r, stage)
			}
			return nil
		})
	case k < 55: // resume's verify-first on the interrupted stage, as verifyFirst applies it
		w.verifyOutcome()
	case k < 65: // a claim, as `git atlas job claim`
		_ = w.try("claim", func(r *ledger.Run) error {
			if r.Header.Kind != ledger.KindGraph || ledger.RunTerminal(r.State.Status) || r.State.Status == ledger.RunStopped {
				return fmt.Errorf("not claimable")
			}
			_, err := ledger.Claim(&r.Header, &r.State, "", "w", w.now, time.Minute, w.nonce())
			return err
		})
	case k < 75: // a receipt, as `git atlas job done`
		running := ledger.Running(&w.r.State)
		if len(running) == 0 {
			return
		}
		id := running[rng.IntN(len(running))]
		status := []string{ledger.ReceiptOK, ledger.ReceiptOK, ledger.ReceiptTimeout, ledger.ReceiptFailed}[rng.IntN(4)]
		_ = w.try("done "+id+" "+status, func(r *ledger.Run) error {
			if ledger.RunTerminal(r.State.Status) {
				return fmt.Errorf("finished")
			}
			_, err := ledger.Done(&r.Header, &r.State, id, r.State.Job(id).Lease, status, nil)
			if err == nil && status == ledger.ReceiptOK && rng.IntN(4) > 0 && r.State.Worktree(id) == nil {
				// Most jobs worked in a worktree (a branch union can integrate); some never had one.
				r.State.Worktrees = append(r.State.Worktrees, ledger.WorktreeRec{Node: id})
			}
			return err
		})
	case k < 79: // the clock, then a reap
		w.now = w.now.Add(time.Duration(rng.IntN(3)) * time.Minute)
		_ = w.try("reap", func(r *ledger.Run) error {
			ledger.Reap(&r.Header, &r.State, w.now)
			return nil
		})
	case k < 83: // a union of some of the DONE jobs, some in conflict
		_ = w.try("union", func(r *ledger.Run) error {
			u := &ledger.UnionRec{Integrated: []string{}}
			for _, j := range r.State.Jobs {
				switch {
				case j.State != ledger.JobDone || rng.IntN(4) == 0:
				case r.State.Worktree(j.ID) == nil: // no branch: union reports it missing
					u.Missing = append(u.Missing, j.ID)
				case rng.IntN(6) == 0:
					if u.Conflicted == nil {
						u.Conflicted = map[string][]string{}
					}
					u.Conflicted[j.ID] = []string{"f"}
				default:
					u.Integrated = append(u.Integrated, j.ID)
				}
			}
			r.State.Union = u
			return nil
		})
	case k < 87: // a driver write: a claim, a renewal, a take-over, or a refusal
		wr := ledger.Writer{Holder: []string{"", "d1", "d2"}[rng.IntN(3)], Session: []string{"", "s1", "s2"}[rng.IntN(3)],
			TakeOver: rng.IntN(4) == 0, TTL: time.Duration(1+rng.IntN(3)) * time.Minute}
		if rng.IntN(3) == 0 && len(w.tokens) > 0 { // a subagent's report with a stage token
			wr.Token = w.tokens[rng.IntN(len(w.tokens))]
			wr.Stage, _, _, _, _ = ledger.ParseLeaseToken(wr.Token)
			wr.To = []string{"", ledger.StagePassed, ledger.StageCompleted, ledger.StageDispatched}[rng.IntN(4)]
		}
		before := cloneRun(w.r)
		err := w.try(fmt.Sprintf("driver write %+v", wr), func(r *ledger.Run) error {
			_, err := ledger.ClaimDriver(r, wr, w.now)
			return err
		})
		if err != nil && !reflect.DeepEqual(before, w.r) {
			w.t.Errorf("a refused driver write changed the run")
		}
		d := before.State.Driver
		own := d != nil && ((wr.Holder != "" && d.Holder == wr.Holder) || (wr.Session != "" && d.Session == wr.Session))
		// A finished run has no driver to fence: ClaimDriver accepts any write and
		// changes nothing (its lease may still run: a run failed by its stage keeps
		// it until it ends).
		delegated := err == nil && before.Live(w.now) && !ledger.RunTerminal(before.State.Status) && !own && !wr.TakeOver
		switch {
		case err == nil && ledger.RunTerminal(before.State.Status) && !reflect.DeepEqual(before.State.Driver, w.r.State.Driver):
			w.t.Errorf("a write by %+v changed a finished run's driver lease", wr)
		case delegated && (wr.Token == "" || wr.Token != lastToken(before, wr.Stage)):
			w.t.Errorf("a write by %+v on %+v's live run was accepted without the stage's current token", wr, d)
		case delegated && (wr.To == ledger.StageCompleted || wr.To == ledger.StageDispatched || lastAttempt(before, wr.Stage) == nil || !inFlight(stageStatus(before, wr.Stage))):
			w.t.Errorf("a subagent's report %+v was accepted beyond its open attempt", wr)
		case delegated && !reflect.DeepEqual(before.State.Driver, w.r.State.Driver):
			w.t.Errorf("a delegated report changed the driver lease")
		case err == nil && !delegated && wr.Holder != "" && !ledger.RunTerminal(w.r.State.Status) && w.r.State.Driver.Holder != wr.Holder:
			w.t.Errorf("an accepted write by %s left %s driving", wr.Holder, w.r.State.Driver.Holder)
		}
	case k < 89: // the clock moves: leases, idle and wall budgets run out
		w.now = w.now.Add(time.Duration(rng.IntN(90)) * time.Second)
	case k < 91: // a heartbeat of the open attempt, with its token or a stale one
		w.heartbeat()
	case k < 93: // a late report from an older attempt: refused, nothing changes
		w.staleReport()
	case k < 95: // a resume's reset (docs/contract.md §6.5), as reset writes it
		_ = w.try("resume", func(r *ledger.Run) error {
			if ledger.RunTerminal(r.State.Status) {
				return fmt.Errorf("finished")
			}
			ledger.ResumeReset(&r.State)
			r.State.Epoch++
			r.State.Driver = nil
			if r.State.Status == ledger.RunStopped {
				r.State.Status, r.State.Reason = ledger.RunRunning, ""
			}
			return nil
		})
	case k < 98:
		_ = w.try("finish stopped", func(r *ledger.Run) error { return ledger.Finish(r, ledger.RunStopped, "pause") })
	default:
		status := []string{ledger.RunCompleted, ledger.RunFailed}[rng.IntN(2)]
		_ = w.try("finish "+status, func(r *ledger.Run) error { return ledger.Finish(r, status, "") })
	}
}

// verifyOutcome applies one outcome of resume's verify-first to the current stage
// when its attempt is open, exactly as verifyFirst's record calls do: pass → passed
// then gated or completed; fail → failed, then per --on-verify-fail a new attempt
// (redispatch), nothing more (replay), or the run stopped or failed.
func (w *world) verifyOutcome() {
	cur := w.r.CurrentStage()
	if cur == nil || (cur.Status != ledger.StageDispatched && cur.Status != ledger.StageVerifying) || ledger.RunTerminal(w.r.State.Status) || w.r.State.Status == ledger.RunStopped {
		return // resume verifies only after its reset, which ends a stop
	}
	stage := cur.Name
	choice := []string{"pass", OnFailRedispatch, OnFailReplay, OnFailStop, OnFailFail}[w.rng.IntN(5)]
	at := w.stamp()
	err := w.try("verify "+stage+" "+choice, func(r *ledger.Run) error {
		def, _, _ := r.Stage(stage)
		if choice == "pass" {
			if err := ledger.ApplyStageTransition(r, stage, ledger.StagePassed, "", testenv.HexOID(""), at, w.nonce()); err != nil {
				return err
			}
			next := ledger.StageCompleted
			if def.Gate != "" {
				next = ledger.StageGated
			}
			return ledger.ApplyStageTransition(r, stage, next, "", testenv.HexOID(""), at, w.nonce())
		}
		if err := ledger.ApplyStageTransition(r, stage, ledger.StageFailed, "", testenv.HexOID(""), at, w.nonce()); err != nil {
			return err
		}
		switch choice {
		case OnFailRedispatch:
			return ledger.ApplyStageTransition(r, stage, ledger.StageDispatched, "", testenv.HexOID("base"), at, w.nonce())
		case OnFailStop:
			r.State.Status = ledger.RunStopped
		case OnFailFail:
			r.State.Status = ledger.RunFailed
		}
		return nil
	})
	if err == nil && choice == OnFailRedispatch && !w.r.Live(w.now) {
		// The redispatch already opened the new attempt: the next step is to run it.
		_, st, _ := w.r.Stage(stage)
		if n := Next(w.r, w.now, w.host); n.Action != NextContinue || n.Stage != stage || n.Attempt != len(st.Attempts) {
			w.t.Errorf("after a redispatch of %s (attempt %d), next action = %+v, want continue with that attempt", stage, len(st.Attempts), n)
		}
	}
}

// checkNext asks NextFor, as one of the holders or as someone unnamed, and executes
// its suggestion on a copy: its command (the template, for the unnamed, with a name
// put in) must name the asker and pass the driver rule, and the ledger must accept it.
func (w *world) checkNext() {
	asker := Asker{Holder: []string{"", "d1", "d2"}[w.rng.IntN(3)]}
	n := NextFor(w.r, w.now, w.host, asker)
	saved := w.r
	w.r = cloneRun(saved)
	w.checkCommand(n, asker)
	w.execute(n, true)
	w.r = saved
}

// checkCommand checks that n's command is the asker's and that the driver rule lets
// its holder write: a command for a named asker, a template for an unnamed one.
func (w *world) checkCommand(n NextAction, asker Asker) {
	line := n.Command
	if line == "" && n.Template == "" {
		return
	}
	if asker.Holder == "" && n.Command != "" && !strings.Contains(n.Command, " --lease ") {
		w.t.Errorf("next action %+v on %s: a command for an asker with no name", n, w.describe())
	}
	if line == "" {
		line = strings.ReplaceAll(n.Template, "<holder>", "d3")
		if asker.Holder != "" && !strings.Contains(n.Template, "<person>") && !strings.Contains(n.Template, "<job>") {
			w.t.Errorf("next action %+v on %s: a template for the named asker %q", n, w.describe(), asker.Holder)
		}
	}
	args := strings.Fields(line)
	holder, token := "", ""
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--holder":
			holder = args[i+1]
		case "--lease":
			token = args[i+1]
		}
	}
	if asker.Holder != "" && holder != asker.Holder {
		w.t.Errorf("next action %+v on %s: the command names holder %q, not the asker %q", n, w.describe(), holder, asker.Holder)
	}
	if len(args) < 3 || args[2] == "job" || args[2] == "resume" {
		return // a worker's claim holds a job lease; resume judges the driver itself
	}
	wr := ledger.Writer{Holder: holder, Token: token, Stage: n.Stage}
	if args[2] == "transition" && len(args) > 5 {
		wr.To = args[5]
	}
	if _, err := ledger.ClaimDriver(cloneRun(w.r), wr, w.now); err != nil {
		w.t.Errorf("next action %+v on %s: its command %q is refused by the driver rule: %v", n, w.describe(), line, err)
	}
}

// command is n's command with its --holder left out (checkCommand judged it).
func command(n NextAction) []string {
	line := n.Command
	if line == "" {
		line = n.Template
	}
	var out []string
	args := strings.Fields(line)
	for i := 0; i < len(args); i++ {
		if args[i] == "--holder" || args[i] == "--take-over" || args[i] == "--approved-by" {
			if args[i] != "--take-over" {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// execute carries out a next action as its command would; with strict, anything the
// ledger refuses, and any wait, stop or done that is not true, is an error.
func (w *world) execute(n NextAction, strict bool) {
	fail := func(format string, args ...any) {
		if strict {
			w.t.Errorf("next action %+v on %s: %s", n, w.describe(), fmt.Sprintf(format, args...))
		}
	}
	r := w.r
	id := r.Header.RunID
	switch n.Action {
	case NextWait:
		if !r.Driven(w.now) && len(ledger.Running(&r.State)) == 0 && (n.PID == 0 || !w.host.alive(n.PID)) && LiveAttempt(r, w.now, w.host) == nil {
			fail("wait, but no driver is live, no job runs and no agent lives")
		}
	case NextTakeOver:
		if !r.Live(w.now) || r.Driven(w.now) {
			fail("take_over, but the run's driver lease is not live with a dead attempt")
		}
	case NextDone:
		if !ledger.RunTerminal(r.State.Status) {
			fail("done, but the run is %s", r.State.Status)
		}
	case NextStop:
		if args := command(n); n.Stage != "" && len(args) > 0 {
			// An attempt out of budget: the command that ends it must be accepted.
			if err := w.try("next: stop "+n.Command, func(r *ledger.Run) error {
				return ledger.ApplyStageTransition(r, args[4], args[5], "", testenv.HexOID(""), w.stamp(), w.nonce())
			}); err != nil {
				fail("refused: %v", err)
			}
			break
		}
		if v := ledger.RunVerdict(&r.Header, &r.State); n.Verdict == ledger.VerdictUnresolved && (v == nil || v.Verdict != n.Verdict) {
			fail("stop for an unresolved verdict, but the verdict is %+v", v)
		} else if n.Verdict == "" && r.State.Status != ledger.RunStopped && (r.State.Union == nil || len(r.State.Union.Conflicted) == 0) {
			fail("stop, but the run is %s and its union has no conflict", r.State.Status)
		}
	case NextClaim:
		var got string
		err := w.try("next: claim", func(r *ledger.Run) error {
			g, err := ledger.Claim(&r.Header, &r.State, "", "w", w.now, time.Minute, w.nonce())
			if err == nil && g.Job == nil {
				return fmt.Errorf("nothing granted: %s", g.Reason)
			}
			if g.Job != nil {
				got = g.Job.ID
			}
			return err
		})
		if err != nil || !slices.Contains(n.Jobs, got) {
			fail("claim: granted %q, err %v", got, err)
		}
	case NextIntegrate:
		missing := notInUnion(r)
		if len(missing) == 0 || !slices.Equal(missing, n.Jobs) {
			fail("integrate, but the DONE jobs missing from the union are %v", missing)
		}
		for _, j := range n.Jobs {
			if r.State.Worktree(j) == nil {
				fail("integrate job %s, which has no branch: union has nothing of it to integrate", j)
			}
		}
		_ = w.try("next: union", func(r *ledger.Run) error {
			u := &ledger.UnionRec{Integrated: []string{}}
			for _, j := range r.State.Jobs {
				switch {
				case j.State != ledger.JobDone:
				case r.State.Worktree(j.ID) == nil:
					u.Missing = append(u.Missing, j.ID)
				default:
					u.Integrated = append(u.Integrated, j.ID)
				}
			}
			r.State.Union = u
			return nil
		})
	case NextDispatch, NextContinue, NextGate, NextFinish:
		args := command(n)
		lease := ""
		if len(args) == 8 && args[2] == "transition" && args[6] == "--lease" {
			lease, args = args[7], args[:6]
			if a := lastAttempt(r, n.Stage); n.Action == NextContinue && a != nil && a.PID != 0 && w.host.alive(a.PID) {
				fail("continue while the attempt's agent (pid %d) lives: a second agent on one attempt", a.PID)
			}
		}
		switch {
		case len(args) == 6 && args[2] == "transition" && args[3] == id:
			stage, to := args[4], args[5]
			if stage != n.Stage {
				fail("command names stage %s, the action %s", stage, n.Stage)
			}
			if n.Action == NextDispatch && to != ledger.StageDispatched {
				fail("dispatch with command %q", args)
			}
			if n.Action == NextGate {
				if def, _, _ := r.Stage(stage); def == nil || def.Gate == "" {
					fail("gate for a stage without one")
				}
			}
			if err := w.try("next: transition "+stage+" "+to, func(r *ledger.Run) error {
				if err := ledger.CheckStageToken(r, stage, lease); err != nil {
					return err
				}
				if err := ledger.ApplyStageTransition(r, stage, to, "", testenv.HexOID("base"), w.stamp(), w.nonce()); err != nil {
					return err
				}
				if to == ledger.StageDispatched {
					w.dispatched(r, stage)
				}
				return nil
			}); err != nil {
				fail("refused: %v", err)
			}
		case len(args) == 6 && args[2] == "finish" && args[3] == id && args[4] == "--status" && n.Action == NextFinish:
			if err := w.try("next: finish "+args[5], func(r *ledger.Run) error { return ledger.Finish(r, args[5], "") }); err != nil {
				fail("refused: %v", err)
			}
		case len(args) == 6 && args[2] == "job" && args[3] == "add" && args[4] == id && args[5] == "<job>" && n.Command == "" && n.Action == NextContinue:
			if err := w.try("next: job add", func(r *ledger.Run) error {
				return ledger.AddJobs(&r.State, []ledger.JobSpec{{ID: fmt.Sprintf("n%d", len(r.State.Jobs))}})
			}); err != nil {
				fail("refused: %v", err)
			}
		default:
			fail("a command the test cannot run: %q", args)
		}
	default:
		fail("unknown action")
	}
}

// TestNextAfterRedispatch: the run of issue 10's item 8. After resume's verify failed
// and --on-verify-fail redispatch opened attempt 2, the next action is to continue
// attempt 2, never to dispatch a third; with the budget spent, it is finish, not a
// dispatch the ledger refuses.
func TestNextAfterRedispatch(t *testing.T) {
	t.Parallel()
	r := &ledger.Run{Header: ledger.Header{RunID: "r", Kind: ledger.KindSingle, Stages: []ledger.StageDef{{Name: "code", MaxRetries: 1}}},
		State: ledger.State{RunID: "r", Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "code", Status: ledger.StagePending}}}}
	now := time.Now()
	for _, to := range []string{ledger.StageDispatched, ledger.StageFailed, ledger.StageDispatched} {
		if err := ledger.ApplyStageTransition(r, "code", to, "", testenv.HexOID("b"), "t", ledger.RandomNonce()); err != nil {
			t.Fatal(err)
		}
	}
	n := Next(r, now, Host{})
	if n.Action != NextContinue || n.Stage != "code" || n.Attempt != 2 || n.Command != "git atlas transition r code passed --lease "+lastToken(r, "code") {
		t.Fatalf("after the redispatch: %+v, want continue attempt 2", n)
	}
	if err := ledger.ApplyStageTransition(r, "code", ledger.StageFailed, "", testenv.HexOID("b"), "t", ledger.RandomNonce()); err != nil {
		t.Fatal(err)
	}
	n = NextFor(r, now, Host{}, Asker{Holder: "d"})
	if n.Action != NextFinish || n.Command != "git atlas finish r --status failed --holder d" || !strings.Contains(n.Reason, "used its 2 attempt(s)") {
		t.Fatalf("with the budget spent: %+v, want finish failed", n)
	}
}
