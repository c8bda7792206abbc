package git

import (
	"os"
	"path/filepath"
	"time"
)

// CachePath is where the cache file name lives: <git-common-dir>/atlas/cache/<name>.
// A cache holds derived data (what can be read again from the repository), so it is
// read whole, replaced whole, and never flushed: losing it costs time, never data.
func (r *Repository) CachePath(name string) string {
	return r.Layout().Cache(name)
}

// ReadCache returns the content of the cache file name.
func (r *Repository) ReadCache(name string) ([]byte, error) {
	return os.ReadFile(r.CachePath(name))
}

// WriteCache replaces the cache file name with data: a temporary file renamed into
// place, so a reader sees the old content or the new, and concurrent writers leave
// one of theirs. The file is as readable as the refs it is derived from. Temporary
// files that a killed writer left are removed.
func (r *Repository) WriteCache(name string, data []byte) error {
	path := r.CachePath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	if err := writeAtomic(path, name+"-*.tmp", data); err != nil {
		return err
	}
	removeStaleTemps(filepath.Dir(path), name)
	return nil
}

// staleTemp is the age past which a cache's temporary file is the leftover of a
// writer killed between writing it and renaming it: a live writer holds one for
// milliseconds.
const staleTemp = 10 * time.Minute

func removeStaleTemps(dir, name string) {
	temps, _ := filepath.Glob(filepath.Join(dir, name+"-*.tmp"))
	for _, t := range temps {
		if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) > staleTemp {
			os.Remove(t)
		}
	}
}

// writeAtomic writes data to path through a temporary file (pattern, beside path) and
// a rename, mode 0644 (not CreateTemp's 0600): a reader sees the old file or the new.
func writeAtomic(path, pattern string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
