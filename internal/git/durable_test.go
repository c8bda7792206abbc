package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func loosePath(r *Repository, oid OID) string {
	id := oid.String()
	return filepath.Join(r.CommonDir, "objects", id[:2], id[2:])
}

// tear leaves the loose object id as a power cut can: empty, or cut short.
func tear(t *testing.T, r *Repository, id OID, keep int) {
	t.Helper()
	p := loosePath(r, id)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data[:min(keep, len(data))], 0o444); err != nil {
		t.Fatal(err)
	}
}

// An empty or torn loose object is missing to MissingObjects and HasObject (git's
// bare existence check calls it present), and writing the object again makes it
// whole, through git-atlas's own writer and through git's (which only freshens an
// existing file).
func TestTornLooseObjectIsRewritten(t *testing.T) {
	for _, k := range kinds {
		for _, keep := range []int{0, 5} {
			t.Run(fmt.Sprintf("%s/keep%d", k.name, keep), func(t *testing.T) {
				ctx := context.Background()
				r, g := testRepo(t, k)
				data := []byte(strings.Repeat("ledger state\n", 50))
				id, err := r.WriteBlob(ctx, data)
				if err != nil {
					t.Fatal(err)
				}
				write := func() {
					t.Helper()
					got, err := r.WriteBlob(ctx, data)
					if err != nil || got != id {
						t.Fatalf("WriteBlob = %s, %v", got, err)
					}
				}
				tear(t, r, id, keep)
				if r.HasObject(ctx, id) {
					t.Fatalf("HasObject(%s) = true for a torn loose object", id)
				}
				write()
				tear(t, r, id, keep)
				missing, err := r.MissingObjects(ctx, []OID{id})
				if err != nil {
					t.Fatal(err)
				}
				if len(missing) != 1 || missing[0] != id.String() {
					t.Fatalf("MissingObjects = %v, want [%s]", missing, id)
				}
				// As a snapshot writes what MissingObjects named: git's hash-object,
				// which only freshens a file already there.
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
					t.Fatal(err)
				}
				if ids, err := r.WriteRawBlobs(ctx, dir, []string{"f"}); err != nil || ids[0] != id.String() {
					t.Fatalf("WriteRawBlobs = %v, %v", ids, err)
				}
				g("", "cat-file", "blob", id.String())
				tear(t, r, id, keep) // present and torn: the writer itself must notice
				write()
				if out := g("", "cat-file", "blob", id.String()); out != strings.TrimSpace(string(data)) {
					t.Fatalf("cat-file after rewrite: %q", out)
				}
			})
		}
	}
}

// A tree written by git itself (write-tree through a temporary index) whose loose
// object was torn is written whole again.
func TestTornTreeRewrittenByGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[1])
	blob, err := r.WriteBlob(ctx, []byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteTree(ctx, []TreeEntry{{Name: "f", Blob: blob.String()}})
	if err != nil {
		t.Fatal(err)
	}
	tear(t, r, tree, 0)
	again, err := r.WriteTree(ctx, []TreeEntry{{Name: "f", Blob: blob.String()}})
	if err != nil || again != tree {
		t.Fatalf("WriteTree = %s, %v", again, err)
	}
	g("", "cat-file", "-p", tree.String())
}

