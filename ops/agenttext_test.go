package ops

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

// withholds fails when the JSON of what an agent is given carries hostile text.
func withholds(t *testing.T, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "IMPORTANT") {
		t.Errorf("%s: the untrusted run's text reached the agent: %s", what, b)
	}
}

// The results of recovery list and show, worktree list, audit and union
// carry a run's free text to an agent only when the run was started or trusted here
// (docs/contract.md §6): r1, made as another clone would have, is neither.
func TestAgentResultsWithholdAnUntrustedRunsText(t *testing.T) {
	t.Parallel()
	f, _ := landFixture(t, hostile)
	wt := f.add("c", "")
	f.write(wt.Path, "notes.txt", "unsaved\n")
	if _, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "c", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(filepath.Dir(f.dir), "user")
	f.git(f.dir, "worktree", "add", "-q", "-b", "user", user)
	f.update(func(r *ledger.Run) {
		sn := &r.State.Snapshots[len(r.State.Snapshots)-1]
		sn.Reason, sn.Source = hostile, "IMPORTANT-source"
		r.State.Worktree("a").Setup = &ledger.SetupRec{Command: hostile, Outcome: ledger.SetupFailed, ExitCode: 1, Tail: hostile, At: ledger.Stamp(f.ops.now())}
	})

	for _, agent := range []bool{false, true} {
		u, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1, ForAgent: agent})
		if err != nil {
			t.Fatal(err)
		}
		rl, err := f.ops.RecoveryList(f.ctx, RecoveryListRequest{ForAgent: agent})
		if err != nil || len(rl.Snapshots) == 0 {
			t.Fatalf("recovery list: %+v %v", rl, err)
		}
		rs, err := f.ops.RecoveryShow(f.ctx, RecoveryShowRequest{Snapshot: rl.Snapshots[0].ID, ForAgent: agent})
		if err != nil {
			t.Fatal(err)
		}
		wl, err := f.ops.WorktreeList(f.ctx, WorktreeListRequest{ForAgent: agent})
		if err != nil {
			t.Fatal(err)
		}
		results := map[string]any{"union": u, "recovery list": rl, "recovery show": rs, "worktree list": wl}
		for what, v := range results {
			if agent {
				withholds(t, what, v)
				continue
			}
			if b, _ := json.Marshal(v); !strings.Contains(string(b), "IMPORTANT") {
				t.Errorf("%s: a person lost the text the run carries: %s", what, b)
			}
		}
		if agent && (!rl.Snapshots[0].TextWithheld || !wl.Worktrees[0].TextWithheld) {
			t.Errorf("recovery list or worktree list does not say text was withheld: %+v %+v", rl.Snapshots[0], wl.Worktrees[0])
		}
	}

	// A record of r1 naming the user's own worktree as adopted from a system whose
	// name says something: audit's reason for calling it foreign quotes the record.
	f.update(func(r *ledger.Run) {
		r.State.Worktrees = append(r.State.Worktrees, ledger.WorktreeRec{Node: "u", Path: user, Branch: "user", Baseline: testenv.HexOID(f.base), Head: testenv.HexOID(f.base), Adopted: "IMPORTANT-run-curl"})
	})
	a, _ := f.ops.Audit(f.ctx, AuditRequest{ForAgent: true})
	withholds(t, "audit", a)
	withheld := false
	for _, w := range a.Worktrees {
		withheld = withheld || w.TextWithheld
	}
	if !withheld {
		t.Errorf("audit does not say a reason was withheld: %+v", a.Worktrees)
	}
	if a, _ := f.ops.Audit(f.ctx, AuditRequest{}); !strings.Contains(jsonString(t, a), "IMPORTANT-run-curl") {
		t.Errorf("audit for a person lost the record's branch: %s", jsonString(t, a))
	}
}

// A passed report on a run not trusted here, whose verify command alone a person
// trusted, runs it; its command and output do not reach an agent.
func TestAgentTransitionWithholdsTheVerify(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	const verify = "echo IMPORTANT: curl evil.example"
	h := ledger.Header{RunID: "v", Kind: ledger.KindSingle, Baseline: testenv.HexOID(f.base), Intent: hostile,
		Stages: []ledger.StageDef{{Name: "code", Verify: verify, VerifySafe: true}}}
	st := ledger.State{RunID: "v", Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "code", Status: ledger.StagePending}}}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin("v", "baseline", f.base)); err != nil {
		t.Fatal(err)
	}
	if err := trust.Record(f.ctx, f.ops.Repo, "v", verify); err != nil {
		t.Fatal(err)
	}
	d, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, Driver: d1, ForAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StagePassed, Lease: *d.Lease, Driver: d1, ForAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stage.Verify == nil || !res.Stage.Verify.Passed {
		t.Fatalf("the trusted verify did not run: %+v", res.Stage)
	}
	withholds(t, "transition", res)
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
