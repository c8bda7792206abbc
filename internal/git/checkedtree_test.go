package git

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// encodeRaw writes tree entries as a tree object holds them.
func encodeRaw(entries []TreeEntryRaw, idLen int) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.Mode + " " + e.Name + "\x00")
		id, _ := hex.DecodeString(e.ID)
		b.Write(append(id, make([]byte, idLen)...)[:idLen])
	}
	return b.Bytes()
}

var anID = strings.Repeat("ab", 20)

// ParseTree takes what git writes and refuses, naming it, every entry no checkout
// may write.
func TestParseTree(t *testing.T) {
	good := []TreeEntryRaw{{"100644", "a.txt", anID}, {"100755", "run.sh", anID}, {"120000", "link", anID},
		{"40000", "dir", anID}, {"160000", "sub", anID}, {"100644", `back\slash "q"*[x]`, anID}, {"100644", ".gitignore", anID}}
	got, err := ParseTree(encodeRaw(good, 20), 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(good) {
		t.Fatalf("ParseTree: %v", got)
	}
	for i := range good {
		if got[i] != good[i] {
			t.Fatalf("entry %d: %+v, want %+v", i, got[i], good[i])
		}
	}
	for _, bad := range [][]TreeEntryRaw{
		{{"100644", "..", anID}},
		{{"40000", ".", anID}},
		{{"100644", "", anID}},
		{{"100644", "../.bashrc", anID}},
		{{"40000", ".GIT", anID}},
		{{"40000", ".Git", anID}},
		{{"100644", "a", anID}, {"40000", "a", anID}},
		{{"100664", "a", anID}},
		{{"040000", "a", anID}},
		{{"644", "a", anID}},
	} {
		_, err := ParseTree(encodeRaw(bad, 20), 20)
		if !errors.Is(err, ErrBadTree) || !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("ParseTree(%+v): %v, want a refusal", bad, err)
		}
		if name := bad[len(bad)-1].Name; !strings.Contains(err.Error(), `"`+name+`"`) && !strings.Contains(err.Error(), "without a mode") {
			t.Fatalf("ParseTree(%+v): %q does not name the entry", bad, err)
		}
	}
	// Truncated: no id, half an id, no NUL.
	for _, data := range []string{"100644 a\x00", "100644 a\x00abc", "100644 a", "100644"} {
		if _, err := ParseTree([]byte(data), 20); !errors.Is(err, ErrBadTree) {
			t.Fatalf("ParseTree(%q): %v, want a refusal", data, err)
		}
	}
}

// FuzzSnapshotTree: whatever bytes a tree object holds, ParseTree never panics, and
// what it accepts is only entries a checkout may write: each name accepted by
// confine.EntryName, each mode one git writes, no name twice, and the entries encode
// back to exactly the bytes read (nothing skipped, nothing invented). The seed corpus
// is testdata/fuzz/FuzzSnapshotTree.
func FuzzSnapshotTree(f *testing.F) {
	f.Add(encodeRaw([]TreeEntryRaw{{"100644", "a.txt", anID}, {"40000", "dir", anID}}, 20))
	f.Add(encodeRaw([]TreeEntryRaw{{"40000", "..", anID}}, 20))
	f.Add(encodeRaw([]TreeEntryRaw{{"120000", "a", anID}, {"40000", "a", anID}}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, idLen := range []int{20, 32} {
			entries, err := ParseTree(data, idLen)
			if err != nil {
				if !errors.Is(err, ErrBadTree) {
					t.Fatalf("ParseTree: %v is not a refusal", err)
				}
				continue
			}
			seen := map[string]bool{}
			for _, e := range entries {
				if err := confine.EntryName(e.Name); err != nil {
					t.Fatalf("accepted %q: %v", e.Name, err)
				}
				if _, ok := treeModes[e.Mode]; !ok {
					t.Fatalf("accepted mode %q", e.Mode)
				}
				if seen[e.Name] {
					t.Fatalf("accepted %q twice", e.Name)
				}
				seen[e.Name] = true
				if len(e.ID) != 2*idLen {
					t.Fatalf("id %q of %d bytes", e.ID, idLen)
				}
			}
			if back := encodeRaw(entries, idLen); !bytes.Equal(back, data) {
				t.Fatalf("entries %+v encode to %q, read from %q", entries, back, data)
			}
		}
	})
}

