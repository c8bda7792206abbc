package ops

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/ledger"
)

// noise is n bytes no compressor shrinks.
func noise(n int) string {
	var b []byte
	for s := sha256.Sum256([]byte("seed")); len(b) < n; s = sha256.Sum256(s[:]) {
		b = append(b, s[:]...)
	}
	return string(b[:n])
}

// du counts a file hard-linked into two worktrees in each one's bytes and in neither
// one's unshared bytes; a snapshot's bytes are those of the objects no other ref
// reaches, so two snapshots of the same files each hold little alone, and the run's
// snapshots together hold the files once.
func TestDuWorktreesAndSnapshots(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	a, b := f.add("a", ""), f.add("b", "")
	f.write(a.Path, "big.bin", noise(8000))
	if err := os.Link(filepath.Join(a.Path, "big.bin"), filepath.Join(b.Path, "big.bin")); err != nil {
		t.Skip("no hard links here:", err)
	}
	f.write(a.Path, "own.txt", noise(300))
	rep, err := f.ops.Du(f.ctx, DuRequest{Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	wt := map[string]audit.DuWorktree{}
	for _, w := range rep.Runs[0].Worktrees {
		wt[w.Node] = w
	}
	if wt["a"].Bytes < 8300 || wt["a"].Bytes-wt["a"].Unshared != 8000 || wt["b"].Bytes-wt["b"].Unshared != 8000 || rep.Totals.WorktreeBytes != wt["a"].Bytes+wt["b"].Bytes {
		t.Fatalf("du: %+v", rep)
	}

	// Two snapshots of b holding the same 6000 bytes.
	if err := os.Remove(filepath.Join(b.Path, "big.bin")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if i == 1 {
			b = f.add("b", "")
			f.write(b.Path, "more.txt", "more\n") // not the same snapshot again
		}
		f.write(b.Path, "secret.txt", noise(6000))
		if _, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "b", Driver: d1}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err = f.ops.Du(f.ctx, DuRequest{})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if len(r.Snapshots) != 2 || r.SnapshotBytes < 6000 || rep.Totals.SnapshotBytes != r.SnapshotBytes {
		t.Fatalf("du after two snapshots: %+v", rep)
	}
	for _, s := range r.Snapshots {
		if s.Bytes <= 0 || s.Bytes >= 6000 {
			t.Fatalf("snapshot %s holds %d bytes alone, want its commit and trees only (the files are the other's too)", s.ID, s.Bytes)
		}
	}
}
