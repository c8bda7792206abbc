package git

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/confine"
)

// With KeepObjectReader, every object read of a command (contents, existence, type)
// goes to one long-lived cat-file, whichever store reads objects; its answers agree
// with git's, objects written after it started (loose, then packed away) are found,
// an empty or torn loose object is missing (and removed), a torn body fails the read
// and the next read starts a new process. It counts processes (Started), so it runs
// alone: no t.Parallel.
func TestOneObjectReaderPerCommand(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			r, g := testRepo(t, k)
			r.KeepObjectReader()
			defer r.Close()
			blob := mustOID(t, g("ledger\n", "hash-object", "-w", "--stdin"))
			tree := mustOID(t, g("100644 blob "+blob.String()+"\tf\n", "mktree"))
			commit := mustOID(t, g("", "commit-tree", "-m", "c", tree.String()))
			// Packed: the go-git store reads loose objects in process, and would ask git
			// nothing otherwise.
			g("", "update-ref", "refs/heads/c", commit.String())
			g("", "repack", "-adq")
			g("", "prune-packed")
			missing := mustOID(t, strings.Repeat("e", len(blob.String())))

			before := Started()
			for _, id := range []OID{blob, tree, commit} {
				if !r.HasObject(ctx, id) {
					t.Fatalf("HasObject(%s) = false", id.String())
				}
				if typ, err := r.ObjectType(ctx, id); err != nil || typ != g("", "cat-file", "-t", id.String()) {
					t.Fatalf("ObjectType(%s) = %q, %v", id.String(), typ, err)
				}
			}
			if r.HasObject(ctx, missing) {
				t.Fatal("HasObject of a missing object = true")
			}
			if _, err := r.ObjectType(ctx, missing); !errors.Is(err, ErrNotFoundObject) {
				t.Fatalf("ObjectType of a missing object: %v", err)
			}
			if c, err := r.Commit(ctx, commit); err != nil || c.Tree != tree {
				t.Fatalf("Commit = %+v, %v", c, err)
			}
			blobs, err := r.BlobsAt(ctx, []BlobSpec{{Commit: commit, Path: "f"}, {Commit: commit, Path: "nothing"}})
			if err != nil || string(blobs[0].Data) != "ledger\n" || !errors.Is(blobs[1].Err, ErrNotFoundObject) {
				t.Fatalf("BlobsAt = %+v, %v", blobs, err)
			}
			if ct, err := r.CheckTree(ctx, tree); err != nil || len(ct.Items) != 1 {
				t.Fatalf("CheckTree = %+v, %v", ct, err)
			}
			if n := Started() - before; n != 1 {
				t.Fatalf("the reads started %d processes, want 1", n)
			}

			// Written after the reader started: loose, then packed with the loose copy gone.
			later := mustOID(t, g("later\n", "hash-object", "-w", "--stdin"))
			reads := Started() - before
			if !r.HasObject(ctx, later) {
				t.Fatal("an object written after the reader started is missing")
			}
			g("", "update-ref", "refs/tags/later", later.String())
			g("", "repack", "-dq")
			g("", "prune-packed")
			if _, err := os.Lstat(loosePath(r, later)); !os.IsNotExist(err) {
				t.Fatalf("the object is still loose: %v", err)
			}
			if typ, err := r.ObjectType(ctx, later); err != nil || typ != "blob" {
				t.Fatalf("ObjectType of an object packed after the reader started = %q, %v", typ, err)
			}

			// Empty or torn (issue 30's rule): missing, and removed.
			torn, err := r.WriteBlob(ctx, []byte(strings.Repeat("torn\n", 400)))
			if err != nil {
				t.Fatal(err)
			}
			for _, keep := range []int{0, 5} {
				tear(t, r, torn, keep)
				before = Started()
				if r.HasObject(ctx, torn) {
					t.Fatalf("HasObject of a loose object cut to %d bytes = true", keep)
				}
				if _, err := os.Lstat(loosePath(r, torn)); !os.IsNotExist(err) {
					t.Fatalf("a torn loose object is left: %v", err)
				}
				reads += Started() - before
				if _, err := r.WriteBlob(ctx, []byte(strings.Repeat("torn\n", 400))); err != nil {
					t.Fatal(err)
				}
			}
			if reads != 1 {
				t.Fatalf("the reads started %d processes, want the same 1", reads)
			}
			// A body cut short ends git's read: this read fails, the next one starts anew.
			var body strings.Builder
			for i := range 200 {
				fmt.Fprintf(&body, "%x\n", sha1.Sum([]byte{byte(i)}))
			}
			cut, err := r.WriteBlob(ctx, []byte(body.String()))
			if err != nil {
				t.Fatal(err)
			}
			tree2, err := r.WriteTree(ctx, []TreeEntry{{Name: "t", Blob: cut.String()}})
			if err != nil {
				t.Fatal(err)
			}
			tear(t, r, cut, 200)
			root, err := confine.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			before = Started()
			ct, err := r.CheckTree(ctx, tree2)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.WriteTreeFiles(ctx, ct, root); err == nil {
				t.Fatal("a blob whose body is torn was read")
			}
			if b, err := r.BlobsAt(ctx, []BlobSpec{{Commit: commit, Path: "f"}}); err != nil || string(b[0].Data) != "ledger\n" {
				t.Fatalf("BlobsAt after a failed read = %+v, %v", b, err)
			}
			if n := Started() - before; n != 1 {
				t.Fatalf("after a failed read, %d processes, want 1 (the new one)", n)
			}
			r.Close()
			if r.reader.p != nil {
				t.Fatal("Close left the process running")
			}
		})
	}
}
