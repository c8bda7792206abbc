package gitstate

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
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
	newRun(t, a, "r", ledger.StageDef{Name: "code"})
	commonA := CanonPath(repoA.CommonDir)
	pathA := filepath.Join(commonA, "atlas", "worktrees", "r", "n1")
	outside := filepath.Join(CanonPath(t.TempDir()), "wts", "r", "n2") // a root outside the common dir
	if _, err := a.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
		r.State.Worktrees = append(r.State.Worktrees,
			ledger.WorktreeRec{Node: "n1", Path: pathA, Branch: "atlas/r/node/n1"},
			ledger.WorktreeRec{Node: "n2", Path: outside, Branch: "atlas/r/node/n2"})
		r.State.Replays = append(r.State.Replays, ledger.ReplayRec{Stage: "code", Branch: "atlas/r/replay/code/1", Worktree: filepath.Join(commonA, "atlas", "worktrees", "r", "replay-code-1")})
		return &Change{Event: ledger.Event{Type: "note"}}, nil
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
	repoA.ReloadConfig() // a Repository reads the configuration once, as a command does
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
		for _, run := range []*ledger.Run{r, entries[0].Run} {
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
	if _, err := a.Update(ctx, "r", func(r *ledger.Run) (*Change, error) { return &Change{Event: ledger.Event{Type: "note"}}, nil }); err != nil {
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
	if _, err := b.Update(ctx, "r", func(r *ledger.Run) (*Change, error) { return &Change{Event: ledger.Event{Type: "note"}}, nil }); err != nil {
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

// A record is not believed because the worktree it names is registered to this
// repository (issue 29): a pulled run whose rel_path climbs out of the common dir
// (../../feat) or whose absolute path is the user's own linked worktree is read at its
// place here by the layout, never at the user's worktree. A worktree git-atlas made
// here for that very node under a root the configuration has moved away from since
// is found by its lock (local state); an adopted worktree where import found it.
func TestWorktreePathOfTheUsersWorktreeNotBelieved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t, repoKinds[1])
	s := New(repo)
	top := CanonPath(repo.TopLevel)
	feat := filepath.Join(filepath.Dir(top), "feat")
	run(t, top, "worktree", "add", "-q", "-b", "feat", feat)
	root, err := WorktreeRoot(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ rel, abs string }{
		{"../../feat", "/elsewhere/.git/atlas/worktrees/r/n"},
		{"../../feat", ""},
		{"atlas/worktrees/../../../feat", ""},
		{"", feat},
	} {
		if got := s.localPath(ctx, "r", "n", c.rel, c.abs, false); got == feat || !under(got, root) {
			t.Errorf("rel %q abs %q read at %s; want a place under %s", c.rel, c.abs, got, root)
		}
	}
	if got := s.localPath(ctx, "r", "n", "", feat, true); got != feat {
		t.Errorf("an adopted worktree read at %s, want %s", got, feat)
	}

	// Made for node n of run r under a root since moved away from: locked so.
	moved := filepath.Join(filepath.Dir(top), "old-root", "r", "n")
	run(t, top, "worktree", "add", "-q", "--detach", "--lock", "--reason", LockReason("r", "n"), moved)
	if got := s.localPath(ctx, "r", "n", "", moved, false); got != moved {
		t.Errorf("a worktree locked for its node read at %s, want %s", got, moved)
	}
	if got := s.localPath(ctx, "r", "m", "", moved, false); got == moved {
		t.Errorf("a worktree locked for another node believed for node m")
	}
}
