package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/ledger"
)

// Strays under the managed root: a directory of a finished run (snapshotted into it,
// then removed), an empty directory of a vanished run (removed), one with files
// (kept), and git's record of a worktree of a vanished run whose directory is gone
// (removed, and its branch with it once nothing checks it out). A directory outside
// the root is never looked at.
func TestGCStrays(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	root := filepath.Join(f.dir, ".git", "atlas", "worktrees")
	mk := func(dir, file string) string {
		p := filepath.Join(root, dir)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if file != "" {
			f.write(p, file, "kept bytes\n")
		}
		return p
	}
	junk := mk("r1/junk", "notes.txt")
	empty := mk("gone/empty", "")
	full := mk("gone/full", "f.txt")
	rec := filepath.Join(root, "gone", "w")
	f.git(f.dir, "worktree", "add", "-q", "-b", "atlas/gone/node/w", rec)
	if err := os.RemoveAll(rec); err != nil {
		t.Fatal(err)
	}
	f.finish("r1")
	f.run("live")
	liveDir := mk("live/x", "x.txt")
	// A branch of the gone run at a commit no other ref holds.
	lost := strings.TrimSpace(f.git(f.dir, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "only here"))
	f.git(f.dir, "branch", "atlas/gone/node/lost", lost)

	rep, _ := f.ops.Audit(f.ctx, AuditRequest{})
	labels := map[string]string{}
	for _, w := range rep.Worktrees {
		labels[w.Path] = strings.Join(w.Labels, ",")
	}
	for _, p := range []string{junk, empty, full} {
		if labels[p] != audit.Stray {
			t.Fatalf("audit labels %s %q, want stray: %v", p, labels[p], labels)
		}
	}
	if !strings.Contains(labels[rec], audit.Stray) || !strings.Contains(labels[rec], audit.Orphaned) {
		t.Fatalf("audit labels the gone record %q", labels[rec])
	}

	plan, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(1 << 40))})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{junk: audit.RemoveStray, empty: audit.RemoveStray, full: audit.RemoveStray, rec: audit.RemoveStray,
		liveDir: audit.KeepStray, "refs/heads/atlas/gone/node/lost": audit.DeleteBranch}
	got := map[string]string{}
	for _, a := range plan.Actions {
		if a.Path != "" {
			got[a.Path] = a.Kind
		}
		if a.Ref == "refs/heads/atlas/gone/node/lost" {
			got[a.Ref] = a.Kind
			if a.Kept != audit.StrayBranchRef("gone", lost) {
				t.Fatalf("the stray branch's deletion keeps it under %q", a.Kept)
			}
		}
	}
	for p, k := range want {
		if got[p] != k {
			t.Fatalf("plan for %s: %q, want %q (%+v)", p, got[p], k, plan.Actions)
		}
	}
	if _, err := os.Stat(junk); err != nil {
		t.Fatal("the plan removed a stray")
	}

	res, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(1 << 40)), Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	var fullKept string
	for _, a := range res.Actions {
		if (a.Kind == audit.RemoveStray || a.Kind == audit.DeleteBranch) && !a.Done {
			t.Fatalf("apply left %+v", a)
		}
		if a.Path == full {
			fullKept = a.Kept
		}
	}
	for _, p := range []string{junk, empty, full} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", p, err)
		}
	}
	// The gone run's stray directory and branch are kept by recovery refs, made
	// before they went.
	if !strings.HasPrefix(fullKept, "refs/atlas/recovery/gone/full-") {
		t.Fatalf("the gone run's stray directory was kept under %q", fullKept)
	}
	if got := f.git(f.dir, "show", fullKept+"^{tree}:f.txt"); got != "kept bytes\n" {
		t.Fatalf("the snapshot of the gone run's stray holds %q", got)
	}
	if got := strings.TrimSpace(f.git(f.dir, "rev-parse", audit.StrayBranchRef("gone", lost))); got != lost {
		t.Fatalf("the stray branch's commit is kept at %q, want %s", got, lost)
	}
	if strings.Contains(f.git(f.dir, "branch", "--list", "atlas/gone/node/lost"), "lost") {
		t.Fatal("the stray branch is still there")
	}
	if _, err := os.Stat(filepath.Join(liveDir, "x.txt")); err != nil {
		t.Fatalf("the live run's stray lost its file: %v", err)
	}
	if strings.Contains(f.git(f.dir, "worktree", "list", "--porcelain"), rec) {
		t.Fatal("git still records the gone worktree")
	}
	snaps := f.load().State.Snapshots
	if len(snaps) != 1 || snaps[0].Node != "junk" {
		t.Fatalf("r1's snapshots: %+v, want the stray junk's", snaps)
	}
}
