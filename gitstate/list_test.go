package gitstate

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Every depth lists the same runs, with the same ids, tips and errors, and the fields
// it promises: ListFull the whole documents, writable; ListSummaries the summary
// fields, not writable; ListStates those of the state alone. A corrupt run is an
// entry with ErrCorrupt at every depth, never a failed listing. With NoFetch a store
// with a Remote lists its local ledger as it is; without, it fetches first.
func TestListDepthsAndNoFetch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, stores := remoteClones(t, 2)
	writer, reader := stores[0], stores[1]
	summaryRuns(t, writer) // four runs, written through the remote
	// A run ref at a commit with no ledger documents, in the writer's repository only.
	headID, err := writer.Repo.ResolveCommit(ctx, git.HeadRev())
	head := headID.String()
	if err != nil {
		t.Fatal(err)
	}
	run(t, writer.Repo.CommonDir, "update-ref", RunRef("broken"), head)

	depths := []ListDepth{ListFull, ListSummaries, ListStates}
	for _, d := range depths {
		// The reader's own ledger is empty: only a fetch brings the runs.
		if entries, err := reader.List(ctx, ListOptions{Depth: d, NoFetch: true}); err != nil || len(entries) != 0 {
			t.Fatalf("%s, NoFetch: %d runs (%v), want the local ledger's none", d, len(entries), err)
		}
	}
	if entries, err := reader.List(ctx, ListOptions{Depth: ListStates}); err != nil || len(entries) != 4 {
		t.Fatalf("ListStates: %d runs (%v), want the remote's 4", len(entries), err)
	}

	listed := map[ListDepth][]Entry{}
	for _, d := range depths {
		entries, err := writer.List(ctx, ListOptions{Depth: d})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if len(entries) != 5 {
			t.Fatalf("%s: %d runs, want 5", d, len(entries))
		}
		listed[d] = entries
	}
	for i, f := range listed[ListFull] {
		for _, d := range depths {
			e := listed[d][i]
			if e.ID != f.ID || (e.Err == nil) != (f.Err == nil) {
				t.Fatalf("%s entry %d: %s (%v), ListFull %s (%v)", d, i, e.ID, e.Err, f.ID, f.Err)
			}
			if f.ID == "broken" {
				if !errors.Is(e.Err, ErrCorrupt) || e.Run != nil {
					t.Errorf("%s: broken listed as %+v (%v), want ErrCorrupt", d, e.Run, e.Err)
				}
				continue
			}
			if e.Err != nil || e.Run.Tip != f.Run.Tip {
				t.Errorf("%s: %s at %s (%v), want tip %s", d, e.ID, e.Run.Tip, e.Err, f.Run.Tip)
			}
		}
		if f.Err != nil {
			continue
		}
		want, err := writer.loadLocal(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if f.Run.Writable() != nil || !reflect.DeepEqual(f.Run.Header, want.Header) || !reflect.DeepEqual(f.Run.State, want.State) {
			t.Errorf("ListFull %s:\n%+v\n%+v\nwant what Load reads\n%+v\n%+v", f.ID, f.Run.Header, f.Run.State, want.Header, want.State)
		}
		sum := summaryOf(want)
		wantSum := summaryRun(want.Tip, &sum.Run, &sum.State)
		if s := listed[ListSummaries][i].Run; s.Writable() == nil || !sameSummary(s, wantSum) {
			t.Errorf("ListSummaries %s:\n%+v\n%+v\nwant the summary of the documents\n%+v\n%+v", f.ID, s.Header, s.State, wantSum.Header, wantSum.State)
		}
		if s := listed[ListStates][i].Run; s.Writable() == nil || !reflect.DeepEqual(s.Header, ledger.Header{RunID: f.ID}) || !reflect.DeepEqual(s.State, wantSum.State) {
			t.Errorf("ListStates %s:\n%+v\n%+v\nwant the run id and the summary's state\n%+v", f.ID, s.Header, s.State, wantSum.State)
		}
	}
}
