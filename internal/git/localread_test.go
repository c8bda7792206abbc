package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// localFixture is a repository whose ledger refs hold every case a read meets: a
// loose run, a packed run behind a packed ref, a ref to a missing commit, a run
// missing a file, a run whose file is a directory, a ref to a blob, a run whose
// file's loose object is empty, and (for the object reads) an empty and a torn loose
// object.
type localFixture struct {
	r                    *Repository
	g                    func(stdin string, args ...string) string
	loose, packed        string // commits
	blob, tree           string // loose objects
	packedBlob           string
	empty, torn, missing string // an empty loose object, a torn one, none
}

func newLocalFixture(t *testing.T) *localFixture {
	t.Helper()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	f := &localFixture{r: r, g: g, missing: strings.Repeat("1", 40)}
	// The packed run first: fast-import writes a pack, pack-refs packs its ref.
	g("commit refs/atlas/runs/b-packed\ncommitter C <c@x> 1767225600 +0000\ndata 7\npacked\nM 100644 inline run.json\ndata 3\nrb\nM 100644 inline state.json\ndata 3\nsb\n\n", "fast-import", "--quiet")
	g("", "repack", "-q", "-a", "-d") // fast-import leaves a small import loose
	g("", "pack-refs", "--all")
	f.packed = g("", "rev-parse", "refs/atlas/runs/b-packed")
	f.packedBlob = g("", "rev-parse", f.packed+":run.json")
	write := func(name string, files map[string]string, sub map[string]string) string {
		t.Helper()
		var entries []TreeEntry
		for n, data := range files {
			id, err := r.WriteBlob(ctx, []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, TreeEntry{Name: n, Blob: id.String()})
		}
		tree, err := r.WriteTree(ctx, entries)
		if err != nil {
			t.Fatal(err)
		}
		if sub != nil { // a tree holding a directory: written by git
			var in strings.Builder
			for n, id := range sub {
				fmt.Fprintf(&in, "040000 tree %s\t%s\n", id, n)
			}
			for _, e := range entries {
				fmt.Fprintf(&in, "100644 blob %s\t%s\n", e.Blob, e.Name)
			}
			tree, _ = ParseOID(g(in.String(), "mktree"))
		}
		c, err := r.WriteCommit(ctx, tree, nil, name+"\n\nbody\n")
		if err != nil {
			t.Fatal(err)
		}
		g("", "update-ref", "refs/atlas/runs/"+name, c.String())
		return c.String()
	}
	f.loose = write("a-loose", map[string]string{"run.json": "ra", "state.json": "sa"}, nil)
	f.blob = g("", "rev-parse", f.loose+":run.json")
	f.tree = g("", "rev-parse", f.loose+"^{tree}")
	write("d-nostate", map[string]string{"run.json": "rd"}, nil)
	write("e-dir", map[string]string{"run.json": "re"}, map[string]string{"state.json": f.tree})
	emptyRun := write("f-empty", map[string]string{"run.json": "rf-empty", "state.json": "sf"}, nil)
	f.empty = g("", "rev-parse", emptyRun+":run.json")
	torn := make([]byte, 64<<10)
	for i := range torn {
		torn[i] = byte(i * i >> 3)
	}
	tornID, err := r.WriteBlob(ctx, torn)
	if err != nil {
		t.Fatal(err)
	}
	f.torn = tornID.String()
	for id, keep := range map[string]int{f.empty: 0, f.torn: -1} {
		p := filepath.Join(r.CommonDir, "objects", id[:2], id[2:])
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if keep < 0 {
			keep = len(data) / 2 // the header whole, the body torn
		}
		if err := os.WriteFile(p, data[:keep], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g("", "update-ref", "refs/atlas/runs/g-blob", f.blob)
	if err := os.WriteFile(filepath.Join(r.CommonDir, "refs/atlas/runs/c-missing"), []byte(f.missing+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

type refFilesAnswer struct {
	Refs  []Ref
	Blobs [][]Blob
	Err   bool
}

func collectRefFiles(t *testing.T, read func(fn func(Ref, []Blob)) error) refFilesAnswer {
	t.Helper()
	var a refFilesAnswer
	err := read(func(ref Ref, blobs []Blob) {
		a.Refs = append(a.Refs, ref)
		for i := range blobs {
			if blobs[i].Err != nil {
				blobs[i].Err = errors.New(blobs[i].Err.Error()) // compared by text
			}
		}
		a.Blobs = append(a.Blobs, blobs)
	})
	a.Err = err != nil
	return a
}

// TestLocalReadsAgreeWithGit: RefFiles, catFile (BlobsAt, CommitMessages, CheckTree),
// objectInfo (HasObject, ObjectType) and RefMessages give in process exactly what
// git gives over the same refs and objects: loose and packed, a packed ref, a ref to
// a missing commit, a missing file, a file that is a directory, a ref to a blob, an
// empty loose object (missing), a torn one (an error), and start no process where
// every object is whole and loose.
func TestLocalReadsAgreeWithGit(t *testing.T) {
	ctx := context.Background()
	f := newLocalFixture(t)
	r := f.r
	paths := []string{"run.json", "state.json"}

	// RefFiles, every case at once.
	local := collectRefFiles(t, func(fn func(Ref, []Blob)) error {
		done, err := r.refFilesLocal(ctx, "refs/atlas/runs", paths, fn)
		if !done {
			t.Fatal("RefFiles was not read in process")
		}
		return err
	})
	viaGit := collectRefFiles(t, func(fn func(Ref, []Blob)) error { return r.refFilesGit(ctx, "refs/atlas/runs", paths, fn) })
	if !reflect.DeepEqual(local, viaGit) {
		t.Errorf("RefFiles in process:\n%+v\ngit:\n%+v", local, viaGit)
	}
	if len(local.Refs) != 7 || local.Err || string(local.Blobs[0][0].Data) != "ra" || string(local.Blobs[1][1].Data) != "sb\n" {
		t.Errorf("RefFiles = %+v", local)
	}

	// catFile, id by id and path by path, each against git.
	specs := []string{f.loose, f.packed, f.blob, f.tree, f.packedBlob, f.empty, f.missing,
		f.loose + ":run.json", f.loose + ":nope", f.loose + ":run.json/x", f.packed + ":state.json",
		f.blob + ":x", f.tree + ":run.json", f.tree + ":state.json/x", f.missing + ":run.json", "HEAD", f.loose[:12]}
	type answer struct {
		I int
		O batchObject
	}
	read := func(cat func(ctx context.Context, r *Repository, specs []string, fn func(int, batchObject)) error, specs []string) ([]answer, error) {
		var got []answer
		err := cat(ctx, r, specs, func(i int, o batchObject) { got = append(got, answer{i, o}) })
		return got, err
	}
	g := r.objects.(*goGitStore)
	gotLocal, errLocal := read(g.catFileLocal, specs)
	gotGit, errGit := read(catFileGit, specs)
	if errLocal != nil || errGit != nil || !reflect.DeepEqual(gotLocal, gotGit) {
		t.Errorf("catFile in process (%v):\n%+v\ngit (%v):\n%+v", errLocal, gotLocal, errGit, gotGit)
	}
	// A path git refuses fails the read both ways, as does a torn loose object, after
	// the answers before it.
	for _, bad := range [][]string{{f.blob, f.loose + ":./run.json", f.blob}, {f.blob, f.torn, f.blob}} {
		gotLocal, errLocal = read(g.catFileLocal, bad)
		gotGit, errGit = read(catFileGit, bad)
		if errLocal == nil || errGit == nil || !reflect.DeepEqual(gotLocal, gotGit) {
			t.Errorf("%v: in process (%v) %+v, git (%v) %+v", bad, errLocal, gotLocal, errGit, gotGit)
		}
	}
	// A torn loose object fails the read both ways, after the answers before it.
	gotLocal, errLocal = read(g.catFileLocal, []string{f.blob, f.torn, f.blob})
	gotGit, errGit = read(catFileGit, []string{f.blob, f.torn, f.blob})
	if errLocal == nil || errGit == nil || !reflect.DeepEqual(gotLocal, gotGit) {
		t.Errorf("a torn object: in process (%v) %+v, git (%v) %+v", errLocal, gotLocal, errGit, gotGit)
	}

	// A replace ref, which git honours, leaves every read to git.
	f.g("", "replace", f.blob, f.packedBlob)
	gotLocal, errLocal = read(g.catFileLocal, specs[:5])
	gotGit, errGit = read(catFileGit, specs[:5])
	if errLocal != nil || errGit != nil || !reflect.DeepEqual(gotLocal, gotGit) || string(gotLocal[2].O.data) != "rb\n" {
		t.Errorf("with a replace ref: in process (%v) %+v, git (%v) %+v", errLocal, gotLocal, errGit, gotGit)
	}
	infoLocal, _ := read(objectInfo, []string{f.blob})
	if infoGit, _ := read(objectInfoGit, []string{f.blob}); !reflect.DeepEqual(infoLocal, infoGit) {
		t.Errorf("info with a replace ref: in process %+v, git %+v", infoLocal, infoGit)
	}
	f.g("", "replace", "-d", f.blob)
	if err := os.Remove(filepath.Join(r.CommonDir, "refs", "replace")); err != nil { // git leaves it
		t.Fatal(err)
	}

	// objectInfo, one object at a time (HasObject, ObjectType).
	for _, id := range []string{f.loose, f.packed, f.blob, f.tree, f.empty, f.torn, f.missing} {
		infoLocal, errLocal := read(objectInfo, []string{id})
		infoGit, errGit := read(objectInfoGit, []string{id})
		if errLocal != nil || errGit != nil || !reflect.DeepEqual(infoLocal, infoGit) {
			t.Errorf("info %s: in process (%v) %+v, git (%v) %+v", id, errLocal, infoLocal, errGit, infoGit)
		}
	}

	// RefMessages: a missing commit leaves it to git, which dies as before.
	if r.refMessagesLocal("refs/atlas/runs", func(RefMessage) { t.Error("fn called") }) {
		t.Error("RefMessages over a missing commit was read in process")
	}
	if err := r.RefMessages(ctx, "refs/atlas/runs", func(RefMessage) {}); err == nil {
		t.Error("RefMessages over a missing commit did not fail")
	}
	f.g("", "update-ref", "-d", "refs/atlas/runs/c-missing")
	if r.refMessagesLocal("refs/atlas/runs", func(RefMessage) { t.Error("fn called") }) {
		t.Error("RefMessages over a packed commit was read in process")
	}
	f.g("", "update-ref", "-d", "refs/atlas/runs/b-packed")
	// Messages for-each-ref prints as they are, and one it would change (leading blank
	// lines, which it skips): git's to answer.
	tree, _ := ParseOID(f.tree)
	for i, msg := range []string{"no newline", "subject\n\n\nbody\n\n", "\n\nleading\n"} {
		c, err := r.WriteCommit(ctx, tree, nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		f.g("", "update-ref", fmt.Sprintf("refs/atlas/runs/h%d", i), c.String())
		var msgLocal, msgGit []RefMessage
		ok := r.refMessagesLocal("refs/atlas/runs", func(m RefMessage) { msgLocal = append(msgLocal, m) })
		if ok != (i < 2) {
			t.Fatalf("message %q: read in process = %v", msg, ok)
		}
		if err := r.refMessagesGit(ctx, "refs/atlas/runs", func(m RefMessage) { msgGit = append(msgGit, m) }); err != nil {
			t.Fatal(err)
		}
		if ok && !reflect.DeepEqual(msgLocal, msgGit) {
			t.Errorf("RefMessages in process:\n%+v\ngit:\n%+v", msgLocal, msgGit)
		}
	}
	f.g("", "update-ref", "-d", "refs/atlas/runs/h2")
	f.g("", "update-ref", "-d", "refs/atlas/runs/f-empty") // its loose blob is empty: git's answer
	before := Started()
	if err := r.CommitMessages(ctx, []Ref{{Name: "x", ID: f.loose}}, func(int, RefMessage) {}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := r.RefMessages(ctx, "refs/atlas/runs", func(RefMessage) { n++ }); err != nil || n != 6 {
		t.Fatalf("RefMessages: %d refs, %v", n, err)
	}
	got := collectRefFiles(t, func(fn func(Ref, []Blob)) error { return r.RefFiles(ctx, "refs/atlas/runs", paths, fn) })
	if len(got.Refs) != 6 || got.Err {
		t.Fatalf("RefFiles = %+v", got)
	}
	if !r.HasObject(ctx, mustOID(t, f.loose)) {
		t.Fatal("a loose commit is not found")
	}
	if n := Started() - before; n != 0 {
		t.Errorf("reads of whole loose objects started %d processes, want 0", n)
	}
}

// BenchmarkLocalReads times RefFiles (a run's two documents per ref) read in process
// and through git, over n runs, loose and packed; the numbers chose localRefsMost.
//
//	go test ./internal/git -run '^$' -bench LocalReads -benchtime 20x
func BenchmarkLocalReads(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 10, 100, 1000} {
		for _, packed := range []bool{false, true} {
			dir := b.TempDir()
			g := func(stdin string, args ...string) string {
				b.Helper()
				return mustGit(b, dir, nil, stdin, args...)
			}
			g("", "init", "-q", "-b", "main")
			g("", "commit", "-q", "--allow-empty", "-m", "first")
			var stream strings.Builder
			run := strings.Repeat(`{"stage":"plan","retries":1},`, 30)
			for i := range n {
				fmt.Fprintf(&stream, "commit refs/atlas/runs/r%04d\ncommitter C <c@x> 1767225600 +0000\ndata 2\nx\n", i)
				fmt.Fprintf(&stream, "M 100644 inline run.json\ndata %d\n%s\nM 100644 inline state.json\ndata 12\n{\"seq\":%04d}\n\n", len(run)+1, run, i)
			}
			g(stream.String(), "-c", "fastimport.unpackLimit=1000000", "fast-import", "--quiet")
			if packed {
				g("", "repack", "-q", "-a", "-d")
				g("", "pack-refs", "--all")
			}
			r, err := Open(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("%d/loose", n)
			if packed {
				name = fmt.Sprintf("%d/packed", n)
			}
			paths := []string{"run.json", "state.json"}
			count := func(ref Ref, blobs []Blob) {
				if blobs[0].Err != nil || blobs[1].Err != nil {
					b.Fatalf("%s: %v %v", ref.Name, blobs[0].Err, blobs[1].Err)
				}
			}
			b.Run(name+"/inprocess", func(b *testing.B) {
				defer func(most int) { localRefsMost = most }(localRefsMost)
				localRefsMost = 1 << 30
				for b.Loop() {
					if done, err := r.refFilesLocal(ctx, "refs/atlas/runs", paths, count); !done || err != nil {
						b.Fatal(done, err)
					}
				}
			})
			b.Run(name+"/git", func(b *testing.B) {
				for b.Loop() {
					if err := r.refFilesGit(ctx, "refs/atlas/runs", paths, count); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
