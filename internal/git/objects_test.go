package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type kind struct {
	name   string
	format string
	noGo   bool
	goGit  bool
}

// Every object and ref operation is checked against git itself, in each way the
// repository can be reached: go-git, the CLI fallback, and sha256 (CLI: go-git
// cannot open it).
var kinds = []kind{
	{name: "gogit", format: "sha1", goGit: true},
	{name: "cli", format: "sha1", noGo: true},
	{name: "sha256", format: "sha256"},
}

func testRepo(t *testing.T, k kind) (*Repository, func(stdin string, args ...string) string) {
	t.Helper()
	dir := t.TempDir() // git's environment is TestMain's (testenv.Pin)
	g := func(stdin string, args ...string) string {
		t.Helper()
		return mustGit(t, dir, nil, stdin, args...)
	}
	g("", "init", "-q", "-b", "main", "--object-format="+k.format)
	g("", "commit", "-q", "--allow-empty", "-m", "first")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if k.noGo {
		r.UseGitForObjects()
	}
	if r.UsesGoGit() != k.goGit {
		t.Fatalf("UsesGoGit = %v, want %v", r.UsesGoGit(), k.goGit)
	}
	if r.ObjectFormat != k.format {
		t.Fatalf("ObjectFormat = %q, want %q", r.ObjectFormat, k.format)
	}
	return r, g
}

func TestObjectsMatchGit(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, g := testRepo(t, k)
			idLen := map[string]int{"sha1": 40, "sha256": 64}[k.format]

			b1, err := r.WriteBlob(ctx, []byte("{\"a\":1}\n"))
			if err != nil {
				t.Fatal(err)
			}
			if want := g("{\"a\":1}\n", "hash-object", "--stdin"); b1.String() != want || len(b1.String()) != idLen {
				t.Fatalf("blob id %s, git says %s", b1, want)
			}
			// Compressed at git's level for loose objects (the zlib header says which).
			theirs := g("git's own\n", "hash-object", "-w", "--stdin")
			if ours, git := looseHeader(t, r, b1.String()), looseHeader(t, r, theirs); ours != git {
				t.Errorf("a loose object's zlib header is %x, git's own %x", ours, git)
			}
			b2, _ := r.WriteBlob(ctx, []byte("two\n"))
			tree, err := r.WriteTree(ctx, []TreeEntry{{Name: "state.json", Blob: b2.String()}, {Name: "run.json", Blob: b1.String()}})
			if err != nil {
				t.Fatal(err)
			}
			if want := g("100644 blob "+b1.String()+"\trun.json\n100644 blob "+b2.String()+"\tstate.json\n", "mktree"); tree.String() != want {
				t.Fatalf("tree id %s, git mktree says %s", tree, want)
			}
			head := g("", "rev-parse", "HEAD")
			c1, err := r.WriteCommit(ctx, tree, nil, "root\n")
			if err != nil {
				t.Fatal(err)
			}
			c2, err := r.WriteCommit(ctx, tree, []OID{c1}, "child\n")
			if err != nil {
				t.Fatal(err)
			}
			if got := g("", "log", "--format=%an <%ae> %s %P", c2.String()); !strings.Contains(got, "git-atlas <git-atlas@localhost> child "+c1.String()) {
				t.Fatalf("git log: %s", got)
			}
			// Byte for byte the commit git itself writes with the same identity and date.
			date := g("", "log", "-1", "--format=%ad", "--date=raw", c2.String())
			same := append(os.Environ(), "GIT_AUTHOR_NAME=git-atlas", "GIT_AUTHOR_EMAIL=git-atlas@localhost", "GIT_AUTHOR_DATE="+date,
				"GIT_COMMITTER_NAME=git-atlas", "GIT_COMMITTER_EMAIL=git-atlas@localhost", "GIT_COMMITTER_DATE="+date)
			if out, err := runGit(filepath.Dir(r.CommonDir), same, "", "commit-tree", tree.String(), "-p", c1.String(), "-m", "child"); err != nil || strings.TrimSpace(out) != c2.String() {
				t.Fatalf("commit %s, git commit-tree with the same date says %s (%v)\n%s", c2, out, err, g("", "cat-file", "commit", c2.String()))
			}
			info, err := r.Commit(ctx, c2)
			if err != nil || info.Tree != tree || len(info.Parents) != 1 || info.Parents[0] != c1 {
				t.Fatalf("Commit = %+v, %v", info, err)
			}
			chain, err := r.FirstParents(ctx, c2)
			if err != nil || len(chain) != 2 || chain[0] != c2 || chain[1] != c1 {
				t.Fatalf("FirstParents = %v, %v", chain, err)
			}
			if _, err := r.Commit(ctx, b1); !errors.Is(err, ErrNotCommit) {
				t.Fatalf("Commit(blob) = %v", err)
			}
			if _, err := r.Commit(ctx, mustOID(t, strings.Repeat("1", idLen))); !errors.Is(err, ErrNotFoundObject) {
				t.Fatalf("Commit(missing) = %v", err)
			}
			if typ, err := r.ObjectType(ctx, tree); typ != "tree" || err != nil {
				t.Fatalf("ObjectType = %q, %v", typ, err)
			}

			blobs, err := r.BlobsAt(ctx, []BlobSpec{{Commit: c2, Path: "run.json"}, {Commit: c1, Path: "state.json"}, {Commit: c2, Path: "nope.json"}, {Commit: mustOID(t, head), Path: "run.json"}, {Commit: mustOID(t, strings.Repeat("2", idLen)), Path: "run.json"}})
			if err != nil {
				t.Fatal(err)
			}
			if string(blobs[0].Data) != "{\"a\":1}\n" || blobs[0].ID != b1.String() || string(blobs[1].Data) != "two\n" {
				t.Fatalf("blobs = %+v", blobs[:2])
			}
			for _, b := range blobs[2:] {
				if !errors.Is(b.Err, ErrNotFoundObject) {
					t.Fatalf("missing blob: %+v", b)
				}
			}
			g("", "fsck", "--strict", "--no-dangling")
		})
	}
}

