package ops

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

var d1 = Driver{Holder: "d1"}

// A graph run started without --max-attempts has the default written into its
// header, so that a later change of the default never changes it.
func TestStartGraphRunUsesDefaultMaxAttempts(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	res, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != "g" || res.Kind != ledger.KindGraph || res.Status != ledger.RunRunning || res.Baseline != f.base || !res.Live || res.Holder != "d1" {
		t.Fatalf("start: %+v", res)
	}
	r, err := f.ops.Reader().Load(f.ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.MaxAttempts != ledger.DefaultMaxAttempts || len(r.Header.Stages) != 0 {
		t.Fatalf("header: max_attempts %d, stages %+v; want %d and none", r.Header.MaxAttempts, r.Header.Stages, ledger.DefaultMaxAttempts)
	}
}

// A single run without stages has one, main, with the run's verify; the verify was
// written here, so it is trusted here.
func TestStartSingleRunHasMainStageAndTrustsItsVerify(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Verify: "true", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	r, err := f.ops.Reader().Load(f.ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Header.Stages) != 1 || r.Header.Stages[0].Name != "main" || r.Header.Stages[0].Verify != "true" || r.Header.MaxAttempts != 0 {
		t.Fatalf("header: %+v", r.Header)
	}
	cmds, err := trust.Check(f.ctx, f.ops.Repo, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) == 0 {
		t.Fatal("the run carries no command")
	}
	for _, c := range cmds {
		if !c.Trusted {
			t.Fatalf("the run's own command is not trusted here: %+v", c)
		}
	}
}

// Graph limits are for graph runs.
func TestStartRefusesGraphLimitsOnSingleRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	_, err := f.ops.Start(f.ctx, StartRequest{ID: "s", MaxAttempts: 3, Driver: d1})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "are for graph runs") {
		t.Fatalf("start --max-attempts without --graph: %v, want a usage error", err)
	}
}

// dispatch moves r1's stage to dispatched as d1.
func (f *wtFixture) dispatch(stage string) *TransitionResult {
	f.t.Helper()
	res, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "r1", Stage: stage, Status: ledger.StageDispatched, Driver: d1})
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// A dispatched stage without a worktree runs in this checkout: its attempt's
// baseline is the checkout's HEAD (not the run's baseline), pinned in the same
// write.
func TestTransitionDispatchInCheckoutTakesItsHead(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	f.write(f.dir, "more.txt", "more\n")
	f.git(f.dir, "add", "more.txt")
	f.git(f.dir, "commit", "-q", "-m", "more")
	head := strings.TrimSpace(f.git(f.dir, "rev-parse", "HEAD"))
	res := f.dispatch("build")
	if res.Stage.Baseline == nil || *res.Stage.Baseline != head || res.Lease == nil || res.Attempt == nil || *res.Attempt != 1 || res.Stage.From != ledger.StagePending {
		t.Fatalf("dispatch: %+v, want baseline %s", res, head)
	}
	_, st, _ := f.load().Stage("build")
	a := st.Attempts[0]
	if !a.InCheckout || a.Baseline.String() != head || a.Holder != "d1" || a.Lease != *res.Lease {
		t.Fatalf("attempt: %+v", a)
	}
	if pin := strings.TrimSpace(f.git(f.dir, "rev-parse", gitstate.PinRef("r1", ledger.BaselinePinName("build", 1)))); pin != head {
		t.Fatalf("pin %s, want %s", pin, head)
	}
}

// With a worktree, the attempt starts from the tip of the worktree's branch (the
// work done there so far), not from the checkout's HEAD.
func TestTransitionDispatchInWorktreeTakesItsBranchTip(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	wt := f.add("build", "work.txt")
	tip := strings.TrimSpace(f.git(wt.Path, "rev-parse", "HEAD"))
	if tip == f.base {
		t.Fatal("the worktree's commit did not move its branch")
	}
	res := f.dispatch("build")
	if res.Stage.Baseline == nil || *res.Stage.Baseline != tip {
		t.Fatalf("dispatch: baseline %v, want the branch tip %s", res.Stage.Baseline, tip)
	}
	if _, st, _ := f.load().Stage("build"); st.Attempts[0].InCheckout {
		t.Fatalf("attempt in a worktree recorded as in the checkout: %+v", st.Attempts[0])
	}
}

