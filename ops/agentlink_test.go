package ops

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// A dispatch names the agent beside its thread id; both are recorded on the attempt
// and in the event. A thread id that is not a plain token, an unknown agent, or an
// agent on anything but a dispatch is a usage error that writes nothing.
func TestDispatchRecordsTheAgent(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	tip := f.tip()
	for _, req := range []TransitionRequest{
		{Status: ledger.StageDispatched, ThreadID: "x; rm -rf ~", Agent: "claude"},
		{Status: ledger.StageDispatched, ThreadID: "--help", Agent: "codex"},
		{Status: ledger.StageDispatched, ThreadID: "t1", Agent: "sh"},
		{Status: ledger.StageSkipped, Agent: "claude"},
	} {
		req.Run, req.Stage, req.Driver = "r1", "build", d1
		if _, err := f.ops.Transition(f.ctx, req); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%+v: %v, want a usage error", req, err)
		}
	}
	if f.tip() != tip {
		t.Fatal("a refused dispatch wrote to the ledger")
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "r1", Stage: "build", Status: ledger.StageDispatched,
		ThreadID: "0f9c2a1e-5b7d-4e3a-9c1f-2b8d7e6a5c4b", Agent: "claude", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	_, st, _ := f.load().Stage("build")
	if a := st.Attempts[0]; a.Agent != "claude" || a.ThreadID != "0f9c2a1e-5b7d-4e3a-9c1f-2b8d7e6a5c4b" {
		t.Fatalf("attempt: %+v", a)
	}
	if ev := f.last(); !strings.Contains(string(ev.Data), `"agent":"claude"`) {
		t.Fatalf("event: %s", ev.Data)
	}
}

// A claim may name the agent and its own thread id: recorded on the job and in
// job_claimed; a bad one is a usage error that writes nothing.
func TestJobClaimRecordsTheAgent(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	tip := f.tip()
	if _, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}, Agent: "codex", ThreadID: "a b"}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("claim with a bad thread id: %v", err)
	}
	if _, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}, Agent: "bash"}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("claim with a bad agent: %v", err)
	}
	if f.tip() != tip {
		t.Fatal("a refused claim wrote to the ledger")
	}
	if _, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}, Agent: "codex", ThreadID: "th-1"}); err != nil {
		t.Fatal(err)
	}
	if j := f.load().State.Job("a"); j.Agent != "codex" || j.ThreadID != "th-1" {
		t.Fatalf("job: %+v", j)
	}
	ev := f.last()
	if data, err := ledger.DecodeData[ledger.JobClaimedData](&ev); err != nil || data.Agent != "codex" || data.ThreadID != "th-1" {
		t.Fatalf("event: %s (%v)", ev.Data, err)
	}
}

// sessionRunWithWorktree makes session "sess" drive r1 with its stage build
// dispatched and given a worktree; it returns the worktree's path.
func (f *wtFixture) sessionRunWithWorktree() string {
	f.t.Helper()
	drv := Driver{Holder: "d1", Session: "sess"}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "r1", Stage: "build", Status: ledger.StageDispatched, Driver: drv}); err != nil {
		f.t.Fatal(err)
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: "build", Driver: drv})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Path
}

// The session-start pointer names the worktree the session's run works in.
func TestPointerNamesTheWorktree(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	wt := f.sessionRunWithWorktree()
	res, err := f.ops.ResumeBrief(f.ctx, ResumeDetectRequest{Session: "sess"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Driving == nil || !strings.Contains(res.Driving.Pointer, "; work in "+wt+"; next: ") {
		t.Fatalf("pointer: %+v", res.Driving)
	}
}
