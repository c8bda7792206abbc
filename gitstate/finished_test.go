package gitstate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger"
)

// FinishedBy takes for a run's finish only the event that says it ended the run, in
// the commit where its state became finished, every commit read in its place in the
// chain: a finish with events after it is found; a commit declaring a run finished
// with an event copied from elsewhere in the chain, or replacing the tip with one
// that keeps its own event but says the run finished, is told apart (nil).
func TestFinishedByTakesOnlyTheEventThatFinishedTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t, repoKinds[0])
	s := New(repo)
	finish := func(id string) {
		t.Helper()
		_, err := s.Update(ctx, id, func(r *ledger.Run) (*Change, error) {
			r.State.Status = ledger.RunCompleted
			return &Change{Event: ledger.RunFinishedEvent(ledger.About{}, ledger.RunFinishedData{From: ledger.RunRunning, Status: ledger.RunCompleted, Reason: "done"})}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	note := func(id string) {
		t.Helper()
		if _, err := s.Update(ctx, id, func(*ledger.Run) (*Change, error) { return &Change{Event: ledger.Event{Type: ledger.EventNote}}, nil }); err != nil {
			t.Fatal(err)
		}
	}
	// forge makes a commit on parent whose state.json is tip's with the run completed
	// and whose other documents are tip's, and points run id's ref at it.
	dir := repo.CommonDir
	forge := func(id, tip, parent string) {
		t.Helper()
		var in strings.Builder
		for _, f := range []string{"run.json", "state.json", "event.json"} {
			content := run(t, dir, "cat-file", "blob", tip+":"+f)
			if f == "state.json" {
				content = strings.Replace(content, `"status":"running"`, `"status":"completed"`, 1)
			}
			fmt.Fprintf(&in, "100644 blob %s\t%s\n", runIn(t, dir, content, "hash-object", "-w", "--stdin"), f)
		}
		c := run(t, dir, "commit-tree", "-p", parent, "-m", "forged", runIn(t, dir, in.String(), "mktree"))
		run(t, dir, "update-ref", RunRef(id), c)
	}
	key, err := s.SessionKey()
	if err != nil {
		t.Fatal(err)
	}

	newRun(t, s, "done", ledger.StageDef{Name: "code"})
	note("done")
	finish("done")
	note("done") // an event after the finish (a worktree's removal, say)
	newRun(t, s, "copied", ledger.StageDef{Name: "code"})
	note("copied")
	copied, _ := s.Load(ctx, "copied")
	forge("copied", copied.Tip, copied.Tip) // appended, the tip's event kept
	newRun(t, s, "replaced", ledger.StageDef{Name: "code"})
	note("replaced")
	replaced, _ := s.Load(ctx, "replaced")
	forge("replaced", replaced.Tip, replaced.Tip+"^") // in the tip's place, its event kept

	var runs []*ledger.Run
	for _, id := range []string{"done", "copied", "replaced"} {
		r, err := s.Load(ctx, id)
		if err != nil || r.State.Status != ledger.RunCompleted {
			t.Fatalf("%s: %v, status %v", id, err, r)
		}
		runs = append(runs, r)
	}
	got, err := s.FinishedBy(ctx, runs)
	if err != nil {
		t.Fatal(err)
	}
	if e := got[0]; e == nil || e.Type != ledger.EventRunFinished || !key.OwnEvent("done", e) {
		t.Errorf("done: %+v, want its run_finished, this clone's", e)
	}
	for i, id := range []string{"copied", "replaced"} {
		if e := got[i+1]; e != nil {
			t.Errorf("%s: %+v, want none (the state says finished, no event of the chain did it)", id, e)
		}
	}
}
