package cli

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
)

// TestListRowsFromSummaries: `list` reads runs as summaries; every row must be what a
// full read of the same run gives.
func TestListRowsFromSummaries(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "single", "--stages", "plan,code", "--intent", "do it", "--session", "s1")
	atlas(t, repo, "transition", "single", "plan", "dispatched", "--holder", "agent", "--ttl", "1h")
	atlas(t, repo, "start", "--id", "graph", "--graph")
	atlas(t, repo, "job", "add", "graph", "a")
	atlas(t, repo, "job", "claim", "graph", "--holder", "w", "--ttl", "1ms")
	atlas(t, repo, "start", "--id", "done", "--stages", "x")
	atlas(t, repo, "finish", "done", "--status", "failed", "--reason", "gave up")

	ctx := context.Background()
	r, err := git.Open(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	store := gitstate.New(r)
	full, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListSummaries})
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != 3 || len(sums) != len(full) {
		t.Fatalf("List %d runs, ListSummaries %d", len(full), len(sums))
	}
	now := time.Now().UTC()
	for i := range full {
		want, got := runJSON(full[i].Run, now), runJSON(sums[i].Run, now)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("run %s: row from summary\n%+v\nwant\n%+v", full[i].ID, got, want)
		}
	}
}
