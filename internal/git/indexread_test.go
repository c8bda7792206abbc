package git

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEntriesFlaggedAgreesWithGit: the index read in process lists what `ls-files
// --stage -v -z` lists (entries, assume-unchanged and skip-worktree paths) over a
// corpus of index states in both object formats, and starts no git process; an index
// it does not fully understand (split, sparse, torn, another checksum) is left to
// git, whose answer EntriesFlagged then gives.
func TestEntriesFlaggedAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	for _, k := range []kind{kinds[0], kinds[2]} {
		t.Run(k.name, func(t *testing.T) {
			r, g := testRepo(t, k)
			dir := r.TopLevel
			write := func(name, body string) { writeUnder(t, dir, name, body) }
			commitFiles(t, dir, g, "first", "a.txt", "dir/b.txt", "dir/sub/c.txt", "skip.txt", "assumed.txt", "x.sh", "sparse/s.txt")
			blob := strings.TrimSpace(g("", "rev-parse", "HEAD:a.txt"))
			head := strings.TrimSpace(g("", "rev-parse", "HEAD"))
			long := strings.Repeat("d123456789/", 400) + "long.txt" // past the 12 bits of a name length
			steps := []struct {
				name     string
				do       func()
				fallback bool // the reader must leave it to git
			}{
				{name: "plain"},
				{name: "cache tree", do: func() { g("", "write-tree") }},
				{name: "marks", do: func() {
					g("", "update-index", "--assume-unchanged", "assumed.txt")
					g("", "update-index", "--skip-worktree", "skip.txt")
					write("new.txt", "n\n")
					g("", "add", "-N", "new.txt")
				}},
				{name: "gitlink and odd names", do: func() {
					g("", "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
					g("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",tab\there")
					g("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",line\nbreak")
					g("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
				}},
				{name: "unmerged", do: func() {
					g("100644 "+blob+" 1\tdir/b.txt\x00100644 "+blob+" 2\tdir/b.txt\x00100755 "+blob+" 3\tdir/b.txt\x00",
						"update-index", "-z", "--index-info")
					g("", "update-index", "--assume-unchanged", "a.txt")
				}},
				{name: "untracked cache", do: func() {
					g("", "update-index", "--untracked-cache")
					g("", "status", "--porcelain")
				}},
				{name: "v4", do: func() { g("", "update-index", "--index-version", "4") }},
				{name: "v2", do: func() {
					g("", "update-index", "--no-skip-worktree", "skip.txt")
					g("", "rm", "-q", "--cached", "new.txt")
					g("", "update-index", "--index-version", "2")
				}},
				{name: "split", do: func() { g("", "update-index", "--split-index") }, fallback: true},
				{name: "sparse", do: func() {
					g("", "update-index", "--no-split-index")
					g("", "update-index", "--force-remove", "dir/b.txt", "sub", "tab\there", "line\nbreak", long)
					g("", "commit", "-q", "-m", "second")
					g("", "sparse-checkout", "set", "--cone", "--sparse-index", "dir")
				}, fallback: true},
			}
			index := filepath.Join(dir, ".git", "index")
			for _, s := range steps {
				if s.do != nil {
					s.do()
				}
				data, err := os.ReadFile(index)
				if err != nil {
					t.Fatal(err)
				}
				out := g("", "ls-files", "--stage", "-v", "-z")
				wantE, wantA, wantS := lsFilesFlagged(t, out)
				gotE, gotA, gotS, ok := entriesFlagged(data, k.format == "sha256")
				if ok == s.fallback {
					t.Fatalf("%s: read in process %v, want %v", s.name, ok, !s.fallback)
				}
				if ok && (!reflect.DeepEqual(gotE, wantE) || !reflect.DeepEqual(gotA, wantA) || !reflect.DeepEqual(gotS, wantS)) {
					t.Fatalf("%s: in process\n%v\n%q %q\nls-files\n%v\n%q %q", s.name, gotE, gotA, gotS, wantE, wantA, wantS)
				}
				idx, err := r.Worktree(dir).CopyIndex(ctx)
				if err != nil {
					t.Fatal(err)
				}
				before := Started()
				e, a, sk, err := idx.EntriesFlagged(ctx)
				idx.Close()
				if err != nil || !reflect.DeepEqual(e, wantE) || !reflect.DeepEqual(a, wantA) || !reflect.DeepEqual(sk, wantS) {
					t.Fatalf("%s: EntriesFlagged = %v %q %q, %v; want ls-files' answer", s.name, e, a, sk, err)
				}
				if n := Started() - before; !s.fallback && n != 0 {
					t.Errorf("%s: EntriesFlagged started %d git processes, want none", s.name, n)
				}
				// The worktree's own index: what `ls-files -v` marks (Unusual, HidesChanges).
				before = Started()
				fa, fs, err := r.Worktree(dir).flaggedPaths(ctx)
				la, ls := flagged([]byte(g("", "ls-files", "-v", "-z")))
				if err != nil || !reflect.DeepEqual(uniq(fa), uniq(la)) || !reflect.DeepEqual(uniq(fs), uniq(ls)) {
					t.Fatalf("%s: flaggedPaths = %q %q, %v; ls-files -v: %q %q", s.name, fa, fs, err, la, ls)
				}
				if n := Started() - before; !s.fallback && k.goGit && n != 0 { // sha256: the git dir is git's to find
					t.Errorf("%s: flaggedPaths started %d git processes, want none", s.name, n)
				}
				// A torn index (one byte changed) is git's to read, or to refuse.
				data[len(data)/2] ^= 0xff
				if _, _, _, ok := entriesFlagged(data, k.format == "sha256"); ok {
					t.Errorf("%s: a torn index was read in process", s.name)
				}
			}
		})
	}
}

// uniq is paths sorted, each once.
func uniq(paths []string) []string {
	out := slices.Clone(paths)
	slices.Sort(out)
	return slices.Compact(out)
}

// lsFilesFlagged parses `ls-files --stage -v -z` as EntriesFlagged does from git.
func lsFilesFlagged(t *testing.T, out string) (entries []IndexEntry, assumed, skipped []string) {
	t.Helper()
	entries = []IndexEntry{}
	for rec := range strings.SplitSeq(out, "\x00") {
		if rec == "" {
			continue
		}
		tag := rec[0]
		meta, path, _ := strings.Cut(rec[2:], "\t")
		f := strings.Fields(meta)
		entries = append(entries, IndexEntry{Mode: f[0], ID: f[1], Stage: int(f[2][0] - '0'), Path: path})
		if tag >= 'a' && tag <= 'z' {
			assumed = append(assumed, path)
		}
		if tag == 'S' || tag == 's' {
			skipped = append(skipped, path)
		}
	}
	return entries, assumed, skipped
}

// TestStatMatchesAt: a file's stat data read by its name in an open directory judge
// it as those read by its path do: a clean file and a link match, a file written
// since and a missing name do not.
func TestStatMatchesAt(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	dir := r.TopLevel
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	g("", "add", "-A")
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(dir, ".git", "index"), later, later); err != nil {
		t.Fatal(err)
	}
	idx, err := r.Worktree(dir).CopyIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	stat := idx.StatData()
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for name, want := range map[string]bool{"a.txt": true, "link": true, "b.txt": false, "c.txt": false} {
		s, ok := stat[name]
		if !ok {
			t.Fatalf("no stat data for %s", name)
		}
		path := filepath.Join(dir, name)
		size, match := StatMatchesAt(int(d.Fd()), name, path, s)
		size2, match2 := StatMatches(path, s)
		if match != want || match != match2 || size != size2 {
			t.Errorf("%s: StatMatchesAt = %d, %v; StatMatches = %d, %v; want a match %v", name, size, match, size2, match2, want)
		}
	}
}

// writeUnder writes body to the file name (slash-separated) under dir, making its
// directories.
// commitFiles writes each name under dir holding its own name and a newline (x.sh
// executable, which names must hold), adds link, a symbolic link to a.txt, and
// commits them all with msg.
func commitFiles(t testing.TB, dir string, g func(stdin string, args ...string) string, msg string, names ...string) {
	t.Helper()
	for _, f := range names {
		writeUnder(t, dir, f, f+"\n")
	}
	if err := os.Chmod(filepath.Join(dir, "x.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	g("", "add", "-A")
	g("", "commit", "-q", "-m", msg)
}

func writeUnder(t testing.TB, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
