package ops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// liveAttemptRun starts run v (stage code, a safe verify that fails, idle budget 1h)
// driven by a in session A with a one-minute lease, and dispatches code as A with
// pid (0: none). The ops' clock is then moved two minutes on: the driver lease has
// run out, the attempt's idle budget has not.
func (f *wtFixture) liveAttemptRun(pid int) {
	f.t.Helper()
	a := Driver{Holder: "a", Session: "A", TTL: time.Minute}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "v", Stages: []ledger.StageDef{{Name: "code", IdleBudget: "1h", MaxRetries: 3}}, Verify: "false", VerifySafe: true, Driver: a}); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, PID: pid, Driver: a}); err != nil {
		f.t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Minute)
	f.ops.Clock = func() time.Time { return later }
}

func (f *wtFixture) tipOf(run string) string {
	f.t.Helper()
	r, err := f.ops.Reader().Load(f.ctx, run)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Tip
}

// Issue 31.2: an attempt of another session that is live (its pid alive here, or a
// heartbeat inside its idle budget) is never acted on by resume without --take-over:
// the answer is wait, with no error, and nothing is written (no reset, no verify, no
// redispatch). Its own session proceeds at once; --take-over too.
func TestResumeWaitsForAnotherSessionsLiveAttempt(t *testing.T) {
	t.Parallel()
	for _, pid := range []int{0, os.Getpid()} {
		f := newWTFixture(t, ledger.KindSingle, "code")
		f.liveAttemptRun(pid)
		before := f.tipOf("v")
		plan, err := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "v", Holder: "b", Session: "B"})
		if err != nil || plan.NextAction.Action != resume.NextWait {
			t.Fatalf("pid %d: plan for B: %+v, %v; want wait", pid, plan, err)
		}
		res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "v", Holder: "b", Session: "B", OnVerifyFail: "redispatch"})
		if err != nil || res.Resumed || res.NextAction.Action != resume.NextWait || res.Verify != nil {
			t.Fatalf("pid %d: resume by B: %+v, %v; want wait, nothing done", pid, res, err)
		}
		if f.tipOf("v") != before {
			t.Fatalf("pid %d: resume by B wrote to the run", pid)
		}
		// The attempt's own session, come back under another holder name: at once.
		res, err = f.ops.Resume(f.ctx, ResumeRequest{RunID: "v", Holder: "a2", Session: "A", OnVerifyFail: "redispatch"})
		if err != nil || !res.Resumed || res.Verify == nil || res.VerifyChoice != "redispatch" {
			t.Fatalf("pid %d: resume by A: %+v, %v; want resumed, verified, redispatched", pid, res, err)
		}
	}
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.liveAttemptRun(os.Getpid())
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "v", Holder: "b", Session: "B", TakeOver: true, OnVerifyFail: "redispatch"})
	if err != nil || !res.Resumed || res.Verify == nil {
		t.Fatalf("resume --take-over by B: %+v, %v; want resumed", res, err)
	}
}

// Issue 31.2: a manual re-dispatch of a stage whose attempt is another session's and
// live is refused (exit 3, nothing written) unless --take-over; the attempt's own
// session re-dispatches.
func TestRedispatchOfAnotherSessionsLiveAttemptRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.liveAttemptRun(0)
	before := f.tipOf("v")
	_, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, Driver: Driver{Holder: "b", Session: "B"}})
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "is live") {
		t.Fatalf("re-dispatch by B: %v, want a conflict naming the live attempt", err)
	}
	if f.tipOf("v") != before {
		t.Fatal("the refused re-dispatch wrote to the run")
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, Driver: Driver{Holder: "b", Session: "B", TakeOver: true}}); err != nil {
		t.Fatalf("re-dispatch by B with --take-over: %v", err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, Driver: Driver{Holder: "b", Session: "B"}}); err != nil {
		t.Fatalf("re-dispatch of B's own attempt: %v", err)
	}
}

