package git

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LocalPath is where the local state file name lives: <git-common-dir>/atlas/<name>.
// Local state belongs to this repository alone: it is not under refs/, so push, pull
// and every clone leave it where it is (the trust records of docs/contract.md §10 live there).
func (r *Repository) LocalPath(name string) string {
	return r.Layout().Local(name)
}

// ReadLocal returns the content of the local state file name, nil when there is none.
func (r *Repository) ReadLocal(name string) ([]byte, error) {
	data, err := os.ReadFile(r.LocalPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// WriteLocal replaces the local state file name with data, durably (docs/contract.md §11
// invariant 12): a temporary file in the same directory, written and fsynced, renamed
// into place, then the directory fsynced (and every directory it had to make, up to
// the first that existed), so a reader sees the old content or the new, and once it
// returns a crash cannot take the new content back. A ledger write that relies on it
// (the trust of the commands a run this repository wrote carries) comes after.
// Callers that read, change and write serialize on Mutex.
func (r *Repository) WriteLocal(name string, data []byte) error {
	path := r.LocalPath(name)
	dir := filepath.Dir(path)
	made, err := mkdirDurable(dir)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*") // hidden: ListLocal skips it
	if err != nil {
		return err
	}
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	for _, d := range append([]string{dir}, made...) {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// mkdirDurable makes dir and its missing parents and returns the parents of what it
// made (each holds a new entry to flush), nearest first.
func mkdirDurable(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	parents := make([]string, 0, len(missing))
	for _, d := range missing {
		parents = append(parents, filepath.Dir(d))
	}
	return parents, nil
}

// syncDir flushes a directory's entries (names made, renamed or removed in it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveLocal removes the local state file name, durably (its directory fsynced); a
// missing one is no error.
func (r *Repository) RemoveLocal(name string) error {
	path := r.LocalPath(name)
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// ListLocal returns the names of the files in the local state directory dir, less
// the hidden temporary files of writers.
func (r *Repository) ListLocal(dir string) ([]string, error) {
	ents, err := os.ReadDir(r.LocalPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// LocalOnce returns the local state file name, making it first with what make
// returns when there is none: written and fsynced under a temporary name, then
// linked into place (never replacing one that appeared meanwhile: then that one is
// read and returned), the directory fsynced. Every process of the repository gets the
// same content, made once (a random key).
func (r *Repository) LocalOnce(name string, make func() ([]byte, error)) ([]byte, error) {
	path := r.LocalPath(name)
	if data, err := os.ReadFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	data, err := make()
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	made, err := mkdirDurable(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return os.ReadFile(path)
		}
		return nil, err
	}
	for _, d := range append([]string{dir}, made...) {
		if err := syncDir(d); err != nil {
			return nil, err
		}
	}
	return data, nil
}
