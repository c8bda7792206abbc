package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Tree is a directory whose contents are read through no symbolic link: each
// component of a path below Dir is opened on its own, relative to the directory
// above it and without following a link, so a link anywhere below Dir is refused
// (ErrOutside), never followed out of the tree (an import source, where a committed
// link could point at another project's files). Dir itself is opened as named, links
// included: whoever named it chose it.
type Tree struct{ Dir string }

// ReadDir lists the directory p (Dir, or a path below it: absolute, or relative to
// Dir), sorted by name.
func (t Tree) ReadDir(p string) ([]fs.DirEntry, error) {
	f, err := t.open(p, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// OpenRegular opens the file p (absolute, or relative to Dir) as the package's
// OpenRegular does (a regular file of at most max bytes, without blocking), through
// no symbolic link below Dir: a link as its last component is not a regular file
// (RegularError), one above it is refused.
func (t Tree) OpenRegular(p string, max int64) (*os.File, int64, error) {
	f, err := t.open(p, unix.O_NONBLOCK)
	if err != nil {
		return nil, 0, err
	}
	return checkRegular(f, max)
}

// open opens p, its last component with flags, through no symbolic link below Dir.
func (t Tree) open(p string, flags int) (*os.File, error) {
	if t.Dir == "" {
		return nil, refuse("no directory to read %q in", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.Dir, p)
	}
	root, p := filepath.Clean(t.Dir), filepath.Clean(p)
	if !Within(p, root) {
		return nil, refuse("%s is not below %s", p, root)
	}
	dir, err := openAt(unix.AT_FDCWD, root, root, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	var names []string
	if p != root {
		rel, _ := filepath.Rel(root, p)
		names = strings.Split(rel, string(filepath.Separator))
	}
	cur := root
	for i, name := range names {
		cur = filepath.Join(cur, name)
		f := unix.O_DIRECTORY
		if i == len(names)-1 {
			f = flags
		}
		next, err := openAt(dir, name, cur, f|unix.O_NOFOLLOW)
		switch {
		case err == nil, !isLink(dir, name):
		case f&unix.O_DIRECTORY == 0:
			// A file that is a link is no regular file, as a FIFO is not.
			err = &RegularError{Path: cur, What: "a symbolic link"}
		default:
			err = refuse("%s is a symbolic link, never followed below %s", cur, root)
		}
		_ = unix.Close(dir) // only read
		if err != nil {
			return nil, err
		}
		dir = next
	}
	return os.NewFile(uintptr(dir), p), nil
}

// openAt opens name in the directory dirfd for reading, as path (its name in errors).
func openAt(dirfd int, name, path string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|flags, 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// isLink reports whether name in the directory dirfd is a symbolic link.
func isLink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