// Issue 31.3: `resume RUN --holder X` makes X the driver also when an earlier resume
// already reset the run (it used to say "nothing happened" and leave no driver); with
// another live driver it answers wait, exit 0, nothing written, naming that driver.
func TestResumeHolderDrivesARunAlreadyReset(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	if _, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if d := f.load().State.Driver; d != nil {
		t.Fatalf("an unnamed resume left driver %+v", d)
	}
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "r1", Holder: "x", Session: "X"})
	if err != nil || !res.Resumed {
		t.Fatalf("resume --holder x: %+v, %v", res, err)
	}
	if d := f.load().State.Driver; d == nil || d.Holder != "x" {
		t.Fatalf("after resume --holder x the driver is %+v, want x", d)
	}
	if res.NextAction.Action != resume.NextDispatch || res.NextAction.Command != "transition(run=r1, stage=code, status=dispatched, holder=x)" {
		t.Fatalf("x's next action: %+v", res.NextAction)
	}
	before := f.tip()
	res, err = f.ops.Resume(f.ctx, ResumeRequest{RunID: "r1", Holder: "y", Session: "Y"})
	if err != nil || res.Resumed || res.NextAction.Action != resume.NextWait || !strings.Contains(res.NextAction.Reason, "driver x") {
		t.Fatalf("resume --holder y while x drives: %+v, %v; want wait naming x", res, err)
	}
	if f.tip() != before {
		t.Fatal("resume --holder y wrote to the run x drives")
	}
	// x again: its own run, nothing new to do, and nothing written twice.
	if res, err = f.ops.Resume(f.ctx, ResumeRequest{RunID: "r1", Holder: "x", Session: "X"}); err != nil || !res.Resumed || f.tip() != before {
		t.Fatalf("resume --holder x again: %+v, %v, tip moved %v", res, err, f.tip() != before)
	}
}

// Issue 31.2: worktree remove with no --holder on a run whose driver is live is
// refused before it removes anything (it used to remove, then fail its record).
func TestWorktreeRemoveChecksTheDriverFirst(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	wt := f.add("code", "")
	_, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "code"})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("remove with no holder while d1 drives: %v, want a conflict", err)
	}
	if _, serr := os.Stat(wt.Path); serr != nil {
		t.Fatalf("the refused remove removed the worktree: %v", serr)
	}
	if _, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "code", Driver: Driver{Holder: "d1"}}); err != nil {
		t.Fatalf("remove by the driver: %v", err)
	}
}

// Issue 31.4: a DONE job that never had a worktree has no branch: next_action does not
// answer integrate for it (union has nothing of it), before or after a union.
func TestNextDoesNotLoopOnAJobWithNoBranch(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	lease := f.claim("a", "w1")
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: lease, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w1"}}); err != nil {
		t.Fatal(err)
	}
	plan, err := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "r1", Holder: "d1"})
	if err != nil || plan.NextAction.Action != resume.NextFinish || !strings.Contains(plan.NextAction.Reason, "no branch") {
		t.Fatalf("plan: %+v, %v; want finish, saying a has no branch", plan.NextAction, err)
	}
	u, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: Driver{Holder: "d1"}})
	if err != nil || len(u.Missing) != 1 {
		t.Fatalf("union: %+v, %v; want a missing", u, err)
	}
	if r := f.load(); r.State.Union == nil || len(r.State.Union.Missing) != 1 {
		t.Fatalf("the union record: %+v, want a recorded missing", r.State.Union)
	}
	plan, err = f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "r1", Holder: "d1"})
	if err != nil || plan.NextAction.Action != resume.NextFinish {
		t.Fatalf("plan after the union: %+v, %v; want finish", plan.NextAction, err)
	}
}

