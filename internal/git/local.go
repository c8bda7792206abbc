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
// and every clone leave it where it is (the trust records of SPEC §10 live there).
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

// WriteLocal replaces the local state file name with data: a temporary file renamed
// into place, so a reader sees the old content or the new. Callers that read, change
// and write serialize on Mutex.
func (r *Repository) WriteLocal(name string, data []byte) error {
	path := r.LocalPath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	return writeAtomic(path, "."+filepath.Base(path)+"-*", data) // hidden: ListLocal skips it
}

// RemoveLocal removes the local state file name; a missing one is no error.
func (r *Repository) RemoveLocal(name string) error {
	err := os.Remove(r.LocalPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
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