func TestUpdateRefs(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, g := testRepo(t, k)
			head := g("", "rev-parse", "HEAD")
			cid, _ := r.WriteCommit(ctx, mustOID(t, g("", "rev-parse", "HEAD^{tree}")), []OID{mustOID(t, head)}, "next\n")
			c := cid.String()

			// Create-only: ZeroID means "must not exist", whatever the object format.
			if err := r.UpdateRefs(ctx, "create", RefUpdate{Name: "refs/atlas/runs/a", New: head, Old: ZeroID}); err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateRefs(ctx, "again", RefUpdate{Name: "refs/atlas/runs/a", New: c, Old: ZeroID}); !errors.Is(err, ErrRefConflict) {
				t.Fatalf("second create: %v", err)
			}
			// CAS: the wrong old value loses, the right one wins.
			if err := r.UpdateRefs(ctx, "", RefUpdate{Name: "refs/atlas/runs/a", New: c, Old: c}); !errors.Is(err, ErrRefConflict) {
				t.Fatalf("stale CAS: %v", err)
			}
			if err := r.UpdateRefs(ctx, "", RefUpdate{Name: "refs/atlas/runs/a", New: c, Old: head}); err != nil {
				t.Fatal(err)
			}
			// One transaction: when one update fails, none is applied.
			err := r.UpdateRefs(ctx, "", RefUpdate{Name: "refs/atlas/runs/b", New: head, Old: ZeroID}, RefUpdate{Name: "refs/atlas/runs/a", New: head, Old: head})
			if !errors.Is(err, ErrRefConflict) {
				t.Fatalf("mixed transaction: %v", err)
			}
			if id, _ := r.ReadRef(ctx, "refs/atlas/runs/b"); id != "" {
				t.Fatal("half a transaction was applied")
			}
			if id, _ := r.ReadRef(ctx, "refs/atlas/runs/a"); id != c {
				t.Fatalf("ReadRef = %s, want %s", id, c)
			}
			// Delete: New is ZeroID (or the format's own null id).
			if err := r.UpdateRefs(ctx, "", RefUpdate{Name: "refs/atlas/runs/a", New: r.NullID(), Old: c}); err != nil {
				t.Fatal(err)
			}
			if id, err := r.ReadRef(ctx, "refs/atlas/runs/a"); id != "" || err != nil {
				t.Fatalf("deleted ref reads %q, %v", id, err)
			}
			if got := g("", "for-each-ref", "refs/atlas"); got != "" {
				t.Fatalf("refs left: %s", got)
			}
		})
	}
}

func TestNullID(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		r, _ := testRepo(t, k)
		if want := map[string]int{"sha1": 40, "sha256": 64}[k.format]; len(r.NullID()) != want || !IsNullID(r.NullID()) {
			t.Errorf("%s: NullID = %s", k.name, r.NullID())
		}
	}
	for id, want := range map[string]bool{ZeroID: true, strings.Repeat("0", 64): true, "": false, "01": false} {
		if IsNullID(id) != want {
			t.Errorf("IsNullID(%q) != %v", id, want)
		}
	}
}

