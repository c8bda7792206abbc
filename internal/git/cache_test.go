package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// WriteCache replaces the file whole and removes the temporary files of writers that
// died before renaming theirs, never a live writer's.
func TestWriteCache(t *testing.T) {
	t.Parallel()
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

// Listing a prefix with no refs reads the files alone; refs loose, packed, or behind
// a packed-refs too large to search are all found.
func TestNoRefsUnder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "a"}} {
		mustGit(t, dir, append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=c", "GIT_COMMITTER_EMAIL=c@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir), "", args...)
	}
	repo, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		refs, err := repo.ListRefs(ctx, "refs/atlas/runs")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := repo.RefMessages(ctx, "refs/atlas/runs", func(RefMessage) { n++ }); err != nil {
			t.Fatal(err)
		}
		if n != len(refs) {
			t.Fatalf("RefMessages found %d, ListRefs %d", n, len(refs))
		}
		return n
	}
	if n := count(); n != 0 || !repo.noRefsUnder("refs/atlas/runs") {
		t.Fatalf("no runs: %d", n)
	}
	head, _ := repo.ReadRef(ctx, "refs/heads/main")
	if err := repo.UpdateRefs(ctx, "t", RefUpdate{Name: "refs/atlas/runs/a", New: head, Old: ZeroID}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("a loose run: %d", n)
	}
	if out, err := repo.git(ctx, "pack-refs", "--all"); err != nil {
		t.Fatalf("pack-refs: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(repo.CommonDir, "refs", "atlas", "runs")); err == nil {
		t.Skip("pack-refs left the directory: the packed case is not reached")
	}
	if n := count(); n != 1 {
		t.Fatalf("a packed run: %d", n)
	}
	// A ref named whole (a remote write lists the run's own refs by name) is found
	// packed too, not only the refs under a prefix.
	if repo.noRefsUnder("refs/atlas/runs/a") {
		t.Fatal("a packed ref named whole was taken for no ref")
	}
	if refs, err := repo.ListRefs(ctx, "refs/atlas/runs/a"); err != nil || len(refs) != 1 {
		t.Fatalf("ListRefs of a packed ref by name: %v %v", refs, err)
	}
	packed := filepath.Join(repo.CommonDir, "packed-refs")
	data, _ := os.ReadFile(packed)
	var big strings.Builder // over the 1 MiB searched, the run last
	big.WriteString("# pack-refs with: peeled\n")
	for i := 0; big.Len() < 1<<20+1000; i++ {
		fmt.Fprintf(&big, "%s refs/tags/pad-%06d\n", head, i)
	}
	_, rest, _ := strings.Cut(string(data), "\n")
	big.WriteString(rest)
	if err := os.WriteFile(packed, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if repo.noRefsUnder("refs/atlas/runs") {
		t.Fatal("a large packed-refs was searched")
	}
	if n := count(); n != 1 {
		t.Fatalf("a run in a large packed-refs: %d", n)
	}
}