// Issue 31.7: passing or rejecting a human gate is a person's step. Headless with no
// --approved-by it is refused (exit 5), and through MCP or an agent hook always; a
// person at a terminal, or --approved-by NAME, passes it, recorded in the event.
func TestHumanGateIsAPersonsStep(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Stages: []ledger.StageDef{{Name: "check", Gate: "human", MaxRetries: 2}}, Driver: d}); err != nil {
		t.Fatal(err)
	}
	to := func(status string, p Person) error {
		_, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "g", Stage: "check", Status: status, Driver: d, Person: p})
		return err
	}
	for _, s := range []string{ledger.StageDispatched, ledger.StagePassed, ledger.StageGated} {
		if err := to(s, Person{}); err != nil { // not a person's step
			t.Fatalf("%s: %v", s, err)
		}
	}
	before := f.tipOf("g")
	for _, p := range []Person{{}, {Via: ViaMCP, ApprovedBy: "alice"}, {Via: ViaMCP, Terminal: true}, {Via: ViaHook, ApprovedBy: "alice"}} {
		for _, s := range []string{ledger.StageCompleted, ledger.StageRejected} {
			if err := to(s, p); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "person") {
				t.Fatalf("%s as %+v: %v, want refused for a person's step", s, p, err)
			}
		}
	}
	if f.tipOf("g") != before {
		t.Fatal("a refused gate step wrote to the run")
	}
	if err := to(ledger.StageRejected, Person{Terminal: true}); err != nil {
		t.Fatalf("rejected by a person at a terminal: %v", err)
	}
	for _, s := range []string{ledger.StageDispatched, ledger.StagePassed, ledger.StageGated} {
		if err := to(s, Person{}); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := to(ledger.StageCompleted, Person{ApprovedBy: "alice"}); err != nil {
		t.Fatalf("completed --approved-by alice: %v", err)
	}
	log, err := f.ops.Reader().Log(f.ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	var approvals []string
	for _, ev := range log {
		var data struct {
			ApprovedBy string `json:"approved_by"`
		}
		if len(ev.Data) > 0 && json.Unmarshal(ev.Data, &data) == nil && data.ApprovedBy != "" {
			approvals = append(approvals, data.ApprovedBy)
		}
	}
	if strings.Join(approvals, ",") != "terminal,alice" {
		t.Fatalf("recorded approvals: %v, want terminal, alice", approvals)
	}
}

// Issue 31.7: finish --status completed refuses a graph run whose verdict is
// unresolved (exit 5, naming the criteria), nothing written; --accept-unresolved is a
// person's step, recorded; the final report carries the verdict.
func TestFinishRefusesAnUnresolvedVerdict(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Criteria: []string{"tests pass", "docs updated"}, Driver: d}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "g", Job: "a", Criteria: []string{"tests pass"}, Driver: d}); err != nil {
		t.Fatal(err)
	}
	claim, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: "a", Worker: Worker{Holder: "w", TTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "g", Job: "a", Lease: *claim.Lease, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w"}}); err != nil {
		t.Fatal(err)
	}
	before := f.tipOf("g")
	finish := func(accept bool, p Person) (*FinishResult, error) {
		return f.ops.Finish(f.ctx, FinishRequest{Run: "g", Status: ledger.RunCompleted, AcceptUnresolved: accept, Person: p, Driver: d})
	}
	if _, err := finish(false, Person{Terminal: true}); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), `"docs updated"`) {
		t.Fatalf("finish completed, unresolved: %v; want refused naming the criterion", err)
	}
	for _, p := range []Person{{}, {Via: ViaMCP, ApprovedBy: "bob"}} {
		if _, err := finish(true, p); !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("--accept-unresolved as %+v: %v; want refused", p, err)
		}
	}
	if f.tipOf("g") != before {
		t.Fatal("a refused finish wrote to the run")
	}
	res, err := finish(true, Person{ApprovedBy: "bob"})
	if err != nil || res.Status != ledger.RunCompleted || res.Verdict == nil || res.Verdict.Verdict != ledger.VerdictUnresolved {
		t.Fatalf("--accept-unresolved --approved-by bob: %+v, %v", res, err)
	}
	log, err := f.ops.Reader().Log(f.ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if data := string(log[len(log)-1].Data); !strings.Contains(data, `"accepted_unresolved":["docs updated"]`) || !strings.Contains(data, `"approved_by":"bob"`) {
		t.Fatalf("the finish event: %s", data)
	}
}

