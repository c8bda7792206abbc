package importer

import (
	"context"
	"os/exec"
	"testing"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
)

func newStore(t *testing.T) *gitstate.Store {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "i"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return gitstate.New(repo)
}

// TestApplyCompletesCutShort: an import killed between two events left a prefix of the
// same history; importing again writes the rest, and once complete writes nothing.
func TestApplyCompletesCutShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"r/state.json": `{"run_id":"r","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:05:00Z","current_state":"CODED","stages":{},"scope_paths":[]}`,
		"r/log.jsonl":  `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n" + `{"run_id":"r","stage":"INTENT_CAPTURED","ts":"2026-07-01T12:00:02Z"}` + "\n",
	})
	store := newStore(t)
	scan := func() *Plan {
		plans, probs, err := ScanKimi(t.Context(), dir)
		if err != nil || len(probs) != 0 || len(plans) != 1 {
			t.Fatalf("scan: %v %v %d", err, probs, len(plans))
		}
		return plans[0]
	}
	// Cut short: only the first two events were written.
	p := scan()
	full := len(p.Events)
	p.Events, p.States = p.Events[:2], p.States[:2]
	if res := Apply(ctx, store, []*Plan{p}, false, nil); res[0].Outcome != Imported {
		t.Fatalf("first import: %+v", res[0])
	}
	res := Apply(ctx, store, []*Plan{scan()}, false, nil)
	if res[0].Outcome != Imported || res[0].Events != full-2 {
		t.Fatalf("second import: outcome %s, %d events; want imported, %d", res[0].Outcome, res[0].Events, full-2)
	}
	log, err := store.Log(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != full || log[full-1].Type != "imported" || log[2].Time != "2026-07-01T12:00:02Z" {
		t.Fatalf("log after completing: %+v", log)
	}
	tip, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r"))
	if res := Apply(ctx, store, []*Plan{scan()}, false, nil); res[0].Outcome != Unchanged {
		t.Fatalf("third import: %+v", res[0])
	}
	if again, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r")); again != tip {
		t.Fatalf("an unchanged import moved the run's ref")
	}
	// A source that changed since: refused with the reason, nothing written.
	write(t, dir, map[string]string{"r/log.jsonl": `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n"})
	if res := Apply(ctx, store, []*Plan{scan()}, false, nil); res[0].Outcome != Refused || res[0].Reason == "" {
		t.Fatalf("changed source: %+v", res[0])
	}
	if again, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r")); again != tip {
		t.Fatalf("a refused import moved the run's ref")
	}
}

// TestApplyAdoptsAfterCutShort: an import killed after its last event but before it
// adopted the source's worktree adopts it on the next import, snapshotting its dirty
// work first; once adopted, importing again writes nothing.
func TestApplyAdoptsAfterCutShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"r/state.json": `{"run_id":"r","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:05:00Z","current_state":"CODED","stages":{},"scope_paths":[]}`,
		"r/log.jsonl":  `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n",
	})
	store := newStore(t)
	wt := dir + "/r/worktree"
	if out, err := exec.Command("git", "-C", store.Repo.TopLevel, "worktree", "add", "-q", "--detach", wt).CombinedOutput(); err != nil {
		t.Fatalf("worktree add: %v\n%s", err, out)
	}
	write(t, dir, map[string]string{"r/worktree/work.txt": "unsaved work\n"})
	scan := func() *Plan {
		plans, probs, err := ScanKimi(t.Context(), dir)
		if err != nil || len(probs) != 0 || len(plans) != 1 {
			t.Fatalf("scan: %v %v %d", err, probs, len(plans))
		}
		return plans[0]
	}
	// Killed before the adoption: every event written, the worktree not recorded.
	p := scan()
	if p.Worktree == "" {
		t.Fatal("the fixture's worktree was not seen")
	}
	p.Worktree = ""
	if res := Apply(ctx, store, []*Plan{p}, false, nil); res[0].Outcome != Imported {
		t.Fatalf("first import: %+v", res[0])
	}
	res := Apply(ctx, store, []*Plan{scan()}, false, nil)
	if res[0].Outcome != Imported || res[0].Snapshot == "" {
		t.Fatalf("second import: %+v, notes %v; want the worktree adopted with a snapshot", res[0], res[0].Notes)
	}
	r, err := store.Load(ctx, "r")
	if err != nil || r.State.Worktree("imported") == nil {
		t.Fatalf("after the second import the worktree is not recorded: %v", err)
	}
	tip, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r"))
	if res := Apply(ctx, store, []*Plan{scan()}, false, nil); res[0].Outcome != Unchanged {
		t.Fatalf("third import: %+v", res[0])
	}
	if again, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r")); again != tip {
		t.Fatal("an import of an adopted run moved its ref")
	}
}
