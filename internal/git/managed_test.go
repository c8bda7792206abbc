package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// Only a linked worktree under a managed root whose .git file and git's registration
// name each other is Managed; every other path a ledger could name is foreign: the
// user's own linked worktree, a symbolic link to it at the managed place or on the
// way there, a managed directory whose .git file names the user's worktree's git dir,
// a directory with a repository of its own, the main worktree. A directory that is
// gone is Managed (only its registration is left) when its place is under the root.
// A registration locked with the node's reason vouches for a worktree outside the
// roots (made before atlas.worktreeRoot moved); no other lock does.
func TestManagedAgreesBothWays(t *testing.T) {
	t.Parallel()
	r, g := testRepo(t, kinds[1])
	ctx := context.Background()
	head := g("", "rev-parse", "HEAD")
	base := confine.RealPath(t.TempDir())
	rootDir := filepath.Join(base, "managed")
	root, err := confine.New(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	roots := []confine.Root{root}
	managed := filepath.Join(rootDir, "r", "n")
	edited := filepath.Join(rootDir, "r", "edited")
	user := filepath.Join(base, "feat")
	for _, p := range []string{managed, edited} {
		if err := r.AddWorktree(ctx, p, mustOID(t, head), "git-atlas run r node "+filepath.Base(p), nil); err != nil {
			t.Fatal(err)
		}
	}
	g("", "worktree", "add", "-q", "-b", "feat", user)
	userAdmin := filepath.Join(r.CommonDir, "worktrees", "feat")
	if err := os.WriteFile(filepath.Join(edited, ".git"), []byte("gitdir: "+userAdmin+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustLink := func(target, link string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(user, filepath.Join(rootDir, "r", "link"))
	mustLink(base, filepath.Join(rootDir, "out"))
	repoDir := filepath.Join(rootDir, "r", "repo")
	g("", "init", "-q", repoDir)

	m, err := r.Managed(managed, roots, "")
	if err != nil || m.Missing() || m.Path != managed {
		t.Fatalf("the managed worktree: %+v, %v", m, err)
	}
	gone := filepath.Join(rootDir, "r", "gone")
	if m, err := r.Managed(gone, roots, ""); err != nil || !m.Missing() {
		t.Fatalf("a missing place under the root: %+v, %v", m, err)
	}
	for name, p := range map[string]string{
		"the user's linked worktree":             user,
		"the main worktree":                      filepath.Dir(r.CommonDir),
		"a symbolic link to the user's worktree": filepath.Join(rootDir, "r", "link"),
		"a path through a link out of the root":  filepath.Join(rootDir, "out", "feat"),
		"a .git file naming the user's git dir":  edited,
		"a repository of its own":                repoDir,
		"a missing place outside the root":       filepath.Join(base, "elsewhere"),
		"a relative path":                        "managed/r/n",
		"the root itself":                        rootDir,
	} {
		if m, err := r.Managed(p, roots, ""); !errors.Is(err, ErrForeign) || !errors.Is(err, fault.ErrRefused) {
			t.Errorf("%s (%s): %+v, %v; want a foreign refusal", name, p, m, err)
		}
	}
	if _, err := r.Placed(filepath.Join(rootDir, "out", "x"), roots); !errors.Is(err, ErrForeign) {
		t.Errorf("Placed through a link out of the root: %v", err)
	}

	// Outside every root: a lock with the node's reason vouches, no other does.
	if _, err := r.Managed(managed, nil, "git-atlas run r node n"); err != nil {
		t.Errorf("a worktree locked with its node's reason: %v", err)
	}
	for _, reason := range []string{"", "git-atlas run r node other"} {
		if _, err := r.Managed(managed, nil, reason); !errors.Is(err, ErrForeign) {
			t.Errorf("lock reason %q vouched: %v", reason, err)
		}
	}
	g("", "worktree", "lock", "--reason", "git-atlas run r node x", user)
	if _, err := r.Managed(user, roots, "git-atlas run r node feat"); !errors.Is(err, ErrForeign) {
		t.Errorf("the user's worktree vouched for by another lock: %v", err)
	}

	// A managed one removed by Remove; the user's worktree is as it was.
	if err := m.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(managed); !os.IsNotExist(err) {
		t.Fatalf("removed worktree still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(user, ".git")); err != nil {
		t.Fatalf("the user's worktree: %v", err)
	}
}
