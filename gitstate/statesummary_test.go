package gitstate

import (
	"context"
	"reflect"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Listing at ListStates reads state.json alone and agrees with ListSummaries on every
// state field detection uses; a run whose state.json is gone is unreadable in both.
func TestListStateSummaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := New(newRepo(t, kind))
			newRun(t, s, "a", ledger.StageDef{Name: "code"})
			newRun(t, s, "b", ledger.StageDef{Name: "code"}, ledger.StageDef{Name: "test"})
			if err := transition(s, "b", "code", ledger.StageDispatched); err != nil {
				t.Fatal(err)
			}
			// A run ref that points at a commit with no ledger documents.
			headID, err := s.Repo.ResolveCommit(ctx, git.HeadRev())
			head := headID.String()
			if err != nil {
				t.Fatal(err)
			}
			run(t, s.Repo.CommonDir, "update-ref", RunRef("broken"), head)

			full, err := s.List(ctx, ListOptions{Depth: ListSummaries})
			if err != nil {
				t.Fatal(err)
			}
			states, err := s.List(ctx, ListOptions{Depth: ListStates})
			if err != nil {
				t.Fatal(err)
			}
			if len(full) != 3 || len(states) != 3 {
				t.Fatalf("got %d and %d entries, want 3", len(full), len(states))
			}
			for i := range full {
				f, g := full[i], states[i]
				if f.ID != g.ID || (f.Err == nil) != (g.Err == nil) {
					t.Fatalf("entry %d: %s/%v against %s/%v", i, f.ID, f.Err, g.ID, g.Err)
				}
				if f.Err != nil {
					continue
				}
				if g.Run.Header.RunID != f.ID || g.Run.Header.Kind != "" {
					t.Errorf("%s: header %+v", f.ID, g.Run.Header)
				}
				if !reflect.DeepEqual(f.Run.State, g.Run.State) {
					t.Errorf("%s: state %+v, want %+v", f.ID, g.Run.State, f.Run.State)
				}
			}
		})
	}
}