// Objects git-atlas writes itself leave no temporary file and are read-only, as git's.
func TestLooseWriterLeavesNoTemporary(t *testing.T) {
	ctx := context.Background()
	r, _ := testRepo(t, kinds[0])
	id, err := r.WriteBlob(ctx, []byte("one\n"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(loosePath(r, id))
	if err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("object %s: %v %v", id, fi, err)
	}
	if l := r.Leftovers(0); len(l) != 0 {
		t.Fatalf("leftovers: %+v", l)
	}
}

func TestWriteFileAndCreateFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "c.txt")
	if err := WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil || string(data) != "hello" {
		t.Fatalf("read back: %q %v", data, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	f, err := CreateFile(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("replaced")
	f.Abort()
	if data, _ := os.ReadFile(p); string(data) != "hello" {
		t.Fatalf("aborted write changed the file: %q", data)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Fatalf("temporary file left: %v", ents)
	}
	if err := Rename(p, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
}

func TestIsNoSpace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("wrapped: %w", syscall.EDQUOT), true},
		{&Error{Args: []string{"add"}, ExitCode: 128, Stderr: "error: unable to write file: No space left on device"}, true},
		{&Error{Args: []string{"add"}, ExitCode: 128, Stderr: "fatal: bad object"}, false},
		{errors.New("other"), false},
	} {
		if got := IsNoSpace(c.err); got != c.want {
			t.Errorf("IsNoSpace(%v) = %v", c.err, got)
		}
		if got := errors.Is(noSpace(c.err), ErrNoSpace); got != c.want {
			t.Errorf("noSpace(%v) is ErrNoSpace = %v", c.err, got)
		}
	}
}

// A git process that fails for want of space has its temporary object files
// removed; older ones (another process's, or before it started) stay for gc.
func TestObjectsWrittenNoSpaceRemovesTemporaries(t *testing.T) {
	r, _ := testRepo(t, kinds[1])
	dir := filepath.Join(r.CommonDir, "objects", "ab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "tmp_obj_old")
	if err := os.WriteFile(old, []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fresh := filepath.Join(dir, "tmp_obj_new")
	if err := os.WriteFile(fresh, []byte("partial"), 0o444); err != nil {
		t.Fatal(err)
	}
	err := r.objectsWritten(start, &Error{Args: []string{"add"}, ExitCode: 128, Stderr: "error: unable to write file .git/objects/ab/tmp_obj_new: No space left on device"})
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want ErrNoSpace", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("temporary object of the failed write kept: %v", err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("older temporary object removed: %v", err)
	}
	l := r.Leftovers(30 * time.Minute)
	if len(l) != 1 || l[0].Path != old || l[0].Size != 1 || l[0].Kind != LeftoverTmpObject {
		t.Fatalf("Leftovers = %+v", l)
	}
}

// TestCommitEmptyFlushes: CommitEmpty, the test kit's first commit, flushes what it
// wrote as CommitAll does: the directory of every object it named is flushed before it
// returns (and so are the branch ref's and the git dir's, by the same calls).
func TestCommitEmptyFlushes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := InitRepository(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	w := r.Worktree(dir)
	if err := w.CommitEmpty(ctx, "first", nil); err != nil {
		t.Fatal(err)
	}
	head, err := w.ResolveHead(ctx)
	if err != nil || head.IsZero() {
		t.Fatalf("HEAD after CommitEmpty: %v, %v", head, err)
	}
	info, err := r.Commit(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{head.String(), info.Tree.String()} {
		d := filepath.Join(r.CommonDir, "objects", id[:2])
		if _, ok := r.flushed.Load(d); !ok {
			t.Errorf("%s (of object %s) was not flushed", d, id)
		}
	}
}

// ObjectSizes reads the headers of many loose objects with readers kept from one to
// the next: a torn object among them (its reader left mid-stream) is missing, and the
// objects after it still give their own sizes.
func TestObjectSizesLooseInTurn(t *testing.T) {
	ctx := context.Background()
	r, _ := testRepo(t, kinds[0])
	var ids []OID
	for i := range 6 {
		id, err := r.WriteBlob(ctx, []byte(strings.Repeat("x", i*1000)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	tear(t, r, ids[2], 5)
	sizes, missing, err := r.ObjectSizes(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 1 || missing[0] != ids[2].String() {
		t.Errorf("missing = %v, want [%s]", missing, ids[2])
	}
	for i, id := range ids {
		if want := int64(i * 1000); i != 2 && sizes[id.String()] != want {
			t.Errorf("size of blob %d = %d, want %d", i, sizes[id.String()], want)
		}
	}
}
