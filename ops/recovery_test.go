package ops

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
)

// Recover snapshots the stage's worktree and replays it on a new branch at the
// stage's baseline, in a worktree of its own with the snapshot applied; the original
// worktree is left as it was.
func TestRecoverStageWorktreeIntoReplayWorktree(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	wt := f.add("build", "")
	f.write(wt.Path, "half.txt", "half done\n")
	res, err := f.ops.Recover(f.ctx, RecoverRequest{Run: "r1", Stage: "build", Apply: true, Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Source == nil || *res.Source != recovery.SourceWorktree || res.Checkout != "" || res.Snapshot == nil || !res.Applied ||
		res.Replay.Baseline != f.base || res.Replay.Branch == "" || res.Replay.Worktree == nil || res.Replay.Node == nil {
		t.Fatalf("recover: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(*res.Replay.Worktree, "half.txt")); err != nil || string(b) != "half done\n" {
		t.Fatalf("replay worktree's half.txt: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(wt.Path, "half.txt")); err != nil || string(b) != "half done\n" {
		t.Fatalf("the stage's worktree changed: %q, %v", b, err)
	}
}

// A stage without a worktree ran in the user's checkout: recover snapshots it, read
// only, and says which checkout it was.
func TestRecoverStageOfTheCheckoutLeavesItAlone(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	f.write(f.dir, "README", "edited\n")
	statusBefore := f.git(f.dir, "status", "--porcelain=v2", "--branch")
	res, err := f.ops.Recover(f.ctx, RecoverRequest{Run: "r1", Stage: "build", Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Source == nil || *res.Source != recovery.SourceCheckout || res.Checkout != f.dir || res.Snapshot == nil || res.Replay.Worktree != nil || res.Applied {
		t.Fatalf("recover: %+v", res)
	}
	if after := f.git(f.dir, "status", "--porcelain=v2", "--branch"); after != statusBefore {
		t.Fatalf("the checkout's status changed:\n%s\nthen\n%s", statusBefore, after)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "README")); string(b) != "edited\n" {
		t.Fatalf("README in the checkout: %q", b)
	}
}

func TestRecoverUnknownStageIsNotFound(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	_, err := f.ops.Recover(f.ctx, RecoverRequest{Run: "r1", Stage: "nope", Driver: Driver{Holder: "d1"}})
	if !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("recover --stage nope: %v, want not found", err)
	}
	if list, err := f.ops.RecoveryList(f.ctx, RecoveryListRequest{}); err != nil || len(list.Snapshots) != 0 {
		t.Fatalf("snapshots after a refused recover: %+v, %v", list, err)
	}
}

// Restore refuses a directory that holds anything, and writes nothing there.
func TestRecoveryRestoreIntoNonEmptyDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	wt := f.add("a", "")
	f.write(wt.Path, "notes.txt", "work\n")
	rm, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "a", Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	to := t.TempDir()
	f.write(to, "mine.txt", "keep\n")
	if _, err := f.ops.RecoveryRestore(f.ctx, RecoveryRestoreRequest{Snapshot: rm.Snapshot.ID, To: to}); err == nil {
		t.Fatal("restore into a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(to)
	if len(entries) != 1 {
		t.Fatalf("restore wrote into %s: %v", to, entries)
	}
}

// --patch-out never replaces a file without Force, never writes through a symbolic
// link (even with Force), never goes inside a working tree of the repository (a
// linked one of the user's, one reached through a link to the checkout) or its git
// directory, and is an absolute path; each refusal writes nothing.
func TestRecoverPatchOutIsConfined(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "build")
	wt := f.add("build", "")
	f.write(wt.Path, "half.txt", "half done\n")
	out := t.TempDir()
	existing := filepath.Join(out, "old.patch")
	f.write(out, "old.patch", "keep me\n")
	target := filepath.Join(out, "target.txt")
	f.write(out, "target.txt", "not a patch\n")
	link := filepath.Join(out, "link.patch")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(t.TempDir(), "mine")
	f.git(f.dir, "worktree", "add", "-q", "--detach", mine)
	toCheckout := filepath.Join(t.TempDir(), "to-checkout")
	if err := os.Symlink(f.dir, toCheckout); err != nil {
		t.Fatal(err)
	}
	refs := f.refs()
	for _, c := range []struct {
		path  string
		force bool
	}{
		{existing, false},
		{link, false},
		{link, true},
		{"relative.patch", false},
		{filepath.Join(mine, "x.patch"), false},
		{filepath.Join(toCheckout, "x.patch"), true},
		{filepath.Join(f.dir, ".git", "x.patch"), true},
		{out, true},
	} {
		_, err := f.ops.Recover(f.ctx, RecoverRequest{Run: "r1", Stage: "build", PatchOut: c.path, Force: c.force, Driver: Driver{Holder: "d1"}})
		if !errors.Is(err, fault.ErrUsage) {
			t.Fatalf("--patch-out %s (force %v): %v, want a usage error", c.path, c.force, err)
		}
	}
	if after := f.refs(); after != refs {
		t.Fatalf("a refused recover wrote refs:\n%s", after)
	}
	for p, want := range map[string]string{existing: "keep me\n", target: "not a patch\n"} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Fatalf("%s: %q", p, b)
		}
	}
	for _, p := range []string{filepath.Join(mine, "x.patch"), filepath.Join(f.dir, "x.patch"), filepath.Join(f.dir, ".git", "x.patch")} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s was written", p)
		}
	}
	// With Force, an existing file is replaced by the patch.
	res, err := f.ops.Recover(f.ctx, RecoverRequest{Run: "r1", Stage: "build", PatchOut: existing, Force: true, Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(existing); res.Snapshot == nil || res.Snapshot.Patch != existing || !strings.Contains(string(b), "half.txt") {
		t.Fatalf("--patch-out --force: %+v, %q", res.Snapshot, b)
	}
}
