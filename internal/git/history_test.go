package git

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCountCommitsAgreesWithGit: CountCommits gives `rev-list --count head ^exclude`'s
// answer for every pair of commits of a history with a merge and a second root, in
// each kind of repository; with go-git's store it answers in process (no git process)
// where head's commits down to exclude are loose and none is a root, and asks git
// where a root is on the way, a replace ref may change the parents, or the history is
// packed (but for the baseline itself, which it never reads; Contains likewise).
//
// It runs alone (no t.Parallel): it counts the package's git processes.
func TestCountCommitsAgreesWithGit(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			r, g := testRepo(t, k)
			root, commit := commits(t, r, g)
			a := commit("a", root)
			b := commit("b", root)
			m := commit("m", a, b)
			c := commit("c", m)
			other := commit("another root")
			j := commit("j", c, other)
			names := map[OID]string{root: "root", a: "a", b: "b", m: "m", c: "c", other: "other", j: "j"}
			// What git says: head's commits that exclude does not reach, from the commits
			// `git rev-list` reaches from each (one process a commit, not one a pair),
			// until grafts or a replace ref change the parents; then `rev-list --count`.
			reach := map[OID]map[string]bool{}
			ancestors := func(id OID) map[string]bool {
				if reach[id] == nil {
					reach[id] = map[string]bool{}
					for line := range strings.FieldsSeq(mustGit(t, r.CommonDir, nil, "", "rev-list", id.String())) {
						reach[id][line] = true
					}
				}
				return reach[id]
			}
			rewritten := false
			gitCount := func(head, exclude OID) int {
				if rewritten {
					out := mustGit(t, r.CommonDir, nil, "", "rev-list", "--count", head.String(), "^"+exclude.String())
					n, _ := strconv.Atoi(strings.TrimSpace(out))
					return n
				}
				n := 0
				for id := range ancestors(head) {
					if !ancestors(exclude)[id] {
						n++
					}
				}
				return n
			}
			count := func(head, exclude OID) (n int, asked bool) {
				t.Helper()
				before := Started()
				n, err := r.CountCommits(ctx, head, exclude)
				asked = Started() != before
				if err != nil {
					t.Fatalf("CountCommits(%s, %s): %v", names[head], names[exclude], err)
				}
				if want := gitCount(head, exclude); n != want {
					t.Fatalf("CountCommits(%s, %s) = %d; git says %d", names[head], names[exclude], n, want)
				}
				return n, asked
			}
			for head := range names {
				for exclude := range names {
					count(head, exclude)
				}
			}
			if !k.goGit {
				return
			}
			for _, tc := range []struct {
				head, exclude OID
				asked         bool
			}{
				{c, root, false}, // a, b, m and c: every path down ends at root
				{c, c, false},
				{a, b, true}, // reaches root, which may be b's ancestor (it is)
				{m, a, true}, // b's path reaches root
				{j, c, true}, // reaches the other root
			} {
				if _, asked := count(tc.head, tc.exclude); asked != tc.asked {
					t.Errorf("CountCommits(%s, %s) asked git: %v, want %v", names[tc.head], names[tc.exclude], asked, tc.asked)
				}
			}
			g("", "update-ref", "refs/atlas/keep", j.String())
			g("", "repack", "-a", "-d", "-q", "--window=0") // no deltas: a deltified commit's type is git's to tell
			if _, asked := count(c, root); !asked {
				t.Error("over a packed history, CountCommits answered without git")
			}
			// A node's new commits on a packed baseline, as in a clone: in process.
			d := commit("d", c)
			e := commit("e", d)
			names[d], names[e] = "d", "e"
			if n, asked := count(e, c); n != 2 || asked {
				t.Errorf("two loose commits on a packed one: %d, asked git %v", n, asked)
			}
			before := Started()
			if in, err := r.Contains(ctx, e, c); !in || err != nil || Started() != before {
				t.Errorf("Contains(e, c) on a packed c = %v, %v, asked git %v", in, err, Started() != before)
			}
			// Grafts named by the environment: git's parents, not the commits' own.
			grafts := filepath.Join(t.TempDir(), "grafts")
			if err := os.WriteFile(grafts, []byte(e.String()+" "+root.String()+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT_GRAFT_FILE", grafts)
			rewritten = true
			if n, asked := count(e, c); !asked {
				t.Errorf("with GIT_GRAFT_FILE set, CountCommits answered %d without git", n)
			}
			if err := os.Unsetenv("GIT_GRAFT_FILE"); err != nil {
				t.Fatal(err)
			}
			g("", "replace", d.String(), c.String())
			if _, asked := count(e, c); !asked {
				t.Error("with a replace ref, CountCommits answered without git")
			}
		})
	}
}

// commits is a repository's first commit, and a function that writes a commit of its
// tree with the given parents (a history's shape for the ancestry tests).
func commits(t *testing.T, r *Repository, g func(stdin string, args ...string) string) (OID, func(msg string, parents ...OID) OID) {
	t.Helper()
	tree := mustOID(t, g("", "rev-parse", "HEAD^{tree}"))
	return mustOID(t, g("", "rev-parse", "HEAD")), func(msg string, parents ...OID) OID {
		t.Helper()
		id, err := r.WriteCommit(context.Background(), tree, parents, msg+"\n")
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}
