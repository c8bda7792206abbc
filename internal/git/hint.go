package git

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The hint, <git-common-dir>/atlas/hint, is derived data for the post-checkout hook,
// which is a few lines of sh that must not start git-atlas in the common case. What
// the hint says (package hooks) is derived from the ledger; this file keeps the one
// property that makes it safe to believe: a hint whose modification time is not older
// than every file in HintWatch describes the refs as they are.
//
// Every change to a run's ledger ref, by any writer (git-atlas of any version, plain
// `git update-ref`, fetch, push into this repository, pack-refs), renames a lock file
// in refs/atlas/runs/ or rewrites packed-refs, which sets that directory's or that
// file's modification time to the kernel's clock. WriteHint stamps the hint with the
// newest of those times as it saw them before reading the ledger, and reads only once
// the clock has moved past it: a later change is then stamped later than the hint,
// and `[ FILE -nt HINT ]` in the hook sees it. (File times advance in ticks of a few
// milliseconds, so a change in the tick the hint was derived in could not be told
// from one before it: that is why the clock must have moved on first.) When a watched
// file changed during the read, or the clock cannot be seen moving, no hint is left:
// a missing hint sends the hook to git-atlas.

// HintPath is the hint's file.
func (r *Repository) HintPath() string { return r.Layout().Hint() }

// HintWatch lists the files whose change makes the hint stale: the ledger's refs
// (the directory of loose run refs, its parent, packed-refs) and the config files
// that can move the managed worktrees' root. A file that does not exist counts when
// it appears. The hook script checks the same list (hooks.Script).
func (r *Repository) HintWatch() []string {
	files := []string{
		filepath.Join(r.CommonDir, filepath.FromSlash("refs/atlas/runs")),
		filepath.Join(r.CommonDir, filepath.FromSlash("refs/atlas")),
		filepath.Join(r.CommonDir, "packed-refs"),
		filepath.Join(r.CommonDir, "config"),
	}
	if home := os.Getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	return files
}

// HintInUse reports whether a hint file exists: someone reads it (`hooks install`
// made it), so ledger writers keep it up to date.
func (r *Repository) HintInUse() bool {
	_, err := os.Lstat(r.HintPath())
	return err == nil
}

// RemoveHint deletes the hint (a missing hint is always safe).
func (r *Repository) RemoveHint() error {
	if err := os.Remove(r.HintPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ErrHintRace is WriteHint's answer when the ledger changed while it was read: the
// hint was removed instead of written.
var ErrHintRace = errors.New("the ledger changed while the hint was derived")

// WriteHint replaces the hint with what derive returns, derived from the ledger as it
// is once the clock has moved past the last change to it (see above). A repository
// whose refs are not files (reftable) gets no hint. Any failure leaves no hint.
func (r *Repository) WriteHint(derive func() ([]byte, error)) (err error) {
	path := r.HintPath()
	defer func() {
		if err != nil {
			_ = r.RemoveHint()
		}
	}()
	if _, err := os.Stat(filepath.Join(r.CommonDir, "reftable")); err == nil {
		return fmt.Errorf("refs in reftable: no hint")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	watch := r.HintWatch()
	before, newest := watchTimes(watch)
	f, err := os.CreateTemp(filepath.Dir(path), "hint-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	// The temporary file's time is the kernel's clock as file times see it: wait for
	// it to pass the newest change (at most a tick; a clock stepped back gives up).
	for i := 0; ; i++ {
		if _, err := f.WriteAt([]byte{0}, 0); err != nil { // a write stamps the file with the clock
			return err
		}
		if err := f.Truncate(0); err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if fi.ModTime().After(newest) {
			break
		}
		if i == 50 {
			return fmt.Errorf("the file clock does not pass %s", newest)
		}
		time.Sleep(time.Millisecond)
	}
	data, err := derive()
	if err != nil {
		return err
	}
	if after, _ := watchTimes(watch); !sameTimes(before, after) {
		return ErrHintRace
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Not older than any watched file (the newest of them, exactly), older than any
	// change to come.
	stamp := newest
	if stamp.IsZero() {
		stamp = time.Unix(0, 0)
	}
	if err := os.Chtimes(f.Name(), stamp, stamp); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	removeStaleTemps(filepath.Dir(path), "hint")
	return nil
}

// watchTimes returns each watched file's modification time (zero when it does not
// exist) and the newest of them.
func watchTimes(files []string) ([]time.Time, time.Time) {
	times := make([]time.Time, len(files))
	var newest time.Time
	for i, name := range files {
		if fi, err := os.Stat(name); err == nil {
			times[i] = fi.ModTime()
			if times[i].After(newest) {
				newest = times[i]
			}
		}
	}
	return times, newest
}

func sameTimes(a, b []time.Time) bool {
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}
