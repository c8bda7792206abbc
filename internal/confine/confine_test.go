package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRootConfines(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(root, "inner")); err != nil {
		t.Fatal(err)
	}
	r, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	ok := []string{"sub", "sub/new/file", "inner/x", filepath.Join(root, "sub"), "missing/deeper"}
	for _, p := range ok {
		if _, err := r.Path(p); err != nil {
			t.Errorf("Path(%q): %v", p, err)
		}
	}
	bad := []string{"..", "../outside", "escape", "escape/file", outside, "sub/../../outside", "/etc/passwd", "a\x00b"}
	for _, p := range bad {
		if _, err := r.Path(p); !errors.Is(err, ErrOutside) {
			t.Errorf("Path(%q) = %v, want ErrOutside", p, err)
		}
	}
	if _, err := r.Below(root); !errors.Is(err, ErrOutside) {
		t.Errorf("Below(root) = %v, want ErrOutside", err)
	}
	if _, err := New("relative"); err == nil {
		t.Error("New(relative) accepted")
	}
	if _, err := (Root{}).Path(root); err == nil {
		t.Error("the zero Root accepted a path")
	}
}

func TestJoinAndName(t *testing.T) {
	t.Parallel()
	r, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"a", "a/b/c.txt", ".gitignore", ".github/x"} {
		if _, err := r.Join(rel); err != nil {
			t.Errorf("Join(%q): %v", rel, err)
		}
	}
	for _, rel := range []string{"", "/abs", "..", "../x", "a/../../x", "a//b", "./a", "a/.", ".git/config", "x/.GIT/hooks", "a\\..\\b", "a\x00"} {
		if _, err := r.Join(rel); !errors.Is(err, ErrOutside) {
			t.Errorf("Join(%q) = %v, want ErrOutside", rel, err)
		}
	}
}

func TestNoSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "l")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	if err := NoSymlink(link); !errors.Is(err, ErrOutside) {
		t.Errorf("NoSymlink(link) = %v", err)
	}
	if err := NoSymlink(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("NoSymlink(missing) = %v", err)
	}
}

// EntryName is Name for a git tree's entry: a backslash is an ordinary character
// where it is not a separator, everything else Name refuses is refused.
func TestEntryName(t *testing.T) {
	for _, bad := range []string{"", ".", "..", ".git", ".GIT", "a/b", "a\x00b"} {
		if err := EntryName(bad); !errors.Is(err, ErrOutside) {
			t.Errorf("EntryName(%q) = %v, want a refusal", bad, err)
		}
	}
	for _, good := range []string{"a.txt", ".gitignore", "..a", "git", `quote"and*[x]`} {
		if err := EntryName(good); err != nil {
			t.Errorf("EntryName(%q) = %v", good, err)
		}
	}
	if err := EntryName(`back\slash`); (err == nil) != (os.PathSeparator != '\\') {
		t.Errorf(`EntryName("back\slash") = %v`, err)
	}
}

// Leaf refuses a path whose directories go through a symbolic link, and does not
// resolve its last component (a link there is what is acted on).
func TestLeaf(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(dir, "in")); err != nil {
		t.Fatal(err)
	}
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"out/x", "in/x", "../x", "d/../../x", "/abs", "", "d/.git/config"} {
		if p, err := r.Leaf(bad); !errors.Is(err, ErrOutside) {
			t.Errorf("Leaf(%q) = %q, %v; want a refusal", bad, p, err)
		}
	}
	for rel, want := range map[string]string{"x": "x", "d/x": "d/x", "out": "out", "new/deeper/x": "new/deeper/x"} {
		if p, err := r.Leaf(rel); err != nil || p != filepath.Join(r.Dir(), want) {
			t.Errorf("Leaf(%q) = %q, %v", rel, p, err)
		}
	}
}
