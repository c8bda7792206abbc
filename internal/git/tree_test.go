package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLsTreesMatchGit holds LsTrees, and its in-process reader where go-git opens the
// repository, against `git ls-tree -r` on trees loose, packed and mixed (a loose tree
// over packed subtrees, as a snapshot's tree is over the baseline's), commits, two
// trees sharing subtrees, every mode, and names that sort around "/": the same items
// in the same order. A tree this reader does not take as it is (a mode git
// canonicalises), a missing subtree and a replace ref go to git.
func TestLsTreesMatchGit(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, g := testRepo(t, k)
			r.KeepObjectReader()
			defer r.Close()
			var in strings.Builder
			in.WriteString("commit refs/heads/packed\ncommitter C <c@x> 1767225600 +0000\ndata 2\np\n")
			files := []string{"a", "a.txt", "a b/c", "a-/x", "a/b/c/d", "a/b/e", "dir/é.txt", "z/y/x/w/v", "x.sh", "link"}
			for i, f := range files {
				mode := "100644"
				switch f {
				case "x.sh":
					mode = "100755"
				case "link":
					mode = "120000"
				}
				fmt.Fprintf(&in, "M %s inline %s\ndata %d\n%d\n", mode, f, len(fmt.Sprint(i))+1, i)
			}
			fmt.Fprintf(&in, "M 160000 %s sub/module\n\n", g("", "rev-parse", "HEAD"))
			g(in.String(), "fast-import", "--quiet")
			g("", "repack", "-q", "-a", "-d")
			packedCommit := g("", "rev-parse", "refs/heads/packed")
			packed := g("", "rev-parse", "refs/heads/packed^{tree}")
			// A loose root over packed subtrees and one new loose subtree.
			blob := g("new\n", "hash-object", "-w", "--stdin")
			newSub := g(fmt.Sprintf("100644 blob %s\tnew.txt\n", blob), "mktree")
			var mk strings.Builder
			for line := range strings.SplitSeq(g("", "ls-tree", packed), "\n") {
				if !strings.HasSuffix(line, "\tdir") {
					mk.WriteString(line + "\n")
				}
			}
			fmt.Fprintf(&mk, "040000 tree %s\tdir\n040000 tree %s\tnew\n", newSub, newSub)
			mixed := g(mk.String(), "mktree")
			want := func(id string) []TreeItem {
				t.Helper()
				list, err := parseLsTree(g("", "ls-tree", "-r", "-z", "--full-tree", id))
				if err != nil {
					t.Fatal(err)
				}
				return list
			}
			oid := func(s string) OID {
				t.Helper()
				id, err := ParseOID(s)
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			ids := []string{packed, mixed, packedCommit, newSub}
			oids := make([]OID, len(ids))
			for i, id := range ids {
				oids[i] = oid(id)
			}
			lists, err := r.LsTrees(ctx, oids...)
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				if w := want(id); !reflect.DeepEqual(lists[i], w) {
					t.Errorf("LsTrees of %s:\n got %v\nwant %v", id, lists[i], w)
				}
			}
			if k.goGit {
				lists, ok := r.lsTreesRead(ctx, ids)
				if !ok {
					t.Fatal("lsTreesRead gave up on trees it reads")
				}
				for i, id := range ids {
					if w := want(id); !reflect.DeepEqual(lists[i], w) {
						t.Errorf("lsTreesRead of %s:\n got %v\nwant %v", id, lists[i], w)
					}
				}
			}

			// A mode git canonicalises (100664 lists as 100644): git's listing.
			raw := append([]byte("100664 odd\x00"), rawID(t, blob)...)
			oddTree := writeLiteralTree(t, r, g, raw)
			got, err := r.LsTree(ctx, oid(oddTree))
			if err != nil {
				t.Fatal(err)
			}
			if w := want(oddTree); !reflect.DeepEqual(got, w) {
				t.Errorf("LsTree of a tree with mode 100664:\n got %v\nwant %v", got, w)
			}
			if _, ok := r.lsTreesRead(ctx, []string{oddTree}); ok {
				t.Error("lsTreesRead took a tree with a mode git canonicalises")
			}

			// A subtree missing from the store: git's error.
			missing := strings.Repeat("1", len(blob))
			broken := writeLiteralTree(t, r, g, append([]byte("40000 gone\x00"), rawID(t, missing)...))
			if _, err := r.LsTree(ctx, oid(broken)); err == nil {
				t.Error("LsTree of a tree whose subtree is missing: no error")
			}

			// A replace ref: git answers, honouring it.
			g("", "replace", newSub, packed)
			got, err = r.LsTree(ctx, oid(mixed))
			if err != nil {
				t.Fatal(err)
			}
			if w := want(mixed); !reflect.DeepEqual(got, w) {
				t.Errorf("LsTree with a replace ref:\n got %v\nwant %v", got, w)
			}
		})
	}
}

