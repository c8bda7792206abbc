package git

import (
	"io"
	"os"
	"path/filepath"
	"strings"
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
			_ = os.Remove(t)
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
		_ = os.Remove(f.Name())
	}
	return err
}

// A cache can also be dated by the ledger's refs (WriteCacheStamped): its modification
// time set to the newest time of the files whose change changes the refs under
// refs/atlas/runs (the loose directory, its parent, packed-refs) as they were before
// the listing it holds, written only when that time is old enough that the file clock
// has certainly moved on since (file times come from a clock that advances in ticks
// of at most a few milliseconds), and only when those files are still as they were.
// A later change to any ledger ref, by any writer, then dates a watched file after the
// cache, so RefsMark.Unchanged(stamp) says whether the refs are still those the cache
// lists: true means no for-each-ref is needed. (A system clock stepped back by more
// than the settling time between the two could hide a change; so could a file system
// that does not keep modification times.)

// settle is how old the newest ref change must be for the file clock to be past it.
const settle = 100 * time.Millisecond

// RefsMark is the state of the ledger's ref files, taken before a listing.
type RefsMark struct {
	times  []time.Time
	newest time.Time
	ok     bool // refs are files, and the newest change has settled
}

func (r *Repository) refsWatch() []string { return r.HintWatch()[:3] }

// MarkRefs takes the mark before the refs are listed.
func (r *Repository) MarkRefs() RefsMark {
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); err == nil {
		return RefsMark{}
	}
	times, newest := watchTimes(r.refsWatch())
	return RefsMark{times: times, newest: newest, ok: time.Since(newest) > settle}
}

// Settled reports whether a cache written from a listing after this mark can be
// stamped.
func (m RefsMark) Settled() bool { return m.ok }

// Unchanged reports whether no ref file changed after a cache stamped stamp was
// written: every watched file, as the mark found it, is no newer than stamp.
func (m RefsMark) Unchanged(stamp time.Time) bool {
	if m.times == nil {
		return false
	}
	for _, t := range m.times {
		if t.After(stamp) {
			return false
		}
	}
	return true
}

// ReadCacheStamped is ReadCache with the file's modification time, as a string: it
// is read once, into the memory the string keeps (no copy), so that a reader's fields
// can be substrings of it. A 1,000-run summary cache is 600 kB, and the copies a
// listing made of it were a fifth of the memory `resume --brief` touched.
func (r *Repository) ReadCacheStamped(name string) (string, time.Time, error) {
	f, err := os.Open(r.CachePath(name))
	if err != nil {
		return "", time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", time.Time{}, err
	}
	var b strings.Builder
	b.Grow(int(fi.Size()) + 1) // one read of the size it has; a file that grew meanwhile is read whole too
	_, err = io.Copy(&b, f)
	return b.String(), fi.ModTime(), err
}

// WriteCacheStamped replaces the cache file name with data dated by mark (see above),
// and reports whether it did: not when the mark had not settled or the ref files
// changed since it was taken.
func (r *Repository) WriteCacheStamped(name string, data []byte, mark RefsMark) bool {
	if !mark.ok {
		return false
	}
	path := r.CachePath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return false
	}
	f, err := os.CreateTemp(filepath.Dir(path), name+"-*.tmp")
	if err != nil {
		return false
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	stamp := mark.newest
	if stamp.IsZero() {
		stamp = time.Unix(0, 0)
	}
	if err == nil {
		err = os.Chtimes(tmp, stamp, stamp)
	}
	if err == nil {
		if now, _ := watchTimes(r.refsWatch()); !sameTimes(mark.times, now) {
			err = ErrHintRace
		}
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return false
	}
	removeStaleTemps(filepath.Dir(path), name)
	return true
}
