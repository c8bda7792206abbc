package ledger

import (
	"slices"
	"testing"
	"time"
)

// A receipt's children (expansion) wait until their parent is DONE: while its verify
// is owed they cannot be claimed; when the verify fails they are dropped (they never
// ran, no gas was spent on them), so the parent's retry can add them again; when the
// parent fails for good, a job that needs a dropped child fails with it.
func TestExpansionWaitsForTheParentsVerify(t *testing.T) {
	t.Parallel()
	newRun := func(attempts int) (*Header, *State) {
		h := &Header{RunID: "r", Kind: KindGraph, MaxAttempts: attempts}
		s := &State{RunID: "r", Status: RunRunning}
		if err := AddJobs(s, []JobSpec{{ID: "p", Verify: "check"}}); err != nil {
			t.Fatal(err)
		}
		s.Worktrees = append(s.Worktrees, WorktreeRec{Node: "p", Path: "/wt/p"})
		return h, s
	}
	kids := []JobSpec{{ID: "c1"}, {ID: "c2", Needs: []string{"c1"}}}
	okWithChildren := func(h *Header, s *State) {
		t.Helper()
		g, err := Claim(h, s, "p", "w", t0, time.Minute, RandomNonce())
		if err != nil || g.Job == nil {
			t.Fatalf("claim p: %v %+v", err, g)
		}
		if _, err := Done(h, s, "p", g.Lease, ReceiptOK, nil); err != nil {
			t.Fatal(err)
		}
		if err := Expand(h, s, "p", kids); err != nil {
			t.Fatal(err)
		}
		if !s.Job("p").VerifyOwed {
			t.Fatal("p's verify is not owed")
		}
	}

	h, s := newRun(2)
	okWithChildren(h, s)
	if r := Ready(h, s); len(r) != 0 {
		t.Fatalf("ready while the parent's verify is owed: %v", r)
	}
	if _, err := Claim(h, s, "c1", "w", t0, time.Minute, RandomNonce()); err == nil {
		t.Fatal("c1 claimed before its parent was verified")
	}
	o, err := SettleVerify(h, s, "p", s.Job("p").Lease, &VerifyResult{Command: "check"})
	if err != nil {
		t.Fatal(err)
	}
	if o.To != JobPending || !slices.Equal(o.Dropped, []string{"c1", "c2"}) || s.Job("c1") != nil || s.Job("c2") != nil {
		t.Fatalf("after a failed verify: %+v, jobs %+v", o, s.Jobs)
	}
	// The retry reports the same children again, and this time its verify passes.
	okWithChildren(h, s)
	if _, err := SettleVerify(h, s, "p", s.Job("p").Lease, &VerifyResult{Command: "check", Passed: true}); err != nil {
		t.Fatal(err)
	}
	if r := Ready(h, s); !slices.Equal(r, []string{"c1"}) {
		t.Fatalf("ready after the parent is DONE: %v, want c1", r)
	}
	if s.GasSpent != 2 {
		t.Fatalf("gas spent %d, want the parent's two claims", s.GasSpent)
	}

	// At the attempt limit: the parent fails, its children go, and a job added
	// meanwhile that needs a child fails with them instead of waiting forever.
	h, s = newRun(1)
	okWithChildren(h, s)
	if err := AddJobs(s, []JobSpec{{ID: "d", Needs: []string{"c2"}}}); err != nil {
		t.Fatal(err)
	}
	o, err = SettleVerify(h, s, "p", s.Job("p").Lease, &VerifyResult{Command: "check"})
	if err != nil {
		t.Fatal(err)
	}
	if o.To != JobFailed || len(o.Dropped) != 2 || s.Job("d").State != JobFailed {
		t.Fatalf("after the last attempt's verify failed: %+v, d %+v", o, s.Job("d"))
	}
	if !Halted(h, s) {
		t.Fatal("the run does not halt")
	}
}
