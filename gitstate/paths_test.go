package gitstate

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
)

// A worktree path in the ledger is this repository's, whichever clone wrote it: the
// ledger records it relative to the common dir, and an absolute path from an older
// ledger that is not this repository's is read as "not here", its place here derived
// from the layout.
func TestWorktreePathsArePerRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repoA := newRepo(t, repoKinds[0])
	a := New(repoA)
	newRun(t, a, "r", StageDef{Name: "code"})
	commonA := CanonPath(repoA.CommonDir)
	pathA := filepath.Join(commonA, "atlas", "worktrees", "r", "n1")
	outside := filepath.Join(CanonPath(t.TempDir()), "wts", "r", "n2") // a root outside the common dir
	if _, err := a.Update(ctx, "r", func(r *Run) (*Change, error) {
		r.State.Worktrees = append(r.State.Worktrees,
			WorktreeRec{Node: "n1", Path: pathA, Branch: "atlas/r/node/n1"},
			WorktreeRec{Node: "n2", Path: outside, Branch: "atlas/r/node/n2"})
		r.State.Replays = append(r.State.Replays, ReplayRec{Stage: "code", Branch: "atlas/r/replay/code/1", Worktree: filepath.Join(commonA, "atlas", "worktrees", "r", "replay-code-1")})
		return &Change{Event: Event{Type: "note"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// The stored document names the path from the common dir.
	tip, _ := repoA.ReadRef(ctx, RunRef("r"))
	blobs, err := repoA.BlobsAt(ctx, []git.BlobSpec{at(t, tip, "state.json")})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Worktrees []map[string]any `json:"worktrees"`
		Replays   []map[string]any `json:"replays"`
	}
	if err := json.Unmarshal(blobs[0].Data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Worktrees[0]["rel_path"] != "atlas/worktrees/r/n1" || doc.Worktrees[1]["rel_path"] != nil {
		t.Fatalf("stored worktrees %v", doc.Worktrees)
	}
	if doc.Replays[0]["worktree_rel_path"] != "atlas/worktrees/r/replay-code-1" {
		t.Fatalf("stored replays %v", doc.Replays)
	}
	// A reads its own paths back, the one outside the common dir included (it is under
	// A's worktree root).
	run(t, repoA.TopLevel, "config", WorktreeRootConfig, filepath.Dir(filepath.Dir(outside)))
	a = New(repoA)
	r, err := a.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.State.Worktree("n1").Path; got != pathA {
		t.Fatalf("A reads n1 at %s, want %s", got, pathA)
	}
	if got := r.State.Worktree("n2").Path; got != outside {
		t.Fatalf("A reads n2 at %s, want %s", got, outside)
	}
	if r.State.Worktree("n1").RelPath != "" {
		t.Fatal("RelPath is an encoding detail; readers see Path only")
	}

	// Clone B (default root) gets A's ledger: every path is B's own.
	dirB := filepath.Join(t.TempDir(), "b")
	run(t, filepath.Dir(dirB), "clone", "-q", repoA.TopLevel, dirB)
	run(t, dirB, "fetch", "-q", "origin", "+refs/atlas/*:refs/atlas/*")
	repoB, err := git.Open(ctx, dirB)
	if err != nil {
		t.Fatal(err)
	}
	b := New(repoB)
	commonB := CanonPath(repoB.CommonDir)
	check := func(label string) {
		t.Helper()
		r, err := b.Load(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		entries, err := b.List(ctx, ListOptions{})
		if err != nil || len(entries) != 1 || entries[0].Run == nil {
			t.Fatalf("list: %v %v", entries, err)
		}
		for _, run := range []*Run{r, entries[0].Run} {
			for node, want := range map[string]string{"n1": filepath.Join(commonB, "atlas", "worktrees", "r", "n1"), "n2": filepath.Join(commonB, "atlas", "worktrees", "r", "n2")} {
				if got := run.State.Worktree(node).Path; got != want {
					t.Errorf("%s: B reads %s at %s, want %s", label, node, got, want)
				}
			}
			if got, want := run.State.Replays[0].Worktree, filepath.Join(commonB, "atlas", "worktrees", "r", "replay-code-1"); got != want {
				t.Errorf("%s: B reads the replay worktree at %s, want %s", label, got, want)
			}
		}
	}
	check("relative paths")

	// An older ledger held absolute paths only: A's are foreign in B.
	if _, err := a.Update(ctx, "r", func(r *Run) (*Change, error) { return &Change{Event: Event{Type: "note"}}, nil }); err != nil {
		t.Fatal(err)
	}
	old := strings.NewReplacer(`"rel_path":"atlas/worktrees/r/n1",`, "", `,"worktree_rel_path":"atlas/worktrees/r/replay-code-1"`, "")
	tip, _ = repoA.ReadRef(ctx, RunRef("r"))
	blobs, _ = repoA.BlobsAt(ctx, []git.BlobSpec{at(t, tip, "state.json")})
	stripped := old.Replace(string(blobs[0].Data))
	if strings.Contains(stripped, "rel_path") {
		t.Fatalf("fixture still has a relative path: %s", stripped)
	}
	writeLedgerState(t, repoB, "r", tip, stripped)
	check("absolute paths of another clone")

	// B writes the run (recording its own paths) and A takes B's ledger back: A, whose
	// worktree root is not B's, still finds its own worktrees (n1, which exists under
	// its common dir, and n2 under its root outside it).
	if _, err := b.Update(ctx, "r", func(r *Run) (*Change, error) { return &Change{Event: Event{Type: "note"}}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(pathA, "f"), "x"); err != nil {
		t.Fatal(err)
	}
	run(t, repoA.TopLevel, "fetch", "-q", dirB, "+"+RunRef("r")+":"+RunRef("r"))
	r, err = New(repoA).Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.State.Worktree("n1").Path; got != pathA {
		t.Errorf("A reads n1 back from B at %s, want %s", got, pathA)
	}
	if got := r.State.Worktree("n2").Path; got != outside {
		t.Errorf("A reads n2 back from B at %s, want %s", got, outside)
	}
}

// writeLedgerState makes a ledger commit on parent whose state.json is state, and
// points the run's ref at it, as an older git-atlas would have written it.
func writeLedgerState(t *testing.T, repo *git.Repository, id, parent, state string) {
	t.Helper()
	ctx := context.Background()
	if err := repo.Fetch(ctx, "origin", "+"+RunRef(id)+":"+RunRef(id)); err != nil {
		t.Fatal(err)
	}
	blob, err := repo.WriteBlob(ctx, []byte(state))
	if err != nil {
		t.Fatal(err)
	}
	hdr := run(t, repo.TopLevel, "rev-parse", parent+":run.json")
	ev := run(t, repo.TopLevel, "rev-parse", parent+":event.json")
	tree, err := repo.WriteTree(ctx, []git.TreeEntry{{Name: "run.json", Blob: hdr}, {Name: "state.json", Blob: blob.String()}, {Name: "event.json", Blob: ev}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.WriteCommit(ctx, tree, []git.OID{mustOID(t, parent)}, "older git-atlas")
	if err != nil {
		t.Fatal(err)
	}
	run(t, repo.TopLevel, "update-ref", RunRef(id), c.String())
}
