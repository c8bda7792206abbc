package recovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
)

// The verifier is what stands between a faulty capture and a deleted worktree: any
// difference between the tree and the disk must fail it.
func TestVerifierCatchesEveryDifference(t *testing.T) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	cases := map[string]func(dir string) error{
		"modified":  func(dir string) error { return os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644) },
		"same size": func(dir string) error { return os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A\n"), 0o644) },
		"untracked": func(dir string) error { return os.WriteFile(filepath.Join(dir, "new.txt"), nil, 0o644) },
		"deleted":   func(dir string) error { return os.Remove(filepath.Join(dir, "a.txt")) },
		"exec bit":  func(dir string) error { return os.Chmod(filepath.Join(dir, "a.txt"), 0o755) },
		"link retargeted": func(dir string) error {
			_ = os.Remove(filepath.Join(dir, "l"))
			return os.Symlink("b.txt", filepath.Join(dir, "l"))
		},
		"link became file": func(dir string) error {
			_ = os.Remove(filepath.Join(dir, "l"))
			return os.WriteFile(filepath.Join(dir, "l"), []byte("a.txt"), 0o644)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			v, tree := verifiedDir(t)
			if err := change(v.root); err != nil {
				t.Fatal(err)
			}
			if _, err := v.check(context.Background(), tree); !errors.Is(err, ErrChanged) {
				t.Fatalf("want ErrChanged, got %v", err)
			}
		})
	}
	t.Run("a restore that differs is not a changing worktree", func(t *testing.T) {
		v, tree := verifiedDir(t)
		v.restored = true
		if err := os.WriteFile(filepath.Join(v.root, "a.txt"), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := v.check(context.Background(), tree)
		if err == nil || errors.Is(err, ErrChanged) || strings.Contains(err.Error(), "during the snapshot") {
			t.Fatalf("want the restore's own error, got %v", err)
		}
	})
	// A tree whose blob is not in the object store is no snapshot: reported as such
	// (not as a changing worktree), even when a file changed as well.
	t.Run("a blob missing from the object store", func(t *testing.T) {
		v, tree := verifiedDir(t)
		id := testenv.Git(t, v.root, "", "rev-parse", tree+":b.txt")
		if err := os.Remove(filepath.Join(v.root, ".git", "objects", id[:2], id[2:])); err != nil {
			t.Fatal(err)
		}
		for _, alsoChanged := range []bool{false, true} {
			if alsoChanged {
				if err := os.WriteFile(filepath.Join(v.root, "a.txt"), []byte("changed\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := v.check(context.Background(), tree)
			if err == nil || errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "missing objects") {
				t.Fatalf("a file changed too = %v: want the missing object reported, got %v", alsoChanged, err)
			}
		}
	})
	// The walk lists and hashes on every core, but the difference it reports is always
	// the first a walk of one directory after another meets.
	t.Run("the first difference in walk order is the one reported", func(t *testing.T) {
		v, tree := verifiedDir(t)
		for _, p := range []string{"z/new.txt", "d/e/new.txt", "d.txt.new", "d/new.txt"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(v.root, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(v.root, p), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for range 20 {
			_, err := v.check(context.Background(), tree)
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), `"d/e/new.txt" is on disk`) {
				t.Fatalf("want d/e/new.txt reported, got %v", err)
			}
		}
	})
	// A directory of more files than one worker hashes in a go: its other batches are
	// hashed by the other workers, and a change in any of them is seen.
	t.Run("a directory of several batches", func(t *testing.T) {
		const n = 3*hashBatch + 10
		v, tree := verifiedDirWith(t, func(dir string) {
			if err := os.Mkdir(filepath.Join(dir, "many"), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if err := os.WriteFile(filepath.Join(dir, "many", fmt.Sprintf("f%04d", i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
		for _, i := range []int{0, hashBatch + 1, n - 1} {
			p := filepath.Join(v.root, "many", fmt.Sprintf("f%04d", i))
			if err := os.WriteFile(p, []byte("changed"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := v.check(context.Background(), tree)
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), fmt.Sprintf("many/f%04d", i)) {
				t.Fatalf("file %d changed: want it reported, got %v", i, err)
			}
			if err := os.WriteFile(p, []byte(fmt.Sprint(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("ignored files are allowed", func(t *testing.T) {
		v, tree := verifiedDir(t)
		if err := os.WriteFile(filepath.Join(v.root, "x.log"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		v.addIgnored("x.log", false)
		if _, err := v.check(context.Background(), tree); err != nil {
			t.Fatal(err)
		}
	})
}

// verifiedDir makes a worktree, snapshots its tree, and checks the unchanged disk
// passes.
func verifiedDir(t *testing.T) (*verifier, string) {
	t.Helper()
	return verifiedDirWith(t, func(string) {})
}

// verifiedDirWith is verifiedDir with more files, written by add into the directory.
func verifiedDirWith(t *testing.T, add func(dir string)) (*verifier, string) {
	t.Helper()
	dir := t.TempDir()
	testenv.Git(t, dir, "", "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	add(dir)
	ctx := context.Background()
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wt := repo.Worktree(dir)
	idx, err := wt.CopyIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	treeID, err := idx.WriteTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tree := treeID.String()
	v := &verifier{repo: repo, wt: wt, root: dir}
	if _, err := v.check(ctx, tree); err != nil {
		t.Fatalf("unchanged directory fails: %v", err)
	}
	return v, tree
}

// TestVerifierTrustsOnlyCleanStatData: a file whose stat data are still what the
// worktree's index recorded, before the index was written, is its blob and is not read
// again; a changed file is hashed, and so is a stat-clean file whose bytes are not its
// blob's (checked out through a conversion that is off now), which fails the check.
func TestVerifierTrustsOnlyCleanStatData(t *testing.T) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	dir := t.TempDir()
	git1 := func(args ...string) {
		t.Helper()
		testenv.Git(t, dir, "", args...)
	}
	git1("init", "-q")
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git1("add", "-A")
	git1("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "files")
	// c.txt checked out again with CRLF line endings: its index entry's stat data are
	// those of the CRLF file, its blob the LF text.
	if err := os.Remove(filepath.Join(dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	git1("-c", "core.autocrlf=true", "checkout", "--", "c.txt")
	// a.txt changes (another size: a change within the same clock tick shows too).
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The index written a second later than it was: no entry is racily clean.
	index := filepath.Join(dir, ".git", "index")
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(index, later, later); err != nil {
		t.Fatal(err)
	}
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wt := repo.Worktree(dir)
	idx, err := wt.CopyIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	stat := idx.StatData()
	if err := idx.AddAll(ctx); err != nil { // core.autocrlf is off: c.txt is stat-clean, not added
		t.Fatal(err)
	}
	tree, err := idx.WriteTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := &verifier{repo: repo, wt: wt, root: dir, stat: stat}
	ti, blobs, err := v.readTree(ctx, tree.String())
	if err != nil {
		t.Fatal(err)
	}
	w, err := v.walk(ti, v.rules(ctx))
	if err != nil {
		t.Fatal(err)
	}
	byStat := map[string]bool{}
	for _, c := range w.checks {
		byStat[c.rel] = c.byStat
	}
	if !byStat["b.txt"] || byStat["a.txt"] {
		t.Errorf("matched by stat data: %v; want b.txt (unchanged) and not a.txt (changed)", byStat)
	}
	if !byStat["c.txt"] {
		t.Errorf("c.txt is stat-clean: want it matched by stat data, then hashed for its size")
	}
	_, err = v.check(ctx, tree.String())
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "c.txt") {
		t.Fatalf("want c.txt's CRLF bytes caught, got %v", err)
	}
	if _, err := v.haveBlobs(ctx, tree.String(), blobs); err != nil {
		t.Fatal(err)
	}
	// Without c.txt's difference the check passes, b.txt unread.
	if err := os.Remove(filepath.Join(dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	git1("-c", "core.autocrlf=false", "checkout", "--", "c.txt")
	if _, err := v.check(ctx, tree.String()); err != nil {
		t.Fatalf("an unchanged c.txt: %v", err)
	}
}
