package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestUndo covers Undo's honesty rules on documents alone: a job RUNNING at SEQ goes
// back to PENDING and its token (issued before SEQ) is stale afterwards; gas, job
// attempts and stage attempts are never refunded; worktrees stay as now; finished and
// stopped runs, a removed worktree and a consumed snapshot are refused.
func TestUndo(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := Header{RunID: "g", Kind: KindGraph, Stages: []StageDef{{Name: "plan", MaxRetries: 2}}}
	s := State{RunID: "g", Status: RunRunning, Stages: []StageState{{Name: "plan", Status: StageDispatched, Attempts: []Attempt{{N: 1}}}}}
	if err := AddJobs(&s, []JobSpec{{ID: "a"}, {ID: "b"}}); err != nil {
		t.Fatal(err)
	}
	g, err := Claim(&h, &s, "a", "w1", now, time.Minute, RandomNonce())
	if err != nil {
		t.Fatal(err)
	}
	s.Seq = 4
	s.Worktrees = []WorktreeRec{{Node: "a", Path: "/wt/a", Baseline: testOID("b")}}
	past := &Run{Header: h, State: clone(t, s)}

	// After SEQ: a times out and is claimed again, plan is re-dispatched, b is claimed.
	if _, err := Done(&h, &s, "a", g.Lease, ReceiptTimeout, nil); err != nil {
		t.Fatal(err)
	}
	g2, err := Claim(&h, &s, "a", "w1", now, time.Minute, RandomNonce())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Claim(&h, &s, "b", "w2", now, time.Minute, RandomNonce()); err != nil {
		t.Fatal(err)
	}
	s.Stages[0].Attempts = append(s.Stages[0].Attempts, Attempt{N: 2})
	s.Worktrees = append(s.Worktrees, WorktreeRec{Node: "b", Path: "/wt/b", Baseline: testOID("b")})
	s.Seq, s.Epoch = 9, 2
	gas := s.GasSpent
	r := &Run{Header: h, State: clone(t, s)}

	res, err := Undo(r, past, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &r.State
	if st.Epoch != 3 || res.Epoch != 3 || res.To != 4 || res.From != 9 {
		t.Fatalf("epoch %d, result %+v", st.Epoch, res)
	}
	a, b := st.Job("a"), st.Job("b")
	if a.State != JobPending || a.Lease != "" || a.Attempts != 1 || b.State != JobPending || b.Attempts != 0 {
		t.Fatalf("jobs after undo: %+v %+v", a, b)
	}
	if strings.Join(res.ResetJobs, ",") != "a" {
		t.Fatalf("reset jobs %v", res.ResetJobs)
	}
	if st.GasSpent != gas || gas != 3 {
		t.Fatalf("gas spent %d, was %d", st.GasSpent, gas)
	}
	if len(st.Stages[0].Attempts) != 2 || st.Stages[0].Status != StageDispatched {
		t.Fatalf("stage after undo: %+v", st.Stages[0])
	}
	if len(st.Worktrees) != 2 {
		t.Fatalf("worktrees after undo: %+v", st.Worktrees)
	}
	for _, tok := range []string{g.Lease, g2.Lease} {
		cp := clone(t, *st)
		if _, err := Done(&h, &cp, "a", tok, ReceiptOK, nil); !errors.Is(err, fault.ErrConflict) {
			t.Fatalf("token %s after undo: %v", tok, err)
		}
	}

	refuse := func(name string, r *Run, past *Run, present func(string) bool, want string) {
		t.Helper()
		_, err := Undo(r, past, present)
		if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want refused with %q", name, err, want)
		}
	}
	for _, status := range []string{RunCompleted, RunFailed, RunStopped} {
		done := &Run{Header: h, State: clone(t, s)}
		done.State.Status = status
		refuse(status, done, past, nil, "run g is "+status)
	}
	gone := &Run{Header: h, State: clone(t, s)}
	gone.State.Worktrees = gone.State.Worktrees[1:]
	refuse("removed worktree", gone, past, nil, "the worktree of node a it had then was removed")
	past2 := &Run{Header: h, State: clone(t, past.State)}
	past2.State.Snapshots = []SnapshotRec{{ID: "s1", Ref: "refs/atlas/recovery/g/s1"}}
	withSnap := &Run{Header: h, State: clone(t, s)}
	withSnap.State.Snapshots = past2.State.Snapshots
	refuse("dropped snapshot", withSnap, past2, func(string) bool { return false }, "snapshot s1 it recorded then has been consumed")
	refuse("nothing to undo", &Run{Header: h, State: clone(t, past.State)}, past, nil, "nothing after event 4")
}

// clone deep-copies a state through its own encoding.
func clone(t *testing.T, s State) State {
	t.Helper()
	data, err := EncodeDoc(&s)
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := DecodeDoc(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
