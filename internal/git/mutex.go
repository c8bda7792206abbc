package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// Mutex takes an advisory, process-wide exclusive lock named name under
// <common-dir>/atlas/mutex/ and returns its release. It only saves work: git-atlas
// writers of one run queue on it instead of racing, so a compare-and-swap rarely
// loses (16 writers on one run: 8 events/s racing, ~full speed queued). Correctness
// never depends on it: every write is still a CAS on the ref, which also covers
// writers that know nothing of this lock (plain git, another machine's clone).
//
// The lock dies with its holder (an flock on an open file), so a killed writer never
// leaves it behind. When it cannot be taken within wait, when ctx ends, or where
// there is no flock, Mutex returns with a no-op release and the caller goes on
// unlocked. It polls with a non-blocking flock rather than blocking in a goroutine:
// a taker that gave up must never come to hold the lock afterwards.
func (r *Repository) Mutex(ctx context.Context, name string, wait time.Duration) (release func()) {
	release, _, _ = r.takeMutex(ctx, name, wait)
	return release
}

// Lock takes the lock named name as Mutex does, for a caller whose correctness rests
// on it (a choice among values only this repository's processes make, such as port
// blocks): when it cannot be taken within wait, or ctx ends first, it fails (a
// conflict: the caller may try again) instead of going on unlocked.
func (r *Repository) Lock(ctx context.Context, name string, wait time.Duration) (release func(), err error) {
	release, ok, err := r.takeMutex(ctx, name, wait)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.Conflict("another git-atlas process held the %s lock for %s; nothing was done", name, wait).
			WithHint("try again once it is done")
	}
	return release, nil
}

// forkGrace is how long TryMutex waits for a lock that is held. A lock its holder
// has just released can still be held for a moment: a process forked while it was
// held shares the open file (and so the flock) until it execs and the copy closes.
const forkGrace = 100 * time.Millisecond

// mutexBusy, when set (by a test), runs each time takeMutex finds the lock held.
var mutexBusy func()

// TryMutex takes the lock named name (as Mutex) without waiting longer than a
// moment (forkGrace). ok is false when another live process holds it. Where there is
// no flock it succeeds with a no-op release (correctness never rests on it alone).
func (r *Repository) TryMutex(name string) (release func(), ok bool, err error) {
	return r.takeMutex(context.Background(), name, forkGrace)
}

// takeMutex polls for the lock named name for up to wait: ok tells whether it was
// taken (or there is no flock), err a failure other than the lock being held.
func (r *Repository) takeMutex(ctx context.Context, name string, wait time.Duration) (release func(), ok bool, err error) {
	noop := func() {}
	path := r.Layout().Mutex(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return noop, false, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return noop, false, err
	}
	deadline := time.Now().Add(wait)
	pause := 500 * time.Microsecond
	for {
		err := tryFlock(f)
		switch {
		case err == nil:
			return func() { f.Close() }, true, nil // closing the file releases the lock
		case errors.Is(err, errors.ErrUnsupported):
			f.Close()
			return noop, true, nil
		case !errors.Is(err, errLocked):
			f.Close()
			return noop, false, err
		}
		if mutexBusy != nil {
			mutexBusy()
		}
		left := time.Until(deadline)
		if left <= 0 {
			f.Close()
			return noop, false, nil
		}
		timer := time.NewTimer(min(pause, left))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			f.Close()
			return noop, false, nil
		}
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// RemoveMutex removes the lock file of the mutex name (gc, with the run it was for);
// a missing one is no error. A process still holding or waiting on the old file keeps
// its own lock on it, which only costs the queueing the lock saves: correctness never
// rests on it.
func (r *Repository) RemoveMutex(name string) error {
	err := os.Remove(r.Layout().Mutex(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
