package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// removeTree deletes a tree of files, links and directories, in parallel, and never
// follows a link: the targets of links (to a file, to a directory, and dir itself
// given as a link) are left whole.
func TestRemoveTree(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep.txt")
	if err := os.WriteFile(keep, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tree")
	for i := range 40 {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i), "deeper")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d", j)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(outside, filepath.Join(dir, fmt.Sprintf("d%02d", i), "link-dir")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(keep, filepath.Join(dir, "link-file")); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
	asLink := filepath.Join(t.TempDir(), "as-link")
	if err := os.Symlink(outside, asLink); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(asLink); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "keep\n" {
		t.Fatalf("a link's target was touched: %q, %v", b, err)
	}
}

// TestOpenDirNoLink: removeTree opens each directory it listed without following a
// link, so a directory swapped for a link to elsewhere after it was listed is not
// emptied through the link.
func TestOpenDirNoLink(t *testing.T) {
	outside := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if f, err := openDir(link); err == nil {
		_ = f.Close()
		t.Fatalf("openDir(%s) followed the link to %s", link, outside)
	}
	f, err := openDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}
