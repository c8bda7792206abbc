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

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
)

// world is a run held in memory and driven the way the ledger drives it: every
// operation runs the gitstate function its command runs, on a copy that replaces the
// run only when the operation succeeds (a ledger write is all or nothing).
type world struct {
	t     *testing.T
	rng   *rand.Rand
	r     *gitstate.Run
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
			if gitstate.RunTerminal(w.r.State.Status) {
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
	var defs []gitstate.StageDef
	for i := 0; i < rng.IntN(4); i++ {
		d := gitstate.StageDef{Name: fmt.Sprintf("s%d", i), MaxRetries: rng.IntN(3)}
		if rng.IntN(2) == 0 {
			d.Gate = gitstate.Gates[1+rng.IntN(3)]
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
	kind := gitstate.KindSingle
	if len(defs) == 0 || rng.IntN(2) == 0 {
		kind = gitstate.KindGraph
	}
	r := &gitstate.Run{Header: gitstate.Header{RunID: "r", Kind: kind, Stages: defs}, State: gitstate.State{RunID: "r", Status: gitstate.RunRunning}}
	if kind == gitstate.KindGraph {
		r.Header.MaxAttempts = 2
		if rng.IntN(2) == 0 {
			r.Header.Gas = 1 + rng.IntN(6)
		}
	}
	for _, d := range defs {
		r.State.Stages = append(r.State.Stages, gitstate.StageState{Name: d.Name, Status: gitstate.StagePending})
	}
	if kind == gitstate.KindGraph {
		var specs []gitstate.JobSpec
		for i := 0; i < rng.IntN(5); i++ {
			sp := gitstate.JobSpec{ID: fmt.Sprintf("j%d", i)}
			if i > 0 && rng.IntN(2) == 0 {
				sp.Needs = []string{fmt.Sprintf("j%d", rng.IntN(i))}
			}
			specs = append(specs, sp)
		}
		if err := gitstate.AddJobs(&r.State, specs); err != nil {
			t.Fatal(err)
		}
	}
	w.r = r
	return w
}

func cloneRun(r *gitstate.Run) *gitstate.Run {
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
func (w *world) try(name string, op func(r *gitstate.Run) error) error {
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
	fmt.Fprintf(&b, " gas %d/%d", w.r.State.GasSpent, gitstate.GasLimit(&w.r.Header, &w.r.State))
	return b.String()
}

// dispatched records what `transition … dispatched --thread-id --pid` adds to the new
// attempt: sometimes a thread, sometimes a pid of this host, alive or not.
func (w *world) dispatched(r *gitstate.Run, stage string) {
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
	err := w.try("heartbeat "+cur.Name+" "+tok, func(r *gitstate.Run) error {
		return gitstate.Heartbeat(r, cur.Name, tok, w.now)
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
	stage, _, _, _, _ := gitstate.ParseLeaseToken(tok)
	if tok == lastToken(w.r, stage) {
		return
	}
	before := cloneRun(w.r)
	err := w.try("stale report "+tok, func(r *gitstate.Run) error {
		if err := gitstate.CheckStageToken(r, stage, tok); err != nil {
			return err
		}
		return gitstate.ApplyStageTransition(r, stage, gitstate.StagePassed, "", testenv.HexOID(""), w.stamp(), w.nonce())
	})
	if !errors.Is(err, fault.ErrConflict) || !reflect.DeepEqual(before, w.r) {
		w.t.Errorf("stale token %s: err %v, run changed %v", tok, err, !reflect.DeepEqual(before, w.r))
	}
}

func stageStatus(r *gitstate.Run, stage string) string {
	_, st, ok := r.Stage(stage)
	if !ok {
		return ""
	}
	return st.Status
}

func lastAttempt(r *gitstate.Run, stage string) *gitstate.Attempt {
	_, st, ok := r.Stage(stage)
	if !ok || len(st.Attempts) == 0 {
		return nil
	}
	return &st.Attempts[len(st.Attempts)-1]
}

func lastToken(r *gitstate.Run, stage string) string {
	_, st, ok := r.Stage(stage)
	if !ok || len(st.Attempts) == 0 {
		return ""
	}
	return st.Attempts[len(st.Attempts)-1].Lease
}

func (w *world) stamp() string { return gitstate.Stamp(w.now) }

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
		stage, to := w.pickStage(), gitstate.StageStatuses[rng.IntN(len(gitstate.StageStatuses))]
		_ = w.try("transition "+stage+" "+to, func(r *gitstate.Run) error {
			if err := gitstate.ApplyStageTransition(r, stage, to, "", testenv.HexOID("base"), w.stamp(), w.nonce()); err != nil {
				return err
			}
			if to == gitstate.StageDispatched {
				w.dispatched(r, stage)
			}
			return nil
		})
	case k < 55: // resume's verify-first on the interrupted stage, as verifyFirst applies it
		w.verifyOutcome()
	case k < 65: // a claim, as `git atlas job claim`
		_ = w.try("claim", func(r *gitstate.Run) error {
			if r.Header.Kind != gitstate.KindGraph || gitstate.RunTerminal(r.State.Status) || r.State.Status == gitstate.RunStopped {
				return fmt.Errorf("not claimable")
			}
			_, err := gitstate.Claim(&r.Header, &r.State, "", "w", w.now, time.Minute, w.nonce())
			return err
		})
	case k < 75: // a receipt, as `git atlas job done`
		running := gitstate.Running(&w.r.State)
		if len(running) == 0 {
			return
		}
		id := running[rng.IntN(len(running))]
		status := []string{gitstate.ReceiptOK, gitstate.ReceiptOK, gitstate.ReceiptTimeout, gitstate.ReceiptFailed}[rng.IntN(4)]
		_ = w.try("done "+id+" "+status, func(r *gitstate.Run) error {
			if gitstate.RunTerminal(r.State.Status) {
				return fmt.Errorf("finished")
			}
			_, err := gitstate.Done(&r.Header, &r.State, id, r.State.Job(id).Lease, status, nil)
			if err == nil && status == gitstate.ReceiptOK && rng.IntN(4) > 0 && r.State.Worktree(id) == nil {
				// Most jobs worked in a worktree (a branch union can integrate); some never had one.
				r.State.Worktrees = append(r.State.Worktrees, gitstate.WorktreeRec{Node: id})
			}
			return err
		})
	case k < 79: // the clock, then a reap
		w.now = w.now.Add(time.Duration(rng.IntN(3)) * time.Minute)
		_ = w.try("reap", func(r *gitstate.Run) error {
			gitstate.Reap(&r.Header, &r.State, w.now)
			return nil
		})
	case k < 83: // a union of some of the DONE jobs, some in conflict
		_ = w.try("union", func(r *gitstate.Run) error {
			u := &gitstate.UnionRec{Integrated: []string{}}
			for _, j := range r.State.Jobs {
				switch {
				case j.State != gitstate.JobDone || rng.IntN(4) == 0:
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
		wr := gitstate.Writer{Holder: []string{"", "d1", "d2"}[rng.IntN(3)], Session: []string{"", "s1", "s2"}[rng.IntN(3)],
			TakeOver: rng.IntN(4) == 0, TTL: time.Duration(1+rng.IntN(3)) * time.Minute}
		if rng.IntN(3) == 0 && len(w.tokens) > 0 { // a subagent's report with a stage token
			wr.Token = w.tokens[rng.IntN(len(w.tokens))]
			wr.Stage, _, _, _, _ = gitstate.ParseLeaseToken(wr.Token)
			wr.To = []string{"", gitstate.StagePassed, gitstate.StageCompleted, gitstate.StageDispatched}[rng.IntN(4)]
		}
		before := cloneRun(w.r)
		err := w.try(fmt.Sprintf("driver write %+v", wr), func(r *gitstate.Run) error {
			_, err := gitstate.ClaimDriver(r, wr, w.now)
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
		delegated := err == nil && before.Live(w.now) && !gitstate.RunTerminal(before.State.Status) && !own && !wr.TakeOver
		switch {
		case err == nil && gitstate.RunTerminal(before.State.Status) && !reflect.DeepEqual(before.State.Driver, w.r.State.Driver):
			w.t.Errorf("a write by %+v changed a finished run's driver lease", wr)
		case delegated && (wr.Token == "" || wr.Token != lastToken(before, wr.Stage)):
			w.t.Errorf("a write by %+v on %+v's live run was accepted without the stage's current token", wr, d)
		case delegated && (wr.To == gitstate.StageCompleted || wr.To == gitstate.StageDispatched || lastAttempt(before, wr.Stage) == nil || !inFlight(stageStatus(before, wr.Stage))):
			w.t.Errorf("a subagent's report %+v was accepted beyond its open attempt", wr)
		case delegated && !reflect.DeepEqual(before.State.Driver, w.r.State.Driver):
			w.t.Errorf("a delegated report changed the driver lease")
		case err == nil && !delegated && wr.Holder != "" && !gitstate.RunTerminal(w.r.State.Status) && w.r.State.Driver.Holder != wr.Holder:
			w.t.Errorf("an accepted write by %s left %s driving", wr.Holder, w.r.State.Driver.Holder)
		}
	case k < 89: // the clock moves: leases, idle and wall budgets run out
		w.now = w.now.Add(time.Duration(rng.IntN(90)) * time.Second)
	case k < 91: // a heartbeat of the open attempt, with its token or a stale one
		w.heartbeat()
	case k < 93: // a late report from an older attempt: refused, nothing changes
		w.staleReport()
	case k < 95: // a resume's reset (docs/contract.md §6.5), as reset writes it
		_ = w.try("resume", func(r *gitstate.Run) error {
			if gitstate.RunTerminal(r.State.Status) {
				return fmt.Errorf("finished")
			}
			gitstate.ResumeReset(&r.State)
			r.State.Epoch++
			r.State.Driver = nil
			if r.State.Status == gitstate.RunStopped {
				r.State.Status, r.State.Reason = gitstate.RunRunning, ""
			}
			return nil
		})
	case k < 98:
		_ = w.try("finish stopped", func(r *gitstate.Run) error { return gitstate.Finish(r, gitstate.RunStopped, "pause") })
	default:
		status := []string{gitstate.RunCompleted, gitstate.RunFailed}[rng.IntN(2)]
		_ = w.try("finish "+status, func(r *gitstate.Run) error { return gitstate.Finish(r, status, "") })
	}
}

// verifyOutcome applies one outcome of resume's verify-first to the current stage
// when its attempt is open, exactly as verifyFirst's record calls do: pass → passed
// then gated or completed; fail → failed, then per --on-verify-fail a new attempt
// (redispatch), nothing more (replay), or the run stopped or failed.
func (w *world) verifyOutcome() {
	cur := w.r.CurrentStage()
	if cur == nil || (cur.Status != gitstate.StageDispatched && cur.Status != gitstate.StageVerifying) || gitstate.RunTerminal(w.r.State.Status) || w.r.State.Status == gitstate.RunStopped {
		return // resume verifies only after its reset, which ends a stop
	}
	stage := cur.Name
	choice := []string{"pass", OnFailRedispatch, OnFailReplay, OnFailStop, OnFailFail}[w.rng.IntN(5)]
	at := w.stamp()
	err := w.try("verify "+stage+" "+choice, func(r *gitstate.Run) error {
		def, _, _ := r.Stage(stage)
		if choice == "pass" {
			if err := gitstate.ApplyStageTransition(r, stage, gitstate.StagePassed, "", testenv.HexOID(""), at, w.nonce()); err != nil {
				return err
			}
			next := gitstate.StageCompleted
			if def.Gate != "" {
				next = gitstate.StageGated
			}
			return gitstate.ApplyStageTransition(r, stage, next, "", testenv.HexOID(""), at, w.nonce())
		}
		if err := gitstate.ApplyStageTransition(r, stage, gitstate.StageFailed, "", testenv.HexOID(""), at, w.nonce()); err != nil {
			return err
		}
		switch choice {
		case OnFailRedispatch:
			return gitstate.ApplyStageTransition(r, stage, gitstate.StageDispatched, "", testenv.HexOID("base"), at, w.nonce())
		case OnFailStop:
			r.State.Status = gitstate.RunStopped
		case OnFailFail:
			r.State.Status = gitstate.RunFailed
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
	wr := gitstate.Writer{Holder: holder, Token: token, Stage: n.Stage}
	if args[2] == "transition" && len(args) > 5 {
		wr.To = args[5]
	}
	if _, err := gitstate.ClaimDriver(cloneRun(w.r), wr, w.now); err != nil {
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
		if !r.Driven(w.now) && len(gitstate.Running(&r.State)) == 0 && (n.PID == 0 || !w.host.alive(n.PID)) && LiveAttempt(r, w.now, w.host) == nil {
			fail("wait, but no driver is live, no job runs and no agent lives")
		}
	case NextTakeOver:
		if !r.Live(w.now) || r.Driven(w.now) {
			fail("take_over, but the run's driver lease is not live with a dead attempt")
		}
	case NextDone:
		if !gitstate.RunTerminal(r.State.Status) {
			fail("done, but the run is %s", r.State.Status)
		}
	case NextStop:
		if args := command(n); n.Stage != "" && len(args) > 0 {
			// An attempt out of budget: the command that ends it must be accepted.
			if err := w.try("next: stop "+n.Command, func(r *gitstate.Run) error {
				return gitstate.ApplyStageTransition(r, args[4], args[5], "", testenv.HexOID(""), w.stamp(), w.nonce())
			}); err != nil {
				fail("refused: %v", err)
			}
			break
		}
		if v := gitstate.RunVerdict(&r.Header, &r.State); n.Verdict == gitstate.VerdictUnresolved && (v == nil || v.Verdict != n.Verdict) {
			fail("stop for an unresolved verdict, but the verdict is %+v", v)
		} else if n.Verdict == "" && r.State.Status != gitstate.RunStopped && (r.State.Union == nil || len(r.State.Union.Conflicted) == 0) {
			fail("stop, but the run is %s and its union has no conflict", r.State.Status)
		}
	case NextClaim:
		var got string
		err := w.try("next: claim", func(r *gitstate.Run) error {
			g, err := gitstate.Claim(&r.Header, &r.State, "", "w", w.now, time.Minute, w.nonce())
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
		_ = w.try("next: union", func(r *gitstate.Run) error {
			u := &gitstate.UnionRec{Integrated: []string{}}
			for _, j := range r.State.Jobs {
				switch {
				case j.State != gitstate.JobDone:
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
			if n.Action == NextDispatch && to != gitstate.StageDispatched {
				fail("dispatch with command %q", args)
			}
			if n.Action == NextGate {
				if def, _, _ := r.Stage(stage); def == nil || def.Gate == "" {
					fail("gate for a stage without one")
				}
			}
			if err := w.try("next: transition "+stage+" "+to, func(r *gitstate.Run) error {
				if err := gitstate.CheckStageToken(r, stage, lease); err != nil {
					return err
				}
				if err := gitstate.ApplyStageTransition(r, stage, to, "", testenv.HexOID("base"), w.stamp(), w.nonce()); err != nil {
					return err
				}
				if to == gitstate.StageDispatched {
					w.dispatched(r, stage)
				}
				return nil
			}); err != nil {
				fail("refused: %v", err)
			}
		case len(args) == 6 && args[2] == "finish" && args[3] == id && args[4] == "--status" && n.Action == NextFinish:
			if err := w.try("next: finish "+args[5], func(r *gitstate.Run) error { return gitstate.Finish(r, args[5], "") }); err != nil {
				fail("refused: %v", err)
			}
		case len(args) == 6 && args[2] == "job" && args[3] == "add" && args[4] == id && args[5] == "<job>" && n.Command == "" && n.Action == NextContinue:
			if err := w.try("next: job add", func(r *gitstate.Run) error {
				return gitstate.AddJobs(&r.State, []gitstate.JobSpec{{ID: fmt.Sprintf("n%d", len(r.State.Jobs))}})
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
	r := &gitstate.Run{Header: gitstate.Header{RunID: "r", Kind: gitstate.KindSingle, Stages: []gitstate.StageDef{{Name: "code", MaxRetries: 1}}},
		State: gitstate.State{RunID: "r", Status: gitstate.RunRunning, Stages: []gitstate.StageState{{Name: "code", Status: gitstate.StagePending}}}}
	now := time.Now()
	for _, to := range []string{gitstate.StageDispatched, gitstate.StageFailed, gitstate.StageDispatched} {
		if err := gitstate.ApplyStageTransition(r, "code", to, "", testenv.HexOID("b"), "t", gitstate.RandomNonce()); err != nil {
			t.Fatal(err)
		}
	}
	n := Next(r, now, Host{})
	if n.Action != NextContinue || n.Stage != "code" || n.Attempt != 2 || n.Command != "git atlas transition r code passed --lease "+lastToken(r, "code") {
		t.Fatalf("after the redispatch: %+v, want continue attempt 2", n)
	}
	if err := gitstate.ApplyStageTransition(r, "code", gitstate.StageFailed, "", testenv.HexOID("b"), "t", gitstate.RandomNonce()); err != nil {
		t.Fatal(err)
	}
	n = NextFor(r, now, Host{}, Asker{Holder: "d"})
	if n.Action != NextFinish || n.Command != "git atlas finish r --status failed --holder d" || !strings.Contains(n.Reason, "used its 2 attempt(s)") {
		t.Fatalf("with the budget spent: %+v, want finish failed", n)
	}
}