// One ref to a missing object must not hide the others (for-each-ref dies on it when
// asked for the object's type).
func TestListRefsWithMissingObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	head := g("", "rev-parse", "HEAD")
	g("", "update-ref", "refs/atlas/runs/good", head)
	missing := strings.Repeat("1", 40)
	if err := os.WriteFile(filepath.Join(r.CommonDir, "refs/atlas/runs/missing"), []byte(missing+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refs, err := r.ListRefs(ctx, "refs/atlas/runs")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0] != (Ref{Name: "refs/atlas/runs/good", ID: head}) || refs[1] != (Ref{Name: "refs/atlas/runs/missing", ID: missing}) {
		t.Fatalf("refs = %+v", refs)
	}
}

func TestRefFiles(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, g := testRepo(t, k)
			collect := func() (names []string, got [][]Blob) {
				err := r.RefFiles(ctx, "refs/atlas/runs", []string{"a.json", "b.json"}, func(ref Ref, blobs []Blob) {
					names = append(names, ref.Name+" "+ref.ID)
					got = append(got, blobs)
				})
				if err != nil {
					t.Fatal(err)
				}
				return names, got
			}
			if names, _ := collect(); len(names) != 0 {
				t.Fatalf("no refs: got %v", names)
			}
			blob := g("x\n", "hash-object", "-w", "--stdin")
			// More than a pipe buffer of questions and answers, in one fast-import.
			var stream strings.Builder
			for i := range 300 {
				fmt.Fprintf(&stream, "commit refs/atlas/runs/r%03d\ncommitter C <c@x> 1767225600 +0000\ndata 2\nx\nM 100644 inline a.json\ndata <<EOT\na%d\nEOT\n\n", i, i)
			}
			g(stream.String(), "fast-import", "--quiet")
			commits := strings.Fields(g("", "for-each-ref", "--format=%(objectname)", "refs/atlas/runs"))
			g("", "update-ref", "refs/atlas/runs/zblob", blob)
			names, got := collect()
			if len(names) != 301 {
				t.Fatalf("%d refs", len(names))
			}
			for i, c := range commits {
				if names[i] != fmt.Sprintf("refs/atlas/runs/r%03d %s", i, c) {
					t.Fatalf("ref %d = %s", i, names[i])
				}
				if string(got[i][0].Data) != fmt.Sprintf("a%d\n", i) || !errors.Is(got[i][1].Err, ErrNotFoundObject) {
					t.Fatalf("ref %d: %+v", i, got[i])
				}
			}
			if last := got[300]; !errors.Is(last[0].Err, ErrNotFoundObject) || !errors.Is(last[1].Err, ErrNotFoundObject) {
				t.Fatalf("a ref to a blob: %+v", last)
			}
		})
	}
}

// A commit's tree and parents come back as object ids, whichever store reads it: a
// hand-made commit (git hash-object --literally) whose tree or parent line holds an
// option is an error naming it, never a string handed on to git. (FirstParents holds
// ids too: a chain git walks, or one read in process through the same parser.)
func TestCommitIDsAreParsed(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			r, g := testRepo(t, k)
			ctx := context.Background()
			head := g("", "rev-parse", "HEAD")
			tree := g("", "rev-parse", "HEAD^{tree}")
			who := "author a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\nhostile\n"
			for _, c := range []struct{ body, want string }{
				{"tree --output=../README\nparent " + head + "\n" + who, `tree "--output=../README" is not an object id`},
				{"tree " + tree + "\nparent --all\n" + who, `parent "--all" is not an object id`},
			} {
				bad, err := ParseOID(g(c.body, "hash-object", "-t", "commit", "--literally", "-w", "--stdin"))
				if err != nil {
					t.Fatal(err)
				}
				if info, err := r.Commit(ctx, bad); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Commit = %+v, %v; want an error saying %s", info, err, c.want)
				}
			}
		})
	}
}

// looseHeader is the first two bytes (the zlib header) of the loose object id.
func looseHeader(t *testing.T, r *Repository, id string) [2]byte {
	t.Helper()
	f, err := os.Open(filepath.Join(r.CommonDir, "objects", id[:2], id[2:]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var h [2]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		t.Fatal(err)
	}
	return h
}
