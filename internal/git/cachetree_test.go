package git

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCachedTreeAgreesWithWriteTree: over a corpus of index states in both object
// formats, the tree read from an index's cache tree is the one `git write-tree`
// writes of it, and an index whose cache tree does not vouch for every entry (a path
// staged since: the root invalidated; a partial tree; unmerged, intent-to-add,
// skip-worktree, assume-unchanged entries; a split or sparse index; a torn file) is
// left to git.
func TestCachedTreeAgreesWithWriteTree(t *testing.T) {
	for _, k := range []kind{kinds[0], kinds[2]} {
		t.Run(k.name, func(t *testing.T) {
			r, g := testRepo(t, k)
			dir := r.TopLevel
			write := func(name, body string) { writeUnder(t, dir, name, body) }
			for _, f := range []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "e/f.txt", "x.sh"} {
				write(f, f+"\n")
			}
			if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			head := g("", "rev-parse", "HEAD")
			index := filepath.Join(dir, ".git", "index")
			steps := []struct {
				name   string
				do     func()
				cached bool // the cache tree vouches for the index
			}{
				{name: "added, never written", do: func() { g("", "add", "-A") }},
				{name: "committed", do: func() { g("", "commit", "-q", "-m", "c") }, cached: true},
				{name: "a path staged since", do: func() { write("dir/sub/c.txt", "changed\n"); g("", "add", "dir/sub/c.txt") }},
				{name: "written again", do: func() { g("", "write-tree") }, cached: true},
				{name: "a file added", do: func() { write("dir/new.txt", "n\n"); g("", "add", "dir/new.txt") }},
				{name: "a file removed, tree written", do: func() { g("", "rm", "-q", "--cached", "e/f.txt"); g("", "write-tree") }, cached: true},
				{name: "gitlink", do: func() {
					g("", "update-index", "--add", "--cacheinfo", "160000,"+head+",mod")
					g("", "write-tree")
				}, cached: true},
				{name: "intent to add", do: func() { write("ita.txt", "i\n"); g("", "add", "-N", "ita.txt"); g("", "write-tree") }},
				{name: "intent added", do: func() { g("", "add", "ita.txt"); g("", "write-tree") }, cached: true},
				{name: "assume-unchanged", do: func() { g("", "update-index", "--assume-unchanged", "a.txt") }},
				{name: "skip-worktree", do: func() {
					g("", "update-index", "--no-assume-unchanged", "a.txt")
					g("", "update-index", "--skip-worktree", "x.sh")
					g("", "write-tree")
				}},
				{name: "plain again", do: func() { g("", "update-index", "--no-skip-worktree", "x.sh"); g("", "write-tree") }, cached: true},
				{name: "v4", do: func() { g("", "update-index", "--index-version", "4"); g("", "write-tree") }, cached: true},
				{name: "unmerged", do: func() {
					blob := g("", "rev-parse", ":a.txt")
					g("100644 "+blob+" 1\tdir/b.txt\x00100644 "+blob+" 2\tdir/b.txt\x00", "update-index", "-z", "--index-info")
				}},
				{name: "resolved, written", do: func() {
					g("", "rm", "-q", "--cached", "dir/b.txt")
					g("", "add", "dir/b.txt")
					g("", "write-tree")
				}, cached: true},
				{name: "split", do: func() { g("", "update-index", "--split-index"); g("", "write-tree") }},
			}
			for _, s := range steps {
				s.do()
				data, err := os.ReadFile(index)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := cachedRootTree(data, k.format == "sha256")
				if ok != s.cached {
					t.Fatalf("%s: read from the cache tree %v, want %v", s.name, ok, s.cached)
				}
				if ok {
					// git's answer, from a copy (write-tree refreshes the cache tree).
					cp := filepath.Join(t.TempDir(), "index")
					if err := os.WriteFile(cp, data, 0o644); err != nil {
						t.Fatal(err)
					}
					if want := strings.TrimSpace(mustGit(t, dir, []string{"GIT_INDEX_FILE=" + cp}, "", "write-tree")); got != want {
						t.Fatalf("%s: cache tree %s, write-tree %s", s.name, got, want)
					}
				}
				// Torn: one byte changed is git's to read.
				data[len(data)/2] ^= 0xff
				if _, ok := cachedRootTree(data, k.format == "sha256"); ok {
					t.Errorf("%s: a torn index was read", s.name)
				}
			}
		})
	}
}

// TestCachedTreeCounts: a cache tree whose root counts other than every entry (one
// git would call partial) vouches for nothing, even with its checksum made right.
func TestCachedTreeCounts(t *testing.T) {
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g("", "add", "-A")
	g("", "write-tree")
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cachedRootTree(data, false); !ok {
		t.Fatal("a written cache tree was not read")
	}
	i := strings.Index(string(data), "TREE")
	root := i + 8 // signature and size, then the root's empty path
	if data[root] != 0 || data[root+1] != '2' {
		t.Fatalf("unexpected cache tree %q", data[i:i+16])
	}
	data[root+1] = '1' // counts one entry of two
	resum(data, 20)
	if _, ok := cachedRootTree(data, false); ok {
		t.Error("a cache tree counting one entry of two vouched for the index")
	}
}

// resum makes an index file's trailing checksum match its body again.
func resum(data []byte, hashLen int) {
	body := data[:len(data)-hashLen]
	if hashLen == 32 {
		s := sha256.Sum256(body)
		copy(data[len(body):], s[:])
		return
	}
	s := sha1.Sum(body)
	copy(data[len(body):], s[:])
}

// TestWriteTreeAfresh: git's write-tree takes the tree a valid cache tree names, even
// one with a file more than the index; WriteTreeAfresh builds it from the entries.
func TestWriteTreeAfresh(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g("", "add", "-A")
	want := g("", "write-tree")
	extra := g("x\n", "hash-object", "-w", "--stdin")
	more := g(g("", "ls-tree", want)+"\n100644 blob "+extra+"\textra.txt\n", "mktree")
	idx, err := r.Worktree(dir).CopyIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	data, err := os.ReadFile(idx.Path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "TREE")
	nl := strings.IndexByte(string(data[i:]), '\n')
	copy(data[i+nl+1:], rawID(t, more))
	resum(data, 20)
	if err := os.WriteFile(idx.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := idx.WriteTree(ctx); err != nil || got.String() != more {
		t.Fatalf("write-tree of the forged cache tree = %s, %v; this test expects git to trust it (%s)", got, err, more)
	}
	if got, err := idx.WriteTreeAfresh(ctx); err != nil || got.String() != want {
		t.Errorf("WriteTreeAfresh = %s, %v; want %s", got, err, want)
	}
	if after, _ := os.ReadFile(idx.Path); string(after) != string(data) {
		t.Error("WriteTreeAfresh changed the index file")
	}
}
