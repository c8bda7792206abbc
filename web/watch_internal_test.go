package web

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatcherSeesRefDirectories: a new run ref, a removed one and a packed-refs
// rewrite each change the watcher's snapshot; the per-run pin directories are not
// looked at (their number grows with the runs).
func TestWatcherSeesRefDirectories(t *testing.T) {
	t.Parallel()
	common := t.TempDir()
	runs := filepath.Join(common, "refs", "atlas", "runs")
	pins := filepath.Join(common, "refs", "atlas", "pins", "r1", "stage")
	for _, d := range []string{runs, pins} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := newWatcher(common, time.Second)
	before := w.snapshot(nil)
	if _, ok := before[pins]; ok {
		t.Errorf("the watcher looks at %s", pins)
	}
	if _, ok := before[runs]; !ok {
		t.Fatalf("the watcher does not look at %s: %v", runs, before)
	}
	if again := w.snapshot(before); changed(before, again) {
		t.Fatal("a snapshot of nothing changed differs")
	}
	// Directory times have a coarse resolution on some file systems: the test sets
	// them, as a ref update would move them.
	step := func(what string, f func() error, dir string) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		later := before[dir].Add(time.Hour)
		if before[dir].IsZero() {
			later = time.Now().Add(time.Hour)
		}
		_ = os.Chtimes(dir, later, later)
		now := w.snapshot(before)
		if !changed(before, now) {
			t.Errorf("%s: no change seen", what)
		}
		before = now
	}
	step("a new run", func() error { return os.WriteFile(filepath.Join(runs, "r2"), []byte("x\n"), 0o644) }, runs)
	step("a removed run", func() error { return os.Remove(filepath.Join(runs, "r2")) }, runs)
	packed := filepath.Join(common, "packed-refs")
	step("packed-refs", func() error { return os.WriteFile(packed, []byte("# pack-refs\n"), 0o644) }, packed)
	nested := filepath.Join(runs, "team")
	step("a new directory under runs", func() error { return os.Mkdir(nested, 0o755) }, runs)
	step("a ref in it", func() error { return os.WriteFile(filepath.Join(nested, "r3"), []byte("x\n"), 0o644) }, nested)
}
