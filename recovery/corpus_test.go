package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/recovery"
)

// mutation makes one kind of dirty state in a worktree, on paths no other mutation
// touches, so that all of them can be applied together.
type mutation struct {
	name  string
	heavy bool // skipped with -short
	// first mutations commit or merge, which wants a clean index: they run first.
	first bool
	apply func(t testing.TB, f *fixture, wt string)
}

func symlink(t testing.TB, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func remove(t testing.TB, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

var corpus = []mutation{
	{name: "unreachable-commits", first: true, apply: func(t testing.TB, f *fixture, wt string) {
		run(t, wt, "checkout", "-q", "--detach")
		for i := 1; i <= 2; i++ {
			write(t, filepath.Join(wt, fmt.Sprintf("detached-%d.txt", i)), fmt.Sprintf("only HEAD reaches this %d\n", i))
			run(t, wt, "add", "-A")
			run(t, wt, "commit", "-q", "-m", fmt.Sprintf("detached %d", i))
		}
	}},
	{name: "unmerged", first: true, apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, "conflict.txt"), "ours\n")
		write(t, filepath.Join(wt, "moddel.txt"), "ours changed\n")
		write(t, filepath.Join(wt, "addadd.txt"), "ours add\n")
		run(t, wt, "add", "conflict.txt", "moddel.txt", "addadd.txt")
		run(t, wt, "commit", "-q", "-m", "ours")
		if _, err := runErr(wt, nil, "merge", "--no-edit", "theirs"); err == nil {
			t.Fatal("merge did not conflict")
		}
		// A resolution in progress: the worktree file edited, the index still unmerged.
		write(t, filepath.Join(wt, "conflict.txt"), "half resolved\n")
	}},
	// Operations in progress with nothing else changed (a cherry-pick or revert
	// --no-commit of a change already there): only their pseudo refs say so, and they
	// are kept. (MERGE_HEAD comes with "unmerged".)
	{name: "pending-ref", apply: func(t testing.TB, f *fixture, wt string) {
		run(t, wt, "update-ref", "--no-deref", "CHERRY_PICK_HEAD", "HEAD")
		run(t, wt, "update-ref", "--no-deref", "REVERT_HEAD", "HEAD")
	}},
	{name: "staged", apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, "staged.txt"), "staged change\n")
		write(t, filepath.Join(wt, "added.txt"), "new and staged\n")
		run(t, wt, "add", "staged.txt", "added.txt")
	}},
	{name: "unstaged", apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, "unstaged.txt"), "unstaged change\n")
	}},
	{name: "partially-staged", apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, "partial.txt"), "partial\nstaged line\n")
		run(t, wt, "add", "partial.txt")
		write(t, filepath.Join(wt, "partial.txt"), "partial\nstaged line\nunstaged line\n")
	}},
	{name: "deletions", apply: func(t testing.TB, f *fixture, wt string) {
		remove(t, filepath.Join(wt, "del-unstaged.txt"))
		run(t, wt, "rm", "-q", "del-staged.txt")
	}},
	{name: "modes", apply: func(t testing.TB, f *fixture, wt string) {
		if err := os.Chmod(filepath.Join(wt, "mode.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(wt, "mode-staged.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, wt, "add", "mode-staged.sh")
		if err := os.Chmod(filepath.Join(wt, "exec.sh"), 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "symlinks", apply: func(t testing.TB, f *fixture, wt string) {
		symlink(t, "staged.txt", filepath.Join(wt, "link-new"))
		symlink(t, "../nowhere", filepath.Join(wt, "link-dangling"))
		remove(t, filepath.Join(wt, "link-old"))
		symlink(t, "unstaged.txt", filepath.Join(wt, "link-old"))
	}},
	{name: "binary", apply: func(t testing.TB, f *fixture, wt string) {
		if err := os.WriteFile(filepath.Join(wt, "bin.dat"), randomBytes(2, 5000), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, "bin-new.dat"), append([]byte{0, 1, 2, 0}, randomBytes(3, 3000)...), 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "untracked", apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, "newdir", "sub", "file.txt"), "untracked deep\n")
		write(t, filepath.Join(wt, "empty.txt"), "")
		if err := os.WriteFile(filepath.Join(wt, "run-me.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "odd-names", apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, nameSpace), "space changed\n")
		write(t, filepath.Join(wt, nameNewline), "newline changed\n")
		run(t, wt, "add", "--", nameNewline)
		remove(t, filepath.Join(wt, nameBytes))
		write(t, filepath.Join(wt, "dir with space", "\xe9t\xe9\nnew.txt"), "latin-1 and a newline\n")
		write(t, filepath.Join(wt, "quote\"and\\back*[x].txt"), "glob characters\n")
	}},
	{name: "file-symlink-swaps", apply: func(t testing.TB, f *fixture, wt string) {
		remove(t, filepath.Join(wt, "f2l.txt"))
		symlink(t, "staged.txt", filepath.Join(wt, "f2l.txt"))
		remove(t, filepath.Join(wt, "l2f"))
		write(t, filepath.Join(wt, "l2f"), "a link became a file\n")
	}},
	{name: "file-directory-swaps", apply: func(t testing.TB, f *fixture, wt string) {
		remove(t, filepath.Join(wt, "f2d"))
		write(t, filepath.Join(wt, "f2d", "inner.txt"), "a file became a directory\n")
		remove(t, filepath.Join(wt, "d2f"))
		write(t, filepath.Join(wt, "d2f"), "a directory became a file\n")
	}},
	{name: "assume-unchanged", apply: func(t testing.TB, f *fixture, wt string) {
		run(t, wt, "update-index", "--assume-unchanged", "assumed.txt")
		write(t, filepath.Join(wt, "assumed.txt"), "changed behind git's back\n")
	}},
	// The skip-worktree idiom for a local edit of a tracked file (status does not see
	// it), beside a sparse entry whose file is absent on purpose.
	{name: "skip-worktree", apply: func(t testing.TB, f *fixture, wt string) {
		run(t, wt, "update-index", "--skip-worktree", "skipped.txt", "sparse.txt")
		write(t, filepath.Join(wt, "skipped.txt"), "local edit status does not see\n")
		remove(t, filepath.Join(wt, "sparse.txt"))
	}},
	{name: "ignored", apply: func(t testing.TB, f *fixture, wt string) {
		write(t, filepath.Join(wt, "build", "out.o"), "object\n")
		write(t, filepath.Join(wt, "build", "deep", "x.o"), "deep object\n")
		write(t, filepath.Join(wt, "debug.log"), "log\n")
	}},
	{name: "big-binary", heavy: true, apply: func(t testing.TB, f *fixture, wt string) {
		if err := os.WriteFile(filepath.Join(wt, "big.bin"), randomBytes(4, testenv.Rounds(8<<20, 24<<20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "many-files", heavy: true, apply: func(t testing.TB, f *fixture, wt string) {
		for i := range manyFiles {
			p := filepath.Join(wt, "many", fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.txt", i))
			if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d changed\n", i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}},
}

// aloneByDefault names the states TestCorpus takes through alone without the sweeps
// build tag: those a plain status does not report, so that removal must find them by
// other means (commits only HEAD reaches, pseudo refs of an operation in progress,
// files git was told not to look at, ignored files).
var aloneByDefault = map[string]bool{
	"unreachable-commits": true, "pending-ref": true, "assume-unchanged": true, "skip-worktree": true, "ignored": true,
}

// manyFiles is the size of the corpus's big tree: 2000 files in the full sweeps, 300
// in the README's test command: the same code paths (the verifier hashes batches of
// 64 files on every core; 300 files are five batches, several for each core of a
// small machine), a sixth of the git work.
var manyFiles = testenv.Rounds(300, 2000)

// TestCorpus takes every dirty state through snapshot, remove and restore, each alone
// and all together: the restored files are byte-, mode- and link-identical, the
// restored worktree has the same HEAD and index (staged/unstaged split, conflict
// stages), and the patch applies to the baseline and gives the snapshot's tree.
// Without the sweeps build tag every state goes through together, and alone only
// those git's status does not show (aloneByDefault): alone, each is the only thing
// that makes the worktree worth a snapshot, which all together cannot prove. The
// sweeps build tag takes every state through alone as well.
func TestCorpus(t *testing.T) {
	t.Parallel() // its own repository; no package globals, no Setenv
	for _, m := range corpus {
		if m.heavy && testing.Short() {
			continue
		}
		if !testenv.Long() && !aloneByDefault[m.name] {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // a fixture each
			many := 0
			if m.name == "many-files" {
				many = manyFiles
			}
			f := newFixture(t, many)
			wt := f.worktree("n")
			m.apply(t, f, wt)
			roundTrip(t, f, "n", wt, recovery.Options{})
		})
	}
	t.Run("all-together", func(t *testing.T) {
		t.Parallel()
		many := 0
		if !testing.Short() {
			many = manyFiles
		}
		f := newFixture(t, many)
		wt := f.worktree("n")
		for _, first := range []bool{true, false} {
			for _, m := range corpus {
				if m.first == first && (!m.heavy || !testing.Short()) {
					m.apply(t, f, wt)
				}
			}
		}
		roundTrip(t, f, "n", wt, recovery.Options{})
	})
	t.Run("ignored-included", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 0)
		wt := f.worktree("n")
		for _, m := range corpus {
			if m.name == "ignored" || m.name == "untracked" {
				m.apply(t, f, wt)
			}
		}
		write(t, filepath.Join(wt, "zz-too-big.log"), strings.Repeat("x", 100))
		res := roundTrip(t, f, "n", wt, recovery.Options{IncludeIgnored: true, IgnoredCap: 40})
		var listed, included int
		for _, e := range res.Manifest.Ignored {
			listed += e.Files
			included += e.Included
		}
		if listed != 4 || included != 3 {
			t.Errorf("ignored: %d listed, %d included; want 4 and 3 (the 100-byte log is over the cap): %+v", listed, included, res.Manifest.Ignored)
		}
	})
}

// roundTrip checks one dirty worktree end to end and returns its snapshot.
func roundTrip(t *testing.T, f *fixture, node, wt string, opt recovery.Options) *recovery.Result {
	t.Helper()
	return roundTripWith(t, f, node, wt, opt, trip{})
}

// trip varies roundTrip.
type trip struct {
	// sameStatus is false when git's status of the dirty worktree depends on cached
	// stat data (a filter added after checkout: a racily clean file is cleaned anew,
	// an old one is not), so a restored copy cannot be held to it; files, HEAD and
	// index are still compared.
	statusVaries bool
}

func roundTripWith(t *testing.T, f *fixture, node, wt string, opt recovery.Options, how trip) *recovery.Result {
	t.Helper()
	ctx := context.Background()
	// As the command line: statuses kept, so the snapshot stages what Assess's named.
	f.repo.KeepWorktrees()
	before := capture(t, wt)
	bytesBefore := exact(t, wt)
	// Every state of the corpus has something to lose: removal must see it.
	if risk, err := recovery.Assess(ctx, f.repo, wt); err != nil || !risk.Any() {
		t.Fatalf("assess: %+v, %v", risk, err)
	}

	// A snapshot alone changes nothing: not the index bytes, not a file, not an mtime.
	res, err := recovery.Snapshot(ctx, f.store, recovery.Target{Run: f.run, Node: node, Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base), Source: recovery.SourceWorktree}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if after := exact(t, wt); after != bytesBefore {
		t.Fatalf("the snapshot changed the worktree")
	}
	if len(before.Ignored) > 0 && len(res.Manifest.Ignored) == 0 {
		t.Errorf("ignored files not listed in the manifest")
	}

	// Remove: the same state reuses the snapshot just taken.
	removed, err := recovery.PreserveAndRemove(ctx, f.store, f.run, node, opt)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case removed.Snapshot == nil && (removed.Risk.Dirty || removed.Risk.Ignored || removed.Risk.Unreachable):
		t.Fatalf("removed with %v and no snapshot", removed.Risk.Reasons)
	case removed.Snapshot == nil:
		// Only commits HEAD alone reached were at risk, and the snapshot above pins
		// them now: nothing to lose (TestRemoveUnreachable covers it without).
	case !removed.Snapshot.Reused || removed.Snapshot.Rec.ID != res.Rec.ID:
		t.Fatalf("remove did not reuse snapshot %s: %+v", res.Rec.ID, removed.Snapshot)
	}
	if _, err := os.Lstat(wt); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
	r, err := f.store.Load(ctx, f.run)
	if err != nil {
		t.Fatal(err)
	}
	if r.State.Worktree(node) != nil || len(r.State.Snapshots) != 1 {
		t.Fatalf("ledger: worktree %+v, snapshots %+v", r.State.Worktree(node), r.State.Snapshots)
	}
	// Pinned: nothing of it is lost to gc, not even commits only HEAD reached. These
	// two delete at least what gc --prune=now would: every reflog entry (gc expires
	// those older than its limits) and every unreachable object (the fixture's
	// objects are all loose, so none hides in a pack). Two processes instead of gc's
	// eight; TestRemoveUnreachableHead runs gc itself.
	run(t, f.dir, "reflog", "expire", "--expire=now", "--all")
	run(t, f.dir, "prune", "--expire=now")

	want := before.withoutIgnored()
	if opt.IncludeIgnored {
		want = map[string]string{}
		for k, v := range before.Files {
			if !before.Ignored[k] || !strings.HasPrefix(k, "zz-") {
				want[k] = v
			}
		}
	}
	files := filepath.Join(t.TempDir(), "files")
	if _, err := recovery.Restore(ctx, f.repo, res.Rec.Commit, files, false); err != nil {
		t.Fatal(err)
	}
	if d := diffMaps(want, fileMap(t, files, false)); d != "" {
		t.Fatalf("restored files differ:\n%s", d)
	}

	again := filepath.Join(t.TempDir(), "worktree")
	if _, err := recovery.Restore(ctx, f.repo, res.Rec.Commit, again, true); err != nil {
		t.Fatal(err)
	}
	after := capture(t, again)
	if d := diffMaps(want, after.Files); d != "" {
		t.Fatalf("restored worktree files differ:\n%s", d)
	}
	if after.Head != before.Head {
		t.Errorf("HEAD: %q, want %q", after.Head, before.Head)
	}
	if after.Pending != before.Pending {
		t.Errorf("operations in progress: %q, want %q", after.Pending, before.Pending)
	}
	if after.Index != before.Index {
		t.Errorf("index differs:\nwant %q\ngot  %q", trunc(before.Index), trunc(after.Index))
	}
	if after.Status != before.Status && !how.statusVaries {
		t.Errorf("status differs:\nwant %q\ngot  %q", trunc(before.Status), trunc(after.Status))
	}
	run(t, f.dir, "worktree", "remove", "--force", "--force", again)

	checkPatch(t, f, res)
	return res
}

// checkPatch applies the exported patch to the baseline in a scratch worktree, under
// the options a consumer would use, and checks it gives the snapshot's tree.
func checkPatch(t *testing.T, f *fixture, res *recovery.Result) {
	t.Helper()
	if info, err := os.Stat(res.Rec.Patch); err != nil {
		t.Fatal(err)
	} else if info.Size() == 0 {
		if base := strings.TrimSpace(run(t, f.dir, "rev-parse", f.base+"^{tree}")); base != res.Manifest.Tree.String() {
			t.Fatalf("empty patch, but the snapshot's tree %s is not the baseline's %s", res.Manifest.Tree.String(), base)
		}
		return
	}
	scratch := filepath.Join(t.TempDir(), "scratch")
	run(t, f.dir, "worktree", "add", "-q", "--detach", scratch, f.base)
	defer run(t, f.dir, "worktree", "remove", "--force", scratch)
	run(t, scratch, "apply", "--check", "--whitespace=nowarn", res.Rec.Patch)
	run(t, scratch, "apply", "--index", "--whitespace=nowarn", res.Rec.Patch)
	if got := strings.TrimSpace(run(t, scratch, "write-tree")); got != res.Manifest.Tree.String() {
		t.Errorf("patch applied to the baseline gives tree %s, the snapshot has %s", got, res.Manifest.Tree.String())
	}
}

func trunc(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// TestStatusNamesWhatAddStages: the first capture stages only the paths git's status
// named (and those status does not look at), not the whole worktree. Over every dirty
// state of the corpus at once it gives add -A's tree, read back equal to the disk on
// the first try; a path written after the status is caught by the read-back, and the
// snapshot, taken again, holds it.
func TestStatusNamesWhatAddStages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	wt := f.worktree("n")
	for _, first := range []bool{true, false} {
		for _, m := range corpus {
			if m.first == first && !m.heavy {
				m.apply(t, f, wt)
			}
		}
	}
	status, err := f.repo.Worktree(wt).StatusNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named, err := recovery.CaptureOnce(ctx, f.repo, wt, status)
	if err != nil {
		t.Fatalf("the capture staging what status named: %v", err)
	}
	all, err := recovery.CaptureOnce(ctx, f.repo, wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if named != all {
		t.Fatalf("staging what status named gave tree %s, add -A %s", named, all)
	}

	write(t, filepath.Join(wt, "late", "after-status.txt"), "written after the status\n")
	write(t, filepath.Join(wt, "unstaged.txt"), "changed after the status\n")
	if _, err := recovery.CaptureOnce(ctx, f.repo, wt, status); !errors.Is(err, recovery.ErrChanged) {
		t.Fatalf("a stale status: %v, want the read-back to fail", err)
	}
	f.repo.KeepWorktrees()
	keep := f.repo.Worktree(wt)
	if _, err := keep.StatusNow(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wt, "late", "after-kept-status.txt"), "written after the kept status\n")
	res, err := recovery.Snapshot(ctx, f.store, recovery.Target{Run: f.run, Node: "n", Stage: "code", Path: wt, Baseline: testenv.HexOID(f.base), Source: recovery.SourceWorktree}, recovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"late/after-status.txt": "written after the status\n", "late/after-kept-status.txt": "written after the kept status\n",
		"unstaged.txt": "changed after the status\n"} {
		if got := run(t, f.dir, "cat-file", "blob", res.Rec.Commit.String()+":"+p); got != want {
			t.Errorf("snapshot's %s: %q, want %q", p, got, want)
		}
	}
}
