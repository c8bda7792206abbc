package recovery

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
)

// What each file on disk needs to match its tree entry, decided without reading it.
func TestVerifierFileCheckOf(t *testing.T) {
	t.Parallel() // pure: no repository, no package globals
	const (
		regular = fs.FileMode(0)
		link    = fs.ModeSymlink
		fifo    = fs.ModeNamedPipe
	)
	blob := func(mode string) git.TreeItem { return git.TreeItem{Mode: mode, Type: "blob", ID: "b1", Path: "f"} }
	both := fileRules{fileMode: true, symlinks: true}
	for _, c := range []struct {
		name     string
		typ      fs.FileMode
		it       git.TreeItem
		inTree   bool
		ignored  bool
		rules    fileRules
		restored bool
		want     *fileCheck // nil: nothing to hash
		changed  bool       // an error, wrapping ErrChanged unless restored
	}{
		{name: "plain file", typ: regular, it: blob("100644"), inTree: true, rules: both, want: &fileCheck{exec: 0}},
		{name: "executable", typ: regular, it: blob("100755"), inTree: true, rules: both, want: &fileCheck{exec: 1}},
		{name: "exec bit without core.fileMode", typ: regular, it: blob("100755"), inTree: true, rules: fileRules{symlinks: true}, want: &fileCheck{exec: -1}},
		{name: "symlink", typ: link, it: blob("120000"), inTree: true, rules: both, want: &fileCheck{link: true, exec: -1}},
		{name: "link kept as a file without core.symlinks", typ: regular, it: blob("120000"), inTree: true, rules: fileRules{fileMode: true}, want: &fileCheck{exec: -1}},
		{name: "link in the tree, file on disk", typ: regular, it: blob("120000"), inTree: true, rules: both, changed: true},
		{name: "symlink on disk, file in the tree", typ: link, it: blob("100644"), inTree: true, rules: both, changed: true},
		{name: "fifo where the tree has a file", typ: fifo, it: blob("100644"), inTree: true, rules: both, changed: true},
		{name: "file where the tree has a gitlink", typ: regular, it: git.TreeItem{Mode: "160000", Type: "commit", ID: "c1", Path: "f"}, inTree: true, rules: both, changed: true},
		{name: "new file", typ: regular, rules: both, changed: true},
		{name: "new file after a restore", typ: regular, rules: both, restored: true, changed: true},
		{name: "new ignored file", typ: regular, ignored: true, rules: both},
		{name: "new fifo", typ: fifo, rules: both},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := &verifier{restored: c.restored}
			if c.ignored {
				v.addIgnored("f", false)
			}
			got, err := v.fileCheckOf("f", -1, "f", "/abs/f", c.typ, c.it, c.inTree, c.rules)
			if c.changed {
				if err == nil || errors.Is(err, ErrChanged) == c.restored {
					t.Fatalf("fileCheckOf: %v, want a difference (ErrChanged: %v)", err, !c.restored)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) {
				t.Fatalf("fileCheckOf: %+v, want %+v", got, c.want)
			}
			if got != nil && (got.rel != "f" || got.abs != "/abs/f" || got.want != c.it.ID || got.link != c.want.link || got.exec != c.want.exec) {
				t.Fatalf("fileCheckOf: %+v, want link %v exec %d of blob %s", got, c.want.link, c.want.exec, c.it.ID)
			}
		})
	}
}

func TestVerifierCompare(t *testing.T) {
	t.Parallel() // pure: no repository, no package globals
	v := &verifier{}
	if err := v.compare([]*fileCheck{{rel: "a", want: "x", got: "x"}}); err != nil {
		t.Fatalf("matching hashes: %v", err)
	}
	if err := v.compare([]*fileCheck{{rel: "a", want: "x", got: "x"}, {rel: "b", want: "x", got: "y"}}); !errors.Is(err, ErrChanged) {
		t.Fatalf("a differing file: %v, want ErrChanged", err)
	}
	if err := v.compare([]*fileCheck{{rel: "a", want: "x", err: errors.New("gone")}}); !errors.Is(err, ErrChanged) {
		t.Fatalf("a file that could not be hashed: %v, want ErrChanged", err)
	}
	restored := &verifier{restored: true}
	if err := restored.compare([]*fileCheck{{rel: "a", want: "x", got: "y"}}); err == nil || errors.Is(err, ErrChanged) {
		t.Fatalf("a differing restored file: %v, want a failure that is not ErrChanged", err)
	}
}

// walkOrder is filepath.WalkDir's order: a directory's contents right after it.
func TestWalkOrder(t *testing.T) {
	t.Parallel() // pure
	want := []string{"a", "a/b", "a/b/c", "a/z", "a.txt", "a0", "b", "b/a"}
	got := slices.Clone(want)
	for i := range 50 {
		rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortFunc(got, walkOrder)
		if !slices.Equal(got, want) {
			t.Fatalf("sorted %q, want %q", got, want)
		}
	}
	for _, p := range want {
		if walkOrder(p, p) != 0 {
			t.Fatalf("walkOrder(%q, %q) != 0", p, p)
		}
	}
}
