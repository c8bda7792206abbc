package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/confine"
)

func TestParseWorktrees(t *testing.T) {
	t.Parallel()
	out := "worktree /r\x00HEAD abc\x00branch refs/heads/main\x00\x00" +
		"worktree /r/.git/atlas/worktrees/x/n\x00HEAD def\x00detached\x00locked atlas run x node n\x00\x00" +
		"worktree /gone\x00HEAD 123\x00branch refs/heads/b\x00prunable gitdir file points to non-existent location\x00\x00"
	got := parseWorktrees(out)
	if len(got) != 3 {
		t.Fatalf("got %d records: %+v", len(got), got)
	}
	if got[0].Path != "/r" || got[0].Branch != "refs/heads/main" || got[0].Head != "abc" {
		t.Errorf("first: %+v", got[0])
	}
	if !got[1].Detached || !got[1].Locked || got[1].LockReason != "atlas run x node n" {
		t.Errorf("second: %+v", got[1])
	}
	if !got[2].Prunable || got[2].PrunableReason == "" {
		t.Errorf("third: %+v", got[2])
	}
}

func TestClearStaleLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lock := dir + "/refs/atlas/runs/r.lock"
	if err := os.MkdirAll(dir+"/refs/atlas/runs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	msg := "fatal: cannot lock ref 'refs/atlas/runs/r': Unable to create '" + lock + "': File exists.\n"
	if clearStaleLock(msg, dir, DefaultStaleLockAge) {
		t.Fatal("a fresh lock was taken for stale")
	}
	old := time.Now().Add(-2 * DefaultStaleLockAge)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	other := dir + "/refs/heads/main.lock"
	if err := os.MkdirAll(dir+"/refs/heads", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(other, old, old)
	if clearStaleLock("Unable to create '"+other+"': File exists.", dir, DefaultStaleLockAge) {
		t.Fatal("a lock outside git-atlas's namespaces was removed")
	}
	if !clearStaleLock(msg, dir, DefaultStaleLockAge) {
		t.Fatal("a stale lock was not removed")
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock still there: %v", err)
	}

	// The repository's packed-refs.lock (a killed deletion of a packed ref leaves it,
	// and it blocks every later one): removed when stale, as the message names it
	// (git writes "<common dir>/./packed-refs.lock"), and only the common dir's.
	packed := dir + "/packed-refs.lock"
	if err := os.WriteFile(packed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pmsg := "fatal: prepare: Unable to create '" + dir + "/./packed-refs.lock': File exists.\n"
	if clearStaleLock(pmsg, dir, DefaultStaleLockAge) {
		t.Fatal("a fresh packed-refs.lock was taken for stale")
	}
	_ = os.Chtimes(packed, old, old)
	if clearStaleLock(pmsg, dir+"/refs", DefaultStaleLockAge) {
		t.Fatal("a packed-refs.lock outside the common dir was removed")
	}
	if !clearStaleLock(pmsg, dir, DefaultStaleLockAge) {
		t.Fatal("a stale packed-refs.lock was not removed")
	}
	if _, err := os.Stat(packed); !os.IsNotExist(err) {
		t.Fatalf("packed-refs.lock still there: %v", err)
	}
}

// A `git worktree add` killed between creating a worktree's commondir file and
// writing it leaves it empty, which makes every later `git worktree` command of the
// repository fail (git 2.39). The worktree commands repair it and go on: the
// half-made worktree lists as such, and can be removed.
func TestEmptyCommondirRepaired(t *testing.T) {
	t.Parallel()
	r, g := testRepo(t, kinds[0])
	ctx := context.Background()
	dir := t.TempDir()
	half := filepath.Join(dir, "half")
	if err := r.AddWorktree(ctx, half, mustOID(t, g("", "rev-parse", "HEAD")), "test", nil); err != nil {
		t.Fatal(err)
	}
	admin := filepath.Join(r.CommonDir, "worktrees", "half")
	if err := os.WriteFile(filepath.Join(admin, "commondir"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (cmd{dir: r.CommonDir, args: []string{"worktree", "list"}}).run(ctx); err == nil {
		t.Skip("this git lists worktrees with an empty commondir: nothing to repair")
	}
	list, err := r.ListWorktrees(ctx)
	if err != nil {
		t.Fatalf("list with an empty commondir: %v", err)
	}
	if len(list) != 2 || !samePathT(list[1].Path, half) {
		t.Fatalf("listed %+v, want the main worktree and %s", list, half)
	}
	if data, err := os.ReadFile(filepath.Join(admin, "commondir")); err != nil || string(data) != "../..\n" {
		t.Fatalf("commondir now %q, %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(admin, "commondir"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	root, _ := confine.New(dir)
	m, err := r.Managed(half, []confine.Root{root}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(ctx); err != nil {
		t.Fatalf("remove with an empty commondir: %v", err)
	}
	if _, err := os.Stat(admin); !os.IsNotExist(err) {
		t.Fatalf("administrative files left: %v", err)
	}
}

func samePathT(a, b string) bool {
	ra, _ := filepath.EvalSymlinks(a)
	rb, _ := filepath.EvalSymlinks(b)
	return ra == rb
}

// PseudoRefs reads each worktree's own pseudo refs, in one process: present names
// with their object ids, absent ones left out, a linked worktree's apart from the main
// worktree's; a name that is not one is refused before git runs.
func TestPseudoRefs(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r, g := testRepo(t, kind)
			ctx := context.Background()
			head := g("", "rev-parse", "HEAD")
			linked := filepath.Join(t.TempDir(), "linked")
			if err := r.AddWorktree(ctx, linked, mustOID(t, head), "test", nil); err != nil {
				t.Fatal(err)
			}
			g("", "update-ref", "--no-deref", "MERGE_HEAD", head)
			names := []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"}
			got, err := r.Worktree(r.TopLevel).PseudoRefs(ctx, names...)
			if err != nil || len(got) != 1 || got["MERGE_HEAD"] != mustOID(t, head) {
				t.Fatalf("main worktree: %v, %v; want MERGE_HEAD %s alone", got, err, head)
			}
			got, err = r.Worktree(linked).PseudoRefs(ctx, names...)
			if err != nil || len(got) != 0 {
				t.Fatalf("linked worktree: %v, %v; want none (MERGE_HEAD is the main worktree's)", got, err)
			}
			if _, err := r.Worktree(linked).PseudoRefs(ctx, "MERGE_HEAD\nHEAD"); err == nil {
				t.Fatal("a name with a newline: accepted")
			}
		})
	}
}

// HEAD and the pseudo refs come back as object ids: an answer of git's that is none
// (here a git on PATH that prints an option) is an error naming what it printed,
// never a string handed on. Not parallel: it puts that git first on PATH.
func TestHeadAndPseudoRefsAreParsed(t *testing.T) {
	r, g := testRepo(t, kinds[1]) // the CLI: HEAD is git's to answer
	ctx := context.Background()
	g("", "update-ref", "--no-deref", "MERGE_HEAD", g("", "rev-parse", "HEAD"))
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a; do case $a in rev-parse) echo '--output=../README'; exit 0;; cat-file) while read -r l; do echo '--output=../README'; done; exit 0;; esac; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	w := r.Worktree(r.TopLevel)
	if id, err := w.ResolveHead(ctx); err == nil || !strings.Contains(err.Error(), `"--output=../README" is not an object id`) {
		t.Errorf("ResolveHead = %v, %v", id, err)
	}
	if got, err := w.PseudoRefs(ctx, "MERGE_HEAD", "REVERT_HEAD"); err == nil || !strings.Contains(err.Error(), `MERGE_HEAD with "--output=../README" is not an object id`) {
		t.Errorf("PseudoRefs = %v, %v", got, err)
	}
}

// TestManagedChangesWaitOutAKilledGitsLocks: a git killed in a managed worktree (a
// kill sweep's resume) leaves its lock files: the branch's (reset --hard writes HEAD's
// branch to where it is), the worktree's index.lock and HEAD.lock. git never removes
// them, so every later reset or attach of that worktree failed until someone removed
// them by hand. Each is waited out until stale, removed, and the change made.
func TestManagedChangesWaitOutAKilledGitsLocks(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	r.StaleLockAge = 300 * time.Millisecond // this repository's alone
	head := g("", "rev-parse", "HEAD")
	const branch = "refs/heads/atlas/r/node/n"
	if err := r.UpdateRefs(ctx, "test", RefUpdate{Name: branch, New: head}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(confine.RealPath(t.TempDir()), "n")
	if err := r.AddWorktree(ctx, path, mustOID(t, head), "git-atlas run r node n", nil); err != nil {
		t.Fatal(err)
	}
	m, err := r.Managed(path, []confine.Root{mustRoot(t, filepath.Dir(path))}, "")
	if err != nil {
		t.Fatal(err)
	}
	plant := func(locks ...string) {
		t.Helper()
		for _, l := range locks {
			if err := os.WriteFile(l, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	gone := func(locks ...string) {
		t.Helper()
		for _, l := range locks {
			if _, err := os.Stat(l); !os.IsNotExist(err) {
				t.Errorf("the stale lock %s is still there: %v", l, err)
			}
		}
	}
	headLock := filepath.Join(m.admin, "HEAD.lock")
	plant(headLock)
	if err := m.AttachBranch(ctx, branch, "test"); err != nil {
		t.Fatalf("AttachBranch with a killed git's HEAD.lock: %v", err)
	}
	gone(headLock)

	if err := os.WriteFile(filepath.Join(path, "new"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	branchLock := filepath.Join(r.CommonDir, filepath.FromSlash(branch)+".lock")
	indexLock := filepath.Join(m.admin, "index.lock")
	plant(branchLock, indexLock)
	if err := m.ResetClean(ctx); err != nil {
		t.Fatalf("ResetClean with a killed git's locks: %v", err)
	}
	gone(branchLock, indexLock)
	if clean, err := m.Clean(ctx); err != nil || !clean {
		t.Errorf("Clean after ResetClean: %v %v", clean, err)
	}

	// A lock that is not stale (a live git's) is never taken: the change fails once
	// its wait is over.
	plant(indexLock)
	if err := os.Chtimes(indexLock, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := m.ResetClean(ctx); err == nil {
		t.Error("ResetClean went through a lock that is not stale")
	}
	if _, err := os.Stat(indexLock); err != nil {
		t.Errorf("a lock that is not stale was removed: %v", err)
	}
}
