package recovery_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/worktrees"
)

// TestWorktreeIncludeCopiesAreNeverSnapshotted: a new managed worktree gets copies of
// the ignored files .worktreeinclude names (and nothing tracked, nothing merely
// untracked), and a snapshot with --include-ignored takes every ignored file but
// exactly those copies (docs/contract.md §15).
func TestWorktreeIncludeCopiesAreNeverSnapshotted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	ctx := context.Background()
	write(t, filepath.Join(f.dir, ".worktreeinclude"), "secret.log\nbuild/\nplain.txt\nstaged.txt\n")
	write(t, filepath.Join(f.dir, "secret.log"), "TOKEN=1\n")
	write(t, filepath.Join(f.dir, "build", "cfg.log"), "cfg\n")
	write(t, filepath.Join(f.dir, "other.log"), "not named\n")
	write(t, filepath.Join(f.dir, "plain.txt"), "untracked, not ignored\n")
	added, err := worktrees.Add(ctx, f.store, f.run, "code", worktrees.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wt := added.Rec.Path
	for name, want := range map[string]string{"secret.log": "TOKEN=1\n", "build/cfg.log": "cfg\n", "staged.txt": "staged\n"} {
		if got, err := os.ReadFile(filepath.Join(wt, name)); err != nil || string(got) != want {
			t.Errorf("%s in the new worktree: %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"other.log", "plain.txt"} {
		if _, err := os.Lstat(filepath.Join(wt, name)); err == nil {
			t.Errorf("%s was copied: only ignored files that .worktreeinclude names are", name)
		}
	}
	write(t, filepath.Join(wt, "mine.log"), "the agent's own ignored file\n")
	res, err := recovery.Snapshot(ctx, f.store, recovery.Target{Run: f.run, Node: "code", Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base),
		Source: recovery.SourceWorktree}, recovery.Options{IncludeIgnored: true})
	if err != nil {
		t.Fatal(err)
	}
	tree := run(t, f.dir, "ls-tree", "-r", "--name-only", res.Manifest.Tree.String())
	if !strings.Contains(tree, "mine.log\n") {
		t.Errorf("the snapshot lost an ignored file the worktree made itself:\n%s", tree)
	}
	for _, name := range []string{"secret.log", "build/cfg.log"} {
		if strings.Contains(tree, name) {
			t.Errorf("the snapshot holds %s, a copy of the user's file:\n%s", name, tree)
		}
	}
}

// A file the checkout ignores only by a rule the new worktree does not have (a line
// added to the checkout's .gitignore and not committed) is not copied: in the
// worktree it would be untracked, not ignored, and an agent's `git add -A` would
// commit the user's secret into the node's branch, the union and a push.
func TestWorktreeIncludeCopiesOnlyWhatTheWorktreeIgnores(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	ctx := context.Background()
	write(t, filepath.Join(f.dir, ".worktreeinclude"), "secret.env\nsecret.log\n")
	gi, err := os.ReadFile(filepath.Join(f.dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.dir, ".gitignore"), string(gi)+"secret.env\n") // not committed
	write(t, filepath.Join(f.dir, "secret.env"), "API_KEY=hunter2\n")
	write(t, filepath.Join(f.dir, "secret.log"), "TOKEN=1\n")
	added, err := worktrees.Add(ctx, f.store, f.run, "code", worktrees.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wt := added.Rec.Path
	if _, err := os.Lstat(filepath.Join(wt, "secret.env")); err == nil {
		t.Error("secret.env was copied into a worktree whose rules do not ignore it")
	}
	if got, err := os.ReadFile(filepath.Join(wt, "secret.log")); err != nil || string(got) != "TOKEN=1\n" {
		t.Errorf("secret.log, ignored in both: %q, %v", got, err)
	}
	if got, err := worktrees.Included(f.store.Repo, f.run, "code"); err != nil || strings.Join(got, ",") != "secret.log" {
		t.Errorf("recorded copies %v, %v; want secret.log only", got, err)
	}
}

// A node's branch that commits a directory of the checkout's included files as a
// symbolic link (cfg, linking outside): the files beyond it are left out, never
// copied through the link nor passed to git check-ignore (which refused the whole
// list, and the worktree was left half-made), and the other files are copied.
func TestWorktreeIncludeLeavesOutPathsBeyondALink(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	ctx := context.Background()
	outside := t.TempDir()
	write(t, filepath.Join(f.dir, ".worktreeinclude"), "cfg/secret.log\nother.log\n")
	write(t, filepath.Join(f.dir, "cfg", "secret.log"), "API_KEY=hunter2\n")
	write(t, filepath.Join(f.dir, "other.log"), "TOKEN=1\n")
	// The branch: the baseline's tree and cfg, a link to outside.
	blob, err := runErr(f.dir, []byte(outside), "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	entries := run(t, f.dir, "ls-tree", f.base) + "120000 blob " + strings.TrimSpace(blob) + "\tcfg\n"
	tree, err := runErr(f.dir, []byte(entries), "mktree")
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(run(t, f.dir, "commit-tree", strings.TrimSpace(tree), "-p", f.base, "-m", "cfg is a link"))
	added, err := worktrees.Add(ctx, f.store, f.run, "code", worktrees.AddOptions{Baseline: commit})
	if err != nil {
		t.Fatalf("worktree add on a branch with a link where an included file lies: %v", err)
	}
	wt := added.Rec.Path
	if fi, err := os.Lstat(filepath.Join(wt, "cfg")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("cfg in the worktree is not the branch's link: %v, %v", fi, err)
	}
	if got, err := os.ReadFile(filepath.Join(wt, "other.log")); err != nil || string(got) != "TOKEN=1\n" {
		t.Errorf("other.log, not beyond the link: %q, %v", got, err)
	}
	if ents, err := os.ReadDir(outside); err != nil || len(ents) != 0 {
		t.Errorf("something was written through the link, into %s: %v, %v", outside, ents, err)
	}
	if got, err := worktrees.Included(f.store.Repo, f.run, "code"); err != nil || strings.Join(got, ",") != "other.log" {
		t.Errorf("recorded copies %v, %v; want other.log only", got, err)
	}
}

// A copy the agent made tracked (`git add -f`) stays out of a snapshot, staged or not,
// while it holds the bytes copied; one it changed is its work and is snapshotted. The
// record of the copies goes with the worktree (docs/contract.md §15).
func TestTrackedIncludeCopiesStayOutWhileUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	ctx := context.Background()
	write(t, filepath.Join(f.dir, ".worktreeinclude"), "secret.log\nbuild/\n")
	write(t, filepath.Join(f.dir, "secret.log"), "TOKEN=1\n")
	write(t, filepath.Join(f.dir, "build", "cfg.log"), "cfg\n")
	added, err := worktrees.Add(ctx, f.store, f.run, "code", worktrees.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wt := added.Rec.Path
	write(t, filepath.Join(wt, "build", "cfg.log"), "the agent's cfg\n")
	run(t, wt, "add", "-f", "secret.log", "build/cfg.log")
	res, err := recovery.Snapshot(ctx, f.store, recovery.Target{Run: f.run, Node: "code", Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base),
		Source: recovery.SourceWorktree}, recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tree := range []string{res.Manifest.Tree.String(), res.Manifest.IndexTree.String()} {
		names := run(t, f.dir, "ls-tree", "-r", "--name-only", tree)
		if strings.Contains(names, "secret.log") {
			t.Errorf("the snapshot holds secret.log, an unchanged copy of the user's file the agent staged:\n%s", names)
		}
		if !strings.Contains(names, "build/cfg.log") {
			t.Errorf("the snapshot lost build/cfg.log, a copy the agent changed:\n%s", names)
		}
	}
	if got, err := worktrees.Included(f.repo, f.run, "code"); err != nil || len(got) != 2 {
		t.Fatalf("included before the removal: %v, %v", got, err)
	}
	if _, err := recovery.PreserveAndRemove(ctx, f.store, f.run, "code", recovery.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, err := worktrees.Included(f.repo, f.run, "code"); err != nil || len(got) != 0 {
		t.Fatalf("the copies' record outlived the worktree: %v, %v", got, err)
	}
}
