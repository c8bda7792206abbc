package git

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-atlas/git-atlas/internal/confine"
)

// TestPictureAgreesWithGit: a command asks `git worktree list` and a worktree's
// status once while nothing it does changes them, and what it keeps says what git
// says after each of its own changes: a branch tip moved, a worktree attached to its
// branch, reset clean, removed. StatusNow always asks git. The CLI kind: there the
// list is git's to answer (listWorktreesLocal), so what is asked again is counted.
func TestPictureAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[1])
	r.KeepWorktrees()
	head := g("", "rev-parse", "HEAD")
	path := filepath.Join(confine.RealPath(t.TempDir()), "n")
	if err := r.AddWorktree(ctx, path, mustOID(t, head), "git-atlas run r node n", nil); err != nil {
		t.Fatal(err)
	}
	w := r.Worktree(path)
	fresh := func() []WorktreeInfo {
		t.Helper()
		out, err := cmd{dir: r.CommonDir, args: []string{"worktree", "list", "--porcelain", "-z"}}.run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return parseWorktrees(string(out))
	}
	count := func(what string, want int64, f func()) {
		t.Helper()
		before := Started()
		f()
		if n := Started() - before; n != want {
			t.Errorf("%s started %d git processes, want %d", what, n, want)
		}
	}
	agree := func(when string) {
		t.Helper()
		var list []WorktreeInfo
		var status []byte
		count(when+": the kept list and status", 0, func() {
			var err error
			if list, err = r.ListWorktrees(ctx); err != nil {
				t.Fatal(err)
			}
			if status, err = w.Status(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if want := fresh(); !reflect.DeepEqual(list, want) {
			t.Errorf("%s: kept list %+v, git says %+v", when, list, want)
		}
		if want, err := w.StatusNow(ctx); err != nil || string(status) != string(want) {
			t.Errorf("%s: kept status %q, git says %q (%v)", when, status, want, err)
		}
	}

	count("the first list", 1, func() { _, _ = r.ListWorktrees(ctx) })
	count("the first status", 1, func() { _, _ = w.Status(ctx) })
	agree("read twice")
	count("StatusNow", 1, func() { _, _ = w.StatusNow(ctx) })

	if err := os.WriteFile(filepath.Join(path, "new"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := w.StatusNow(ctx); err != nil || len(out) == 0 {
		t.Fatalf("StatusNow of a dirty worktree: %q %v", out, err)
	}
	// A branch made at HEAD, moved, then the worktree attached to it: the list is
	// updated in process, not asked again.
	c := g("", "commit-tree", "-p", head, "-m", "second", g("", "rev-parse", "HEAD^{tree}"))
	if err := r.UpdateRefs(ctx, "test", RefUpdate{Name: "refs/heads/n", New: head}); err != nil {
		t.Fatal(err)
	}
	m, err := r.Managed(path, []confine.Root{mustRoot(t, filepath.Dir(path))}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AttachBranch(ctx, "refs/heads/n", "test"); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRefs(ctx, "test", RefUpdate{Name: "refs/heads/n", New: c, Old: head}); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRefs(ctx, "test", RefUpdate{Name: "refs/atlas/x", New: c}); err != nil {
		t.Fatal(err)
	}
	count("a list after the ledger's own changes", 0, func() { _, _ = r.ListWorktrees(ctx) })
	if err := m.ResetClean(ctx); err != nil {
		t.Fatal(err)
	}
	if clean, err := w.Clean(ctx); err != nil || !clean {
		t.Fatalf("Clean after ResetClean: %v %v", clean, err)
	}
	agree("attached, moved, reset clean")

	// Anything else git-atlas runs in the worktree, or a directory gone, is asked again.
	if _, err := w.git(ctx, nil, nil, "commit", "-q", "--allow-empty", "-m", "third"); err != nil {
		t.Fatal(err)
	}
	count("a list after a commit", 1, func() { _, _ = r.ListWorktrees(ctx) })
	count("a status after a commit", 1, func() { _, _ = w.Status(ctx) })
	agree("committed")
	if err := os.Rename(path, path+".aside"); err != nil {
		t.Fatal(err)
	}
	count("a list after its directory moved", 1, func() { _, _ = r.ListWorktrees(ctx) })
	if err := os.Rename(path+".aside", path); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := r.ListWorktrees(ctx)
	if want := fresh(); err != nil || !reflect.DeepEqual(list, want) || len(list) != 1 {
		t.Errorf("after Remove: kept list %+v, git says %+v (%v)", list, want, err)
	}
}

func mustRoot(t *testing.T, dir string) confine.Root {
	t.Helper()
	root, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