// Issue 31.6: "passed" is git-atlas's word. A passed report of a stage with a safe,
// trusted verify runs it first (here in a copy of the checkout: the stage has no
// worktree): failing, the stage is failed with the output's tail, exit 6; passing,
// it is passed and verified. A stage with no verify, or one not safe, passes
// unverified, saying why; so does one whose verify is not trusted here.
func TestPassedRunsTheVerify(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	pass := func(run string) (*TransitionResult, error) {
		if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: run, Stage: "s", Status: ledger.StageDispatched, Driver: d}); err != nil {
			t.Fatal(err)
		}
		return f.ops.Transition(f.ctx, TransitionRequest{Run: run, Stage: "s", Status: ledger.StagePassed, Driver: d})
	}
	start := func(run, verify string, safe bool) {
		if _, err := f.ops.Start(f.ctx, StartRequest{ID: run, Stages: []ledger.StageDef{{Name: "s", MaxRetries: 2}}, Verify: verify, VerifySafe: safe, Driver: d}); err != nil {
			t.Fatal(err)
		}
	}
	start("bad", "echo broken-build; exit 3", true)
	res, err := pass("bad")
	if !errors.Is(err, fault.ErrVerifyFailed) || res == nil || res.Stage.Status != ledger.StageFailed || res.Stage.Verify == nil || !strings.Contains(res.Stage.Verify.Tail, "broken-build") {
		t.Fatalf("passed with a failing verify: %+v, %v; want failed, exit 6, the tail", res, err)
	}
	if r, _ := f.ops.Reader().Load(f.ctx, "bad"); r.State.Stages[0].Status != ledger.StageFailed || r.State.Stages[0].Verify == nil || r.State.Stages[0].Verify.ExitCode != 3 {
		t.Fatalf("the ledger: %+v", r.State.Stages[0])
	}
	start("good", "test -f README", true)
	if res, err := pass("good"); err != nil || res.Stage.Status != ledger.StagePassed || res.Stage.Verified == nil || !*res.Stage.Verified {
		t.Fatalf("passed with a passing verify: %+v, %v; want passed, verified", res, err)
	}
	for run, want := range map[string]string{"none": "no_verify", "unsafe": "not_safe"} {
		verify := ""
		if run == "unsafe" {
			verify = "false"
		}
		start(run, verify, false)
		res, err := pass(run)
		if err != nil || res.Stage.Status != ledger.StagePassed || res.Stage.Verified == nil || *res.Stage.Verified || res.Stage.Unverified != want {
			t.Fatalf("%s: %+v, %v; want passed unverified (%s)", run, res, err, want)
		}
		if r, _ := f.ops.Reader().Load(f.ctx, run); r.State.Stages[0].Unverified != want {
			t.Fatalf("%s: the ledger says %+v", run, r.State.Stages[0])
		}
	}
	// A run written by another (here: straight into the store, so nothing trusts its
	// verify here): passed unverified, untrusted, and the command is not run.
	h := ledger.Header{RunID: "from-elsewhere", Kind: ledger.KindSingle, Baseline: testenv.HexOID(f.base), Stages: []ledger.StageDef{{Name: "s", Verify: "false", VerifySafe: true, MaxRetries: 1}}}
	st := ledger.State{RunID: "from-elsewhere", Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "s", Status: ledger.StagePending}}}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}); err != nil {
		t.Fatal(err)
	}
	if res, err := pass("from-elsewhere"); err != nil || res.Stage.Status != ledger.StagePassed || res.Stage.Unverified != "untrusted" {
		t.Fatalf("untrusted: %+v, %v; want passed unverified (untrusted)", res, err)
	}
}

// scopedAPIJob adds job api (scope api/**) to run r1, claims it for w1 and gives it
// its worktree, with an api/ directory to work in: its lease and worktree.
func (f *wtFixture) scopedAPIJob() (string, *WorktreeAddResult) {
	f.t.Helper()
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "api", Scope: []string{"api/**"}, Driver: Driver{Holder: "d1"}}); err != nil {
		f.t.Fatal(err)
	}
	lease := f.claim("api", "w1")
	wt, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: "api", Lease: lease, Driver: Driver{Holder: "w1"}})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wt.Path, "api"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return lease, wt
}

// Issue 31.5: a job's scope is a contract. An ok receipt whose node changed paths
// outside the scope (committed, or left uncommitted) is refused (exit 5) with the
// paths, nothing written, the lease kept; once the worker takes them out, the same
// receipt is accepted.
func TestJobDoneRefusesChangesOutsideScope(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	lease, wt := f.scopedAPIJob()
	if err := os.MkdirAll(filepath.Join(wt.Path, "ui"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(wt.Path, "api/a.go", "package api\n")
	f.write(wt.Path, "ui/u.go", "package ui\n")
	f.git(wt.Path, "add", "-A")
	f.git(wt.Path, "commit", "-q", "-m", "api and ui")
	f.write(wt.Path, "notes.txt", "left behind\n") // uncommitted, untracked
	done := func() error {
		_, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "api", Lease: lease, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w1"}})
		return err
	}
	before := f.tip()
	err := done()
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "ui/u.go") || !strings.Contains(err.Error(), "notes.txt") || strings.Contains(err.Error(), "api/a.go") {
		t.Fatalf("receipt with changes outside api/**: %v; want refused naming ui/u.go and notes.txt only", err)
	}
	if f.tip() != before || f.load().State.Job("api").Lease != lease {
		t.Fatal("the refused receipt wrote, or the lease was not kept")
	}
	f.git(wt.Path, "rm", "-q", "ui/u.go")
	f.git(wt.Path, "commit", "-q", "-m", "only api")
	if err := os.Remove(filepath.Join(wt.Path, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Fatalf("receipt within scope: %v", err)
	}
}