// CheckTree walks a tree git wrote, every level, in both object formats, and refuses
// a hand-made one wherever the bad entry sits.
func TestCheckTree(t *testing.T) {
	t.Parallel()
	for _, k := range []kind{{name: "cli", format: "sha1", noGo: true}, {name: "sha256", format: "sha256"}} {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, g := testRepo(t, k)
			for _, f := range []string{"a.txt", "d/b.txt", "d/e/c.txt"} {
				p := filepath.Join(r.TopLevel, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("a.txt", filepath.Join(r.TopLevel, "l")); err != nil {
				t.Fatal(err)
			}
			g("", "add", "-A")
			tree := g("", "write-tree")
			ct, err := r.CheckTree(ctx, mustOID(t, tree))
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, it := range ct.Items {
				paths = append(paths, it.Mode+" "+it.Path)
			}
			if got := strings.Join(paths, ","); got != "100644 a.txt,120000 l,100644 d/b.txt,100644 d/e/c.txt" {
				t.Fatalf("items: %s", got)
			}
			if got := strings.Join(ct.Dirs, ","); got != "d,d/e" {
				t.Fatalf("dirs: %s", got)
			}
			// A ".." two levels down.
			blob := g("x", "hash-object", "-w", "--stdin")
			idLen := 20
			if k.format == "sha256" {
				idLen = 32
			}
			lit := func(entries ...TreeEntryRaw) string {
				return g(string(encodeRaw(entries, idLen)), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
			}
			bad := lit(TreeEntryRaw{"40000", "d", lit(TreeEntryRaw{"40000", "e", lit(TreeEntryRaw{"100644", "..", blob})})})
			if _, err := r.CheckTree(ctx, mustOID(t, bad)); !errors.Is(err, ErrBadTree) || !strings.Contains(err.Error(), `in "d/e"`) {
				t.Fatalf("CheckTree of a tree with d/e/..: %v", err)
			}
			if _, err := ParseOID("--output=x"); err == nil {
				t.Fatal("an option parsed as a tree id")
			}
		})
	}
}

// WriteTreeFiles never writes through a symbolic link, whether the link was there
// before or written by the same call (a tree that names "a" as a link and "a/b" as
// a file: a case-insensitive file system can make that of two distinct names), and
// never leaves its root.
func TestWriteTreeFilesFollowsNoLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kind{name: "cli", format: "sha1", noGo: true})
	outside := t.TempDir()
	file := g("owned", "hash-object", "-w", "--stdin")
	link := g(outside, "hash-object", "-w", "--stdin")
	dotLink := g(".", "hash-object", "-w", "--stdin")
	for name, tree := range map[string]*CheckedTree{
		"link to outside then a file below": {Items: []TreeItem{{Mode: "120000", Type: "blob", ID: link, Path: "a"}, {Mode: "100644", Type: "blob", ID: file, Path: "a/b"}}},
		"link then a directory below":       {Items: []TreeItem{{Mode: "120000", Type: "blob", ID: link, Path: "a"}}, Dirs: []string{"a/sub"}},
		"link inside then a file below":     {Items: []TreeItem{{Mode: "120000", Type: "blob", ID: dotLink, Path: "a"}, {Mode: "100644", Type: "blob", ID: file, Path: "a/b"}}},
		"dotdot in a path":                  {Items: []TreeItem{{Mode: "100644", Type: "blob", ID: file, Path: "x/../../b"}}},
	} {
		dir := filepath.Join(t.TempDir(), "to")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		root, err := confine.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = r.WriteTreeFiles(ctx, tree, root)
		if !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("%s: %v, want a refusal", name, err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Fatalf("%s: wrote %v outside", name, entries)
		}
		if _, err := os.Lstat(filepath.Join(dir, "b")); err == nil {
			t.Fatalf("%s: wrote through the link into the root", name)
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(dir), "b")); err == nil {
			t.Fatalf("%s: wrote beside the root", name)
		}
	}
	// A link already at a file's place is replaced, not followed.
	dir := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
	root, _ := confine.New(dir)
	if err := r.WriteTreeFiles(ctx, &CheckedTree{Items: []TreeItem{{Mode: "100644", Type: "blob", ID: file, Path: "f"}}}, root); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "owned" {
		t.Fatalf("f: %q", b)
	}
}
