package git

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// This file is git-atlas's one durable-write discipline (docs/contract.md §11.12: done means durable).
// A file is written to a temporary name in its target directory, flushed, and only
// then given its name (rename or link), after which the directory is flushed, and so
// is each directory made for it up to the first that existed: neither POSIX nor Linux
// file systems promise that a name survives a power cut until its directory is synced,
// and a name given before the bytes are synced can survive with no bytes behind it.
// Nothing outside this package flushes files itself; it calls these.

// SyncDir flushes a directory, making the names created, renamed or removed in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("flush %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		// EINVAL: a file system that cannot flush a directory (some FUSE ones), where
		// there is nothing more to do.
		return fmt.Errorf("flush %s: %w", dir, err)
	}
	return nil
}

// MkdirAll makes dir and any missing parents, flushing the parent of each directory
// it made (deepest last), so that the new directories survive a power cut.
func MkdirAll(dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("mkdir %s: not a directory", dir)
		}
		return nil
	}
	var made []string
	for d := dir; ; {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	// Flush from the top: the first existing directory's entry for the first new
	// one, and so on down.
	for _, m := range slices.Backward(made) {
		if err := SyncDir(filepath.Dir(m)); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes data to path durably: a temporary file beside it, written,
// flushed and renamed over path, then path's directory (and any it had to make)
// flushed. A failed write leaves no temporary file behind.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := CreateFile(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// File is a file being written durably to its final name (CreateFile): write to it,
// then Commit; Abort (or a failed Commit) removes the temporary file.
type File struct {
	*os.File
	path string
	perm os.FileMode
	done bool
}

// CreateFile starts a durable write of path (see WriteFile) for a writer that
// streams its content.
func CreateFile(path string, perm os.FileMode) (*File, error) {
	dir := filepath.Dir(path)
	if err := MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Commit flushes the file, names it (replacing what had the name) and flushes its
// directory.
func (f *File) Commit() error { return f.commit(false) }

// CommitNew is Commit for a file that must not replace another: it links the file
// into place, failing with an error that is os.ErrExist when something has the name
// already (made meanwhile too), then drops the temporary name.
func (f *File) CommitNew() error { return f.commit(true) }

func (f *File) commit(create bool) error {
	if f.done {
		return errors.New("durable file: already committed or aborted")
	}
	f.done = true
	tmp := f.Name()
	err := f.Chmod(f.perm)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil && create:
		err = os.Link(tmp, f.path)
		_ = os.Remove(tmp)
	case err == nil:
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return SyncDir(filepath.Dir(f.path))
}

// Abort drops the write: the temporary file is removed, path is untouched.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// Rename renames oldpath to newpath durably: the directory of newpath is flushed,
// and oldpath's too when it is another one, so that after a power cut the file is
// under one of its names (never neither).
func Rename(oldpath, newpath string) error {
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(newpath)); err != nil {
		return err
	}
	if filepath.Dir(oldpath) != filepath.Dir(newpath) {
		return SyncDir(filepath.Dir(oldpath))
	}
	return nil
}

// Remove removes path and flushes its directory.
func Remove(path string) error {
	if err := os.Remove(path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// ErrNoSpace means the disk (or a quota) is full: it is reported as such, never
// retried as a race (docs/contract.md §11.12).
var ErrNoSpace = errors.New("no space left on device")

// IsNoSpace reports whether err is, or comes from, an out-of-space failure: ENOSPC or
// EDQUOT from a system call, or a git process that said so.
func IsNoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNoSpace) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	if ge, ok := errors.AsType[*Error](err); ok {
		s := strings.ToLower(ge.Stderr)
		return strings.Contains(s, "no space left on device") || strings.Contains(s, "disk quota exceeded")
	}
	return false
}

// noSpace wraps err with ErrNoSpace when it is an out-of-space failure, so that
// errors.Is(err, ErrNoSpace) holds whatever reported it.
func noSpace(err error) error {
	if err != nil && !errors.Is(err, ErrNoSpace) && IsNoSpace(err) {
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// objectDirSlack is how far before a git process started a directory's time may lie
// and still count as changed by it: file times come from a coarse kernel clock that
// lags the one time.Now reads.
const objectDirSlack = 2 * time.Second

// objectsWritten finishes a git process that may have written objects (started at
// start, ended with err): git flushes each object file before it links it into
// objects/xx (core.fsync, globalArgs) but never flushes the directory, so every
// object directory changed since start is flushed here, and objects/ when one was
// made. On failure nothing is flushed; a process that ran out of space leaves its
// temporary object files behind, which are removed (removeTmpObjects), and the error
// says the disk is full.
func (r *Repository) objectsWritten(start time.Time, err error) error {
	if err != nil {
		if IsNoSpace(err) {
			r.removeTmpObjects(start)
		}
		return noSpace(err)
	}
	return r.syncObjectDirs(start)
}

// syncObjectDirs flushes objects/xx, objects/pack and objects/ when changed since start.
func (r *Repository) syncObjectDirs(start time.Time) error {
	objects := filepath.Join(r.CommonDir, "objects")
	since := start.Add(-objectDirSlack)
	ents, err := os.ReadDir(objects)
	if err != nil {
		return fmt.Errorf("flush objects: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() || (!isFanout(e.Name()) && e.Name() != "pack") {
			continue
		}
		if fi, err := e.Info(); err == nil && !fi.ModTime().Before(since) {
			if err := r.flushDir(filepath.Join(objects, e.Name()), fi.ModTime()); err != nil {
				return err
			}
		}
	}
	if fi, err := os.Stat(objects); err == nil && !fi.ModTime().Before(since) {
		return r.flushDir(objects, fi.ModTime())
	}
	return nil
}

// dirFlush is when a directory was flushed and the modification time it had then.
type dirFlush struct{ at, mtime time.Time }

// fileTimeTick bounds the granularity of file times (the kernel's coarse clock ticks
// every 1-10 ms).
const fileTimeTick = 50 * time.Millisecond

// flushDir flushes dir (modified at mtime) unless this repository flushed it already
// at that same modification time, which was then more than a tick old: file times
// tick coarsely, and a change in the same tick as the flush would keep the time.
func (r *Repository) flushDir(dir string, mtime time.Time) error {
	if r.flushed == nil {
		return SyncDir(dir)
	}
	if v, ok := r.flushed.Load(dir); ok {
		if f := v.(dirFlush); f.mtime.Equal(mtime) && f.at.Sub(mtime) > fileTimeTick {
			return nil
		}
	}
	at := time.Now()
	if err := SyncDir(dir); err != nil {
		return err
	}
	r.flushed.Store(dir, dirFlush{at: at, mtime: mtime})
	return nil
}

func isFanout(name string) bool {
	if len(name) != 2 {
		return false
	}
	for _, c := range name {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// TmpObjectPrefix starts the names of git's (and go-git's, and git-atlas's own)
// temporary object files: objects/xx/tmp_obj_*, objects/pack/tmp_obj_*,
// objects/pack/tmp_pack_*, objects/pack/tmp_idx_*.
const TmpObjectPrefix = "tmp_obj_"

func isTmpObject(name string) bool {
	return strings.HasPrefix(name, TmpObjectPrefix) || strings.HasPrefix(name, "tmp_pack_") ||
		strings.HasPrefix(name, "tmp_idx_")
}

// removeTmpObjects removes the temporary object files made since start, after a git
// process failed for want of space (git leaves them then). A concurrent git's own
// temporary file made in the same moment may go too: its write fails, which on a full
// disk it was about to do anyway, and nothing it had named is touched.
func (r *Repository) removeTmpObjects(start time.Time) {
	since := start.Add(-objectDirSlack)
	for _, l := range r.tmpObjects(0) {
		if !l.ModTime.Before(since) {
			_ = os.Remove(l.Path)
		}
	}
}

// Leftover kinds.
const (
	LeftoverTmpObject = "tmp-object" // a temporary object or pack file of a failed write
	LeftoverTmpIndex  = "tmp-index"  // a snapshot's temporary index a killed process left
)

// Leftover is a file a failed or killed write left in the object store.
type Leftover struct {
	Kind    string
	Path    string
	Size    int64
	ModTime time.Time
}

// Leftovers lists the temporary files failed or killed writes left, older than age:
// temporary object files in the object store (objects/xx/, objects/pack/, objects/)
// and snapshots' temporary indexes (atlas/tmp/, each linked worktree's git dir).
func (r *Repository) Leftovers(age time.Duration) []Leftover {
	out := r.tmpObjects(age)
	dirs := []string{r.Layout().Tmp()}
	if ents, err := os.ReadDir(filepath.Join(r.CommonDir, "worktrees")); err == nil {
		for _, e := range ents {
			dirs = append(dirs, filepath.Join(r.CommonDir, "worktrees", e.Name()))
		}
	}
	now := time.Now()
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasPrefix(e.Name(), tempIndexPrefix) {
				continue
			}
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) >= age {
				out = append(out, Leftover{Kind: LeftoverTmpIndex, Path: filepath.Join(d, e.Name()), Size: fi.Size(), ModTime: fi.ModTime()})
			}
		}
	}
	return out
}

// tmpObjects lists the temporary object files older than age.
func (r *Repository) tmpObjects(age time.Duration) []Leftover {
	objects := filepath.Join(r.CommonDir, "objects")
	dirs := []string{objects, filepath.Join(objects, "pack")}
	if ents, err := os.ReadDir(objects); err == nil {
		for _, e := range ents {
			if e.IsDir() && isFanout(e.Name()) {
				dirs = append(dirs, filepath.Join(objects, e.Name()))
			}
		}
	}
	now := time.Now()
	var out []Leftover
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() || !isTmpObject(e.Name()) {
				continue
			}
			fi, err := e.Info()
			if err != nil || now.Sub(fi.ModTime()) < age {
				continue
			}
			out = append(out, Leftover{Kind: LeftoverTmpObject, Path: filepath.Join(d, e.Name()), Size: fi.Size(), ModTime: fi.ModTime()})
		}
	}
	return out
}

// adminWritten finishes a git process (started at start, ended with err) that wrote
// into a worktree's own git dir, admin (<common dir>/worktrees/<id> for a linked
// worktree): HEAD, index, ORIG_HEAD, a pseudo ref such as MERGE_HEAD, logs/HEAD,
// locked, or the whole registration `git worktree add` makes. git flushes each such
// file before renaming it into place (core.fsync: reference, index; globalArgs) and
// flushes no directory, as for the refs of the common dir (syncRefDirs): so admin is
// flushed here, every directory below it that changed since start (logs/ when a
// reflog was made), and every one above it up to the common dir that changed
// (worktrees/ when the registration is new, the common dir when worktrees/ is), before
// the command can report success (docs/contract.md §11.12). On failure nothing is
// flushed.
func (r *Repository) adminWritten(start time.Time, admin string, err error) error {
	if err != nil {
		return noSpace(err)
	}
	since := start.Add(-objectDirSlack)
	changed := func(dir string) bool {
		fi, err := os.Stat(dir)
		return err == nil && !fi.ModTime().Before(since)
	}
	var below []string
	_ = filepath.WalkDir(admin, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != admin && changed(p) {
			below = append(below, p)
		}
		return nil
	})
	for _, d := range below {
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	if err := SyncDir(admin); err != nil {
		return err
	}
	common := filepath.Clean(r.CommonDir)
	for d := filepath.Dir(admin); strings.HasPrefix(d, common) && len(d) >= len(common); d = filepath.Dir(d) {
		if changed(d) {
			if err := SyncDir(d); err != nil {
				return err
			}
		}
		if d == common {
			break
		}
	}
	return nil
}

// syncFile flushes the bytes of the regular file at path (opened for reading, never
// following a link).
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("flush %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("flush %s: %w", path, err)
	}
	return nil
}
