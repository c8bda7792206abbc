package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/gitstate"
)

// Strays under the managed root: a directory of a finished run (snapshotted into it,
// then removed), an empty directory of a vanished run (removed), one with files
// (kept), and git's record of a worktree of a vanished run whose directory is gone
// (removed, and its branch with it once nothing checks it out). A directory outside
// the root is never looked at.
func TestGCStrays(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, gitstate.KindSingle, "main")
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

	plan, err := f.ops.GC(f.ctx, GCRequest{Before: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{junk: audit.RemoveStray, empty: audit.RemoveStray, full: audit.KeepStray, rec: audit.RemoveStray}
	got := map[string]string{}
	for _, a := range plan.Actions {
		if a.Path != "" {
			got[a.Path] = a.Kind
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

	res, err := f.ops.GC(f.ctx, GCRequest{Before: 1 << 40, Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Actions {
		if a.Kind == audit.RemoveStray && !a.Done {
			t.Fatalf("apply left %+v", a)
		}
	}
	for _, p := range []string{junk, empty} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(full, "f.txt")); err != nil {
		t.Fatalf("the kept stray lost its file: %v", err)
	}
	if strings.Contains(f.git(f.dir, "worktree", "list", "--porcelain"), rec) {
		t.Fatal("git still records the gone worktree")
	}
	snaps := f.load().State.Snapshots
	if len(snaps) != 1 || snaps[0].Node != "junk" {
		t.Fatalf("r1's snapshots: %+v, want the stray junk's", snaps)
	}
}