// rawID is an object id's bytes, as a tree holds it.
func rawID(t *testing.T, id string) []byte {
	t.Helper()
	b := make([]byte, len(id)/2)
	for i := range b {
		if _, err := fmt.Sscanf(id[2*i:2*i+2], "%02x", &b[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// writeLiteralTree writes content as a tree object, unchecked (a tree git's mktree
// would refuse).
func writeLiteralTree(t *testing.T, r *Repository, g func(stdin string, args ...string) string, content []byte) string {
	t.Helper()
	_ = r
	return g(string(content), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
}

// TestObjectSizesAsGitSays holds ObjectSizes against `git cat-file -s` for packed and
// loose objects and a missing one, asked through the command's long-lived cat-file
// and through a process of its own.
func TestObjectSizesAsGitSays(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		ctx := context.Background()
		r, g := testRepo(t, kinds[0])
		if keep {
			r.KeepObjectReader()
		}
		g("commit refs/heads/p\ncommitter C <c@x> 1767225600 +0000\ndata 2\np\nM 100644 inline a\ndata 4\nabc\nM 100644 inline b\ndata 0\n\n", "fast-import", "--quiet")
		g("", "repack", "-q", "-a", "-d")
		names := []string{g("", "rev-parse", "p:a"), g("", "rev-parse", "p:b"), g("", "rev-parse", "p^{tree}"),
			g("loose\n", "hash-object", "-w", "--stdin")}
		var ids []OID
		for _, n := range names {
			id, err := ParseOID(n)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		gone, _ := ParseOID(strings.Repeat("2", 40))
		sizes, missing, err := r.ObjectSizes(ctx, append(ids, gone))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if want := g("", "cat-file", "-s", n); fmt.Sprint(sizes[n]) != want {
				t.Errorf("keep %v: size of %s = %d, git says %s", keep, n, sizes[n], want)
			}
		}
		if len(sizes) != len(names) || len(missing) != 1 || missing[0] != gone.String() {
			t.Errorf("keep %v: sizes %v, missing %v; want %d sizes and %s missing", keep, sizes, missing, len(names), gone)
		}
		r.Close()
	}
}

// TestStartObjectReader: the long-lived cat-file started ahead is the one later reads
// use, and Close ends it; a repository that keeps none starts none, and one whose
// every object is loose (each read answered in process) starts none ahead.
func TestStartObjectReader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	r.StartObjectReader(ctx) // keeps no reader: nothing to start
	if r.reader != nil {
		t.Fatal("StartObjectReader made a reader for a repository that keeps none")
	}
	r.KeepObjectReader()
	r.StartObjectReader(ctx) // every object loose
	r.reader.mu.Lock()       // held by a start until its process runs
	p := r.reader.p
	r.reader.mu.Unlock()
	if p != nil {
		t.Fatal("StartObjectReader started a process where every object is loose")
	}
	g("", "repack", "-q", "-a", "-d") // the commit read below is packed: git answers
	r.StartObjectReader(ctx)
	r.reader.mu.Lock() // held by the start until the process runs
	p = r.reader.p
	r.reader.mu.Unlock()
	if p == nil {
		t.Fatal("StartObjectReader started no process")
	}
	r.StartObjectReader(ctx) // running already: the same one
	head := g("", "rev-parse", "HEAD")
	id, _ := ParseOID(head)
	if _, err := r.Commit(ctx, id); err != nil {
		t.Fatal(err)
	}
	r.reader.mu.Lock()
	same := r.reader.p == p
	r.reader.mu.Unlock()
	if !same {
		t.Error("a read after StartObjectReader started another process")
	}
	r.Close()
	if r.reader.p != nil {
		t.Error("Close left the process running")
	}
	r.StartObjectReader(ctx) // closed: nothing starts
	r.reader.mu.Lock()
	defer r.reader.mu.Unlock()
	if r.reader.p != nil {
		t.Error("StartObjectReader after Close started a process")
	}
}

// TestResolveHeadPacked: with the command's cat-file kept, HEAD on a packed commit
// resolves in process as rev-parse resolves it; HEAD on a tag object (detached) is
// peeled as rev-parse peels it, and an unborn branch has none.
func TestResolveHeadPacked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	r.KeepObjectReader()
	defer r.Close()
	g("", "tag", "-a", "-m", "t", "v1")
	g("", "repack", "-q", "-a", "-d")
	w := r.Worktree(r.TopLevel)
	for _, at := range []string{"main", g("", "rev-parse", "v1")} {
		head := "ref: refs/heads/main\n"
		if at != "main" {
			head = at + "\n" // git refuses to write it; a hand-made HEAD may hold it
		}
		if err := os.WriteFile(filepath.Join(r.GitDir, "HEAD"), []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := w.ResolveHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := g("", "rev-parse", "--verify", "HEAD^{commit}"); got.String() != want {
			t.Errorf("HEAD at %s: ResolveHead = %s, rev-parse says %s", at, got, want)
		}
	}
	g("", "symbolic-ref", "HEAD", "refs/heads/unborn")
	if got, err := w.ResolveHead(ctx); err != nil || !got.IsZero() {
		t.Errorf("unborn HEAD: ResolveHead = %s, %v", got, err)
	}
}

// TestDiffCommitsAgreesWithGit holds DiffCommits against `git diff-tree` asked pair by
// pair: an addition, a deletion, a change, a mode change, a file that became a link and
// a directory that became a file, a file named by the id that heads the next pair's
// list, a pair with no change and a base that is not the tip's ancestor, each pair's
// list in its place; all of them in one git process. A missing commit, or a tree for a commit, is an error.
//
// It runs alone (no t.Parallel): it counts the package's git processes.
func TestDiffCommitsAgreesWithGit(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			r, g := testRepo(t, k)
			head := mustOID(t, g("", "rev-parse", "HEAD"))
			file := func(mode, path, data string) string {
				return fmt.Sprintf("M %s inline %s\ndata %d\n%s\n", mode, path, len(data)+1, data)
			}
			g("commit refs/heads/base\ncommitter C <c@x> 1767225600 +0000\ndata 2\nb\n"+
				file("100644", "keep", "k")+file("100644", "change", "c")+file("100644", "gone", "g")+
				file("100644", "mode", "m")+file("100644", "link", "l")+file("100644", "dir/x", "x"),
				"fast-import", "--quiet")
			base := mustOID(t, g("", "rev-parse", "refs/heads/base"))
			g("commit refs/heads/tip\ncommitter C <c@x> 1767225600 +0000\ndata 2\nt\nfrom refs/heads/base\n"+
				"D gone\nD dir\n"+file("100644", "change", "c2")+file("100755", "mode", "m")+
				file("120000", "link", "keep")+file("100644", "dir", "now a file")+file("100644", base.String(), "h")+
				file("100644", "new dir/a b", "n"),
				"fast-import", "--quiet")
			tip := mustOID(t, g("", "rev-parse", "refs/heads/tip"))
			pairs := []CommitPair{{base, tip}, {base, base}, {tip, base}, {head, tip}}

			before := Started()
			got, err := r.DiffCommits(ctx, pairs)
			if n := Started() - before; err != nil || n != 1 {
				t.Fatalf("DiffCommits: %v, %d git processes, want one", err, n)
			}
			if len(got) != len(pairs) {
				t.Fatalf("DiffCommits gave %d lists for %d pairs", len(got), len(pairs))
			}
			for i, p := range pairs {
				var want []NameStatus
				f := strings.Split(strings.TrimSuffix(g("", "diff-tree", "-r", "-z", "--name-status", "--no-renames", p.Base.String(), p.Tip.String()), "\x00"), "\x00")
				for j := 0; j+1 < len(f); j += 2 {
					want = append(want, NameStatus{Status: f[j], Path: f[j+1]})
				}
				if len(want) == 0 && len(got[i]) == 0 {
					continue
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("pair %d: DiffCommits %v; git %v", i, got[i], want)
				}
			}
			if len(got[0]) < 7 || len(got[1]) != 0 {
				t.Errorf("the fixture's pairs: %d and %d changes, want 7 or more and none", len(got[0]), len(got[1]))
			}

			// Not commits: git reports them on stderr and exits 0, a tree as the base
			// answered as the tip against no parent (nothing changed).
			missing := mustOID(t, strings.Repeat("1", len(head.String())))
			tree := mustOID(t, g("", "rev-parse", "refs/heads/base^{tree}"))
			for _, p := range []CommitPair{{base, missing}, {missing, tip}, {tree, tip}, {base, tree}} {
				if l, err := r.DiffCommits(ctx, []CommitPair{{base, tip}, p}); err == nil {
					t.Errorf("DiffCommits of %v: %v, no error", p, l)
				}
			}
		})
	}
}
