package recovery_test

import (
	"context"
	"fmt"
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