// --thread-id and --pid describe a new attempt.
func TestTransitionThreadIDOnlyWithDispatch(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	_, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "r1", Stage: "build", Status: ledger.StageSkipped, ThreadID: "t1", Driver: d1})
	if !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("skipped with --thread-id: %v, want a usage error", err)
	}
}

// A single run whose last stage completes completes itself in the same write.
func TestTransitionLastStageCompletesSingleRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	res, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "r1", Stage: "build", Status: ledger.StageSkipped, Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunStatus != ledger.RunCompleted || res.RunReason != ledger.ReasonAllStagesCompleted || res.Attempt != nil || res.Stage.Lease != nil {
		t.Fatalf("transition: %+v", res)
	}
	if ev := f.last(); ev.Type != ledger.EventStageTransition || !strings.Contains(string(ev.Data), `"run_status":"completed"`) {
		t.Fatalf("event: %+v %s", ev, ev.Data)
	}
}

// A type git-atlas writes itself is refused (exit 2), naming what writes it, and
// nothing is appended.
func TestEventRefusesReservedType(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	tip := f.tip()
	_, err := f.ops.Event(f.ctx, EventRequest{Run: "r1", Type: string(ledger.EventJobClaimed), Driver: d1})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "is written by git-atlas itself") || !slices.ContainsFunc(hintSteps(err), func(s fault.Step) bool { return s.Op == "job claim" }) {
		t.Fatalf("event job_claimed: %v (hint %q), want a usage error naming job claim", err, fault.HintOf(err))
	}
	if f.tip() != tip {
		t.Fatal("the refused event was appended")
	}
	res, err := f.ops.Event(f.ctx, EventRequest{Run: "r1", Type: "note", Data: json.RawMessage(`{"a": 1}`), Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if ev := f.last(); ev.Type != "note" || string(ev.Data) != `{"a":1}` || res.Seq != ev.Seq || res.Tip != f.tip() {
		t.Fatalf("event: %+v %s, result %+v", ev, ev.Data, res)
	}
	if _, err := f.ops.Event(f.ctx, EventRequest{Run: "r1", Type: "note", Data: json.RawMessage(`[1]`), Driver: d1}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("event with a list as data: %v, want a usage error", err)
	}
}

// A graph run with a RUNNING job is not finished: its worker's receipt would be
// refused forever. --force reaps the job first, in its own recorded event.
func TestFinishWithRunningJobRefusedUnlessForced(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	lease := f.claim("a", "w1")
	tip := f.tip()
	_, err := f.ops.Finish(f.ctx, FinishRequest{Run: "r1", Status: ledger.RunCompleted, Driver: d1})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "has running jobs") {
		t.Fatalf("finish with a running job: %v, want refused", err)
	}
	if f.tip() != tip {
		t.Fatal("the refused finish wrote to the ledger")
	}
	res, err := f.ops.Finish(f.ctx, FinishRequest{Run: "r1", Status: ledger.RunCompleted, Force: true, Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != ledger.RunCompleted || len(res.Reaped) != 1 || res.Reaped[0].ID != "a" || res.Reaped[0].Lease != lease || res.Reaped[0].To != ledger.JobPending {
		t.Fatalf("finish --force: %+v", res)
	}
	log, err := f.ops.Reader().Log(f.ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	reaped, finished := log[len(log)-2], log[len(log)-1]
	if reaped.Type != ledger.EventJobReaped || !strings.Contains(string(reaped.Data), `"reason":"forced finish"`) || finished.Type != ledger.EventRunFinished {
		t.Fatalf("last events: %+v %s, %+v", reaped, reaped.Data, finished)
	}
}

// A run with nothing running finishes as asked, with no reap and nothing reaped.
func TestFinishStoppedRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	res, err := f.ops.Finish(f.ctx, FinishRequest{Run: "r1", Status: ledger.RunStopped, Reason: "lunch", Force: true, Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != ledger.RunStopped || res.Reason != "lunch" || res.Reaped == nil || len(res.Reaped) != 0 || res.Live {
		t.Fatalf("finish: %+v", res)
	}
}

// A heartbeat renews a named driver's lease and beats for the stage's open
// attempt; a finished run has nothing to drive.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build", "ship")
	if _, err := f.ops.Heartbeat(f.ctx, HeartbeatRequest{Run: "r1"}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("heartbeat without a holder: %v, want a usage error", err)
	}
	lease := *f.dispatch("build").Lease
	res, err := f.ops.Heartbeat(f.ctx, HeartbeatRequest{Run: "r1", Stage: "build", Lease: lease, Driver: Driver{Holder: "d1", TTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Driver == nil || res.Driver.Holder != "d1" || res.Stage == nil || *res.Stage != "build" || res.Attempt == nil || *res.Attempt != 1 || res.HeartbeatAt == nil || *res.HeartbeatAt == "" {
		t.Fatalf("heartbeat: %+v", res)
	}
	if ev := f.last(); ev.Type != ledger.EventHeartbeat || ev.Stage != "build" || ev.Holder != "d1" {
		t.Fatalf("event: %+v", ev)
	}
	if _, err := f.ops.Finish(f.ctx, FinishRequest{Run: "r1", Status: ledger.RunFailed, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Heartbeat(f.ctx, HeartbeatRequest{Run: "r1", Driver: d1}); !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("heartbeat of a finished run: %v, want refused", err)
	}
}

// Undo needs a named driver and goes back to an event's state in one new event.
func TestUndo(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	if _, err := f.ops.Undo(f.ctx, UndoRequest{Run: "r1", To: 1}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("undo without a holder: %v, want a usage error", err)
	}
	f.jobs("a")
	res, err := f.ops.Undo(f.ctx, UndoRequest{Run: "r1", To: 1, Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	r := f.load()
	if res.RunID != "r1" || res.Seq != r.State.Seq || res.Tip != r.Tip || len(r.State.Jobs) != 0 || res.UndoResult == nil {
		t.Fatalf("undo: %+v; state %+v", res, r.State)
	}
	if ev := f.last(); ev.Type != ledger.EventUndone || ev.Holder != "d1" {
		t.Fatalf("event: %+v", ev)
	}
}

// start's pipeline and config files may be named over the MCP wire: a FIFO or
// /dev/zero is refused (a usage error, no run), never read.
func TestStartRefusesFilesThatAreNotRegular(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, req := range []StartRequest{
		{ID: "p", Pipeline: fifo, Driver: d1},
		{ID: "z", Pipeline: "/dev/zero", Driver: d1},
		{ID: "c", ConfigFiles: []string{"/dev/zero"}, Driver: d1},
		{ID: "d", ConfigFiles: []string{fifo}, Driver: d1},
	} {
		_, err := f.ops.Start(f.ctx, req)
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("start %s: %v, want a usage error", req.ID, err)
		}
		if _, err := f.ops.Reader().Load(f.ctx, req.ID); !errors.Is(err, fault.ErrNotFound) {
			t.Errorf("start %s wrote a run: %v", req.ID, err)
		}
	}
}

// An event's data, and a job's receipt data, are at most MaxEventData bytes: a larger
// one is refused (a usage error naming the size, not echoing the data), nothing
// written; a bad one is echoed clipped.
func TestEventDataIsBounded(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "e", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	big := `{"big":"` + strings.Repeat("x", MaxEventData) + `"}`
	before := f.load2("e").State.Seq
	_, err := f.ops.Event(f.ctx, EventRequest{Run: "e", Type: "note", Data: json.RawMessage(big), Driver: d1})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "KiB an event's data may hold") || len(err.Error()) > 500 {
		t.Errorf("an event over the bound: %.300v", err)
	}
	if after := f.load2("e").State.Seq; after != before {
		t.Errorf("the refused event was written: seq %d -> %d", before, after)
	}
	_, err = f.ops.Event(f.ctx, EventRequest{Run: "e", Type: "note", Data: json.RawMessage(`[` + strings.Repeat("1,", 1000) + `1]`), Driver: d1})
	if !errors.Is(err, fault.ErrUsage) || len(err.Error()) > 300 {
		t.Errorf("data that is not an object: %.400v", err)
	}
	if _, err := f.ops.Event(f.ctx, EventRequest{Run: "e", Type: "note", Data: json.RawMessage(`{"text":"fits"}`), Driver: d1}); err != nil {
		t.Errorf("data within the bound: %v", err)
	}
}
