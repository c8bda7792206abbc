package git

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// WriteCache replaces the file whole and removes the temporary files of writers that
// died before renaming theirs, never a live writer's.
func TestWriteCache(t *testing.T) {
	r := &Repository{CommonDir: t.TempDir()}
	if _, err := r.ReadCache("c"); !os.IsNotExist(err) {
		t.Fatalf("ReadCache of nothing: %v", err)
	}
	if err := r.WriteCache("c", []byte("one")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(r.CachePath("c"))
	dead, live := filepath.Join(dir, "c-1.tmp"), filepath.Join(dir, "c-2.tmp")
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dead, old, old); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCache("c", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if data, err := r.ReadCache("c"); err != nil || string(data) != "two" {
		t.Fatalf("ReadCache = %q, %v", data, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead writer's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "c-*.tmp")); len(left) != 1 {
		t.Errorf("temporary files: %v, want only the live one", left)
	}
	if fi, err := os.Stat(r.CachePath("c")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("cache mode: %v, %v", fi.Mode(), err)
	}
}
