// Package confine keeps every filesystem write or removal that data asks for inside
// the directory it belongs to (docs: "Shared data is hostile").
//
// A path that comes from a ledger, a snapshot, an import source, an agent's
// configuration or the MCP wire is never written to or removed as given: it is
// resolved against a Root (symbolic links included, in the longest part that exists)
// and refused unless it lies inside that root. Names that become one path component
// (a snapshot tree's entry, a run or node directory) are checked by Name first. A file
// such data names for reading is read only when it is a regular file, and bounded
// (OpenRegular); one in a tree data lays out (an import source) is reached through no
// symbolic link below the tree's top (Tree).
package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// ErrOutside is the cause of every refusal of this package: a path that does not
// lie inside its root, a name that could leave it, or a symbolic link below a Tree's
// top.
var ErrOutside = errors.New("a path from data must stay inside its root")

// Root is a directory, with symbolic links resolved, under which paths are confined.
// The zero Root confines nothing and refuses every path.
type Root struct{ dir string }

// New returns the root dir, resolved. dir need not exist yet (the longest part of it
// that exists is resolved). A relative dir is refused: data never names a root.
func New(dir string) (Root, error) {
	if !filepath.IsAbs(dir) {
		return Root{}, refuse("root %q is not an absolute path", dir)
	}
	return Root{dir: RealPath(dir)}, nil
}

// Dir is the resolved root.
func (r Root) Dir() string { return r.dir }

// Path resolves p (absolute, or relative to the root) and returns it when it is the
// root or lies below it; otherwise an ErrOutside refusal naming both.
func (r Root) Path(p string) (string, error) {
	if r.dir == "" {
		return "", refuse("no root to confine %q to", p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", refuse("path %q holds a NUL byte", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	real := RealPath(p)
	if !Within(real, r.dir) {
		return "", refuse("%s resolves to %s, outside %s", p, real, r.dir)
	}
	return real, nil
}

// Below is Path for a path that must lie strictly below the root: the root itself is
// refused (removing or replacing it is never what data may ask).
func (r Root) Below(p string) (string, error) {
	real, err := r.Path(p)
	if err != nil {
		return "", err
	}
	if real == r.dir {
		return "", refuse("%s is the root %s itself", p, r.dir)
	}
	return real, nil
}

// Join joins a relative, slash-separated path from data (a snapshot entry's path, a
// record's relative path) onto the root, checking each component with Name, then
// resolves it with Path.
func (r Root) Join(rel string) (string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return "", refuse("%q is not a relative path", rel)
	}
	for c := range strings.SplitSeq(rel, "/") {
		if err := Name(c); err != nil {
			return "", err
		}
	}
	return r.Below(filepath.Join(r.dir, filepath.FromSlash(rel)))
}

// Leaf is Join for a path whose last component is to be written, replaced or
// removed itself: every component is checked with EntryName, the directories above
// it must resolve to exactly themselves under the root (no symbolic link among them, so
// nothing is written through a link planted earlier), and the last component is not
// resolved (a link there is the thing acted on, never followed).
func (r Root) Leaf(rel string) (string, error) {
	if r.dir == "" {
		return "", refuse("no root to confine %q to", rel)
	}
	if rel == "" || strings.HasPrefix(rel, "/") {
		return "", refuse("%q is not a relative path", rel)
	}
	for c := range strings.SplitSeq(rel, "/") {
		if err := EntryName(c); err != nil {
			return "", err
		}
	}
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	if parent := filepath.Dir(p); RealPath(parent) != parent {
		return "", refuse("%s goes through a symbolic link (%s resolves to %s)", p, parent, RealPath(parent))
	}
	return p, nil
}

// Name checks one path component that comes from data: not empty, not "." or "..",
// no slash, backslash or NUL, and not ".git" in any case (a component git itself
// refuses to check out).
func Name(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return refuse("the name %q is not a file name", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return refuse("the name %q holds a slash, backslash or NUL", name)
	case strings.EqualFold(name, ".git"):
		return refuse("the name %q is git's own", name)
	}
	return nil
}

// EntryName is Name for one entry of a git tree (a snapshot's file, directory or
// link): the same rules, except that a backslash is an ordinary character where it
// is not a path separator (git keeps such files on Linux and macOS, and refuses them
// only on Windows).
func EntryName(name string) error {
	if os.PathSeparator == '\\' || strings.EqualFold(name, ".git") || name == "" || name == "." || name == ".." {
		return Name(name)
	}
	if strings.ContainsAny(name, "/\x00") {
		return refuse("the name %q holds a slash or NUL", name)
	}
	return nil
}

// Within reports whether path is root or lies below it (both clean, resolved).
func Within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// RealPath resolves symbolic links in the longest part of p that exists and cleans
// the rest.
func RealPath(p string) string {
	rest := ""
	for cur := filepath.Clean(p); ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// NoSymlink refuses p when it is itself a symbolic link (an existing file that data
// asks to write through). A missing p is fine.
func NoSymlink(p string) error {
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return refuse("%s is a symbolic link", p)
	}
	return nil
}

func refuse(format string, args ...any) error {
	return &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf(format, args...), Err: ErrOutside}
}
