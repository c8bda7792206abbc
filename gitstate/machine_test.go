package gitstate

import (
	"context"
	"errors"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// TestBudgetSurvivesReload: budgets are counted from the ledger, so a new process
// (a resume after a crash) cannot reset them.
func TestBudgetSurvivesReload(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, repoKinds[0])
	newRun(t, New(repo), "r", ledger.StageDef{Name: "code", MaxRetries: 2})
	for i := range 3 {
		s := New(repo) // a fresh store each time: nothing carried in memory
		if err := transition(s, "r", "code", ledger.StageDispatched); err != nil {
			t.Fatalf("dispatch %d: %v", i+1, err)
		}
		if err := transition(New(repo), "r", "code", ledger.StageFailed); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := repo.ReadRef(context.Background(), RunRef("r"))
	err := transition(New(repo), "r", "code", ledger.StageDispatched)
	if !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("4th dispatch with max_retries 2: err = %v, want refused", err)
	}
	after, _ := repo.ReadRef(context.Background(), RunRef("r"))
	if before != after {
		t.Fatal("a refused transition moved the run's ref")
	}
	r, err := New(repo).Load(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if _, st, _ := r.Stage("code"); len(st.Attempts) != 3 || st.Status != ledger.StageFailed {
		t.Fatalf("stage = %+v", st)
	}
}
