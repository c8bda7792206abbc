//go:build linux

package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRestat: a copy's index refreshed by Restat is one git has nothing to refresh in
// (`git update-index --refresh` leaves its bytes as they are), and a file changed in
// the template since its index was written stays changed in the copy (its entry is
// not made to match); a SHA-256 repository's index is left to git.
func TestRestat(t *testing.T) {
	pinnedTemplates(t)
	tmpl := filepath.Join(t.TempDir(), "tmpl")
	for name, content := range map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "run.sh": "#!/bin/sh\n", "dirty.txt": "was\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmpl, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmpl, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(tmpl, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(tmpl, "link")); err != nil {
		t.Fatal(err)
	}
	Git(t, tmpl, "", "init", "-q", "-b", "main")
	Git(t, tmpl, "", "add", "-A")
	Git(t, tmpl, "", "commit", "-q", "-m", "first")
	if err := os.WriteFile(filepath.Join(tmpl, "dirty.txt"), []byte("now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := CopyTree(repo, tmpl); err != nil {
		t.Fatal(err)
	}
	if got := Git(t, repo, "", "diff-files", "--name-only"); got == "dirty.txt" {
		t.Fatalf("the copy's index matches its files before Restat: the case is not the one meant")
	}
	if ok, err := Restat(repo, tmpl); err != nil || !ok {
		t.Fatalf("Restat = %v, %v", ok, err)
	}
	// diff-files compares stat data without refreshing: only the changed file differs.
	if got := Git(t, repo, "", "diff-files", "--name-only"); got != "dirty.txt" {
		t.Errorf("git diff-files after Restat: %q, want dirty.txt alone", got)
	}
	index := filepath.Join(repo, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	Git(t, repo, "", "update-index", "-q", "--refresh")
	if after, err := os.ReadFile(index); err != nil || !bytes.Equal(after, before) {
		t.Errorf("git refreshed the index Restat wrote (%v)", err)
	}

	sha256 := filepath.Join(t.TempDir(), "sha256")
	if err := os.MkdirAll(sha256, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sha256, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, sha256, "", "init", "-q", "--object-format=sha256")
	Git(t, sha256, "", "add", "-A")
	copied := filepath.Join(t.TempDir(), "copied")
	if err := CopyTree(copied, sha256); err != nil {
		t.Fatal(err)
	}
	if ok, err := Restat(copied, sha256); err != nil || ok {
		t.Errorf("Restat of a SHA-256 index = %v, %v; want false (git refreshes it)", ok, err)
	}
}
