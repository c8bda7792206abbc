package recovery_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/recovery"
)

// TestMetaTreeAsGitWritesIt holds the meta tree, written in process when there are no
// conflicts and through a temporary index when there are, against the tree git makes
// of the same entries (mktree of manifest.json and conflicts/<stage>/<path>).
func TestMetaTreeAsGitWritesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, noGo := range []bool{false, true} {
		dir := t.TempDir()
		run(t, dir, "init", "-q", "-b", "main")
		run(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
		repo, err := git.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if noGo {
			repo.UseGitForObjects()
		}
		manifest := []byte("{\n  \"schema\": 1\n}\n")
		blob := gitIn(t, dir, string(manifest), "hash-object", "-w", "--stdin")
		got, err := recovery.WriteMetaTree(ctx, repo, manifest, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := mktree(t, dir, fmt.Sprintf("100644 blob %s\tmanifest.json\n", blob))
		if got.String() != want {
			t.Errorf("meta tree without conflicts (go-git %v) = %s, git makes %s", !noGo, got, want)
		}
		if out := gitIn(t, dir, "", "cat-file", "-t", got.String()); out != "tree" {
			t.Errorf("meta tree %s is a %q in the store", got, out)
		}
		// With conflicts: manifest.json and conflicts/<stage>/<path>, nested.
		stage := gitIn(t, dir, "ours\n", "hash-object", "-w", "--stdin")
		got, err = recovery.WriteMetaTree(ctx, repo, manifest, []git.IndexEntry{{Mode: "100644", ID: stage, Stage: 2, Path: "a/b.txt"}})
		if err != nil {
			t.Fatal(err)
		}
		b := mktree(t, dir, fmt.Sprintf("100644 blob %s\tb.txt\n", stage))
		a := mktree(t, dir, fmt.Sprintf("040000 tree %s\ta\n", b))
		two := mktree(t, dir, fmt.Sprintf("040000 tree %s\t2\n", a))
		want = mktree(t, dir, fmt.Sprintf("040000 tree %s\tconflicts\n100644 blob %s\tmanifest.json\n", two, blob))
		if got.String() != want {
			t.Errorf("meta tree with a conflict (go-git %v) = %s, git makes %s", !noGo, got, want)
		}
	}
}

func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, []byte(stdin), args...)
	if err != nil {
		t.Fatalf("git %q: %v", args, err)
	}
	return strings.TrimSpace(out)
}

func mktree(t *testing.T, dir, entries string) string {
	t.Helper()
	return gitIn(t, dir, entries, "mktree")
}

// TestCacheTreeForged: the index tree a snapshot records is the index's, whatever its
// cache tree claims. A cache tree naming a tree with a file more than the index, or a
// tree the store lacks (its checksum made right: a bug's, not a torn file's), is
// read back, found wrong, and git writes the tree.
func TestCacheTreeForged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	write(t, filepath.Join(dir, "d", "b.txt"), "b\n")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "first")
	run(t, dir, "write-tree") // a valid cache tree
	want := gitIn(t, dir, "", "write-tree")
	extra := gitIn(t, dir, "x\n", "hash-object", "-w", "--stdin")
	listing := gitIn(t, dir, "", "ls-tree", want)
	more := mktree(t, dir, listing+"\n100644 blob "+extra+"\textra.txt\n")
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	repo.KeepObjectReader()
	defer repo.Close()
	index := filepath.Join(dir, ".git", "index")
	orig, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := recovery.CaptureIndexTree(ctx, repo, dir); err != nil || got != want {
		t.Fatalf("index tree %s, %v; want %s", got, err, want)
	}
	for _, forged := range []string{more, strings.Repeat("1", 40)} {
		data := bytes.Clone(orig)
		i := bytes.Index(data, []byte("TREE"))
		nl := bytes.IndexByte(data[i:], '\n')
		if i < 0 || nl < 0 {
			t.Fatal("no cache tree")
		}
		id, _ := hex.DecodeString(forged)
		copy(data[i+nl+1:], id)
		sum := sha1.Sum(data[:len(data)-20])
		copy(data[len(data)-20:], sum[:])
		if err := os.WriteFile(index, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := recovery.CaptureIndexTree(ctx, repo, dir)
		switch {
		case forged == more && err == nil && got != want:
			// git's write-tree of the worktree trusts the same cache tree: the read-back
			// of the disk refuses that tree, and the capture fails, nothing recorded.
			t.Errorf("cache tree forged to %s: index tree %s, want %s or a failure", forged, got, want)
		case forged != more && (err != nil || got != want):
			t.Errorf("cache tree forged to %s: index tree %s, %v; want %s", forged, got, err, want)
		}
	}
	// The index tree's own check: a tree with a file the index lacks is not the index's.
	entries := []git.IndexEntry{{Mode: "100644", ID: gitIn(t, dir, "", "rev-parse", "HEAD:a.txt"), Path: "a.txt"},
		{Mode: "100644", ID: gitIn(t, dir, "", "rev-parse", "HEAD:d/b.txt"), Path: "d/b.txt"}}
	if err := recovery.CheckIndexTree(ctx, repo, mustOID(t, want), entries, nil); err != nil {
		t.Errorf("the index's own tree: %v", err)
	}
	if err := recovery.CheckIndexTree(ctx, repo, mustOID(t, more), entries, nil); err == nil {
		t.Error("a tree with a file more than the index passed as the index's")
	}
}
