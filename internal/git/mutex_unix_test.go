//go:build unix

package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Serial: as TestMarkerOwnership, a git that another test forks could hold the
// released lock's file until it execs, and the probe after release would fail.
func TestMutex(t *testing.T) {
	ctx := context.Background()
	r, _ := testRepo(t, kinds[0])
	path := filepath.Join(r.CommonDir, "atlas", "mutex", "runs", "x")
	probe := func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	release := r.Mutex(ctx, "runs/x", time.Minute)
	if err := probe(); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("while held, another taker got it: %v", err)
	}
	// A taker that cannot get it within its wait goes on unlocked.
	r.Mutex(ctx, "runs/x", time.Millisecond)()
	// Another name is independent.
	r.Mutex(ctx, "runs/y", time.Minute)()
	release()
	if err := probe(); err != nil {
		t.Fatalf("after release: %v", err)
	}
	// A cancelled context does not wait.
	release = r.Mutex(ctx, "runs/x", time.Minute)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r.Mutex(cctx, "runs/x", time.Hour)()
	release()
}

// A lock released a moment after TryMutex found it held (as when a process forked
// while it was held execs) is taken: TryMutex waits forkGrace, not nothing. Serial:
// it sets mutexBusy.
func TestTryMutexTakesALockReleasedAMomentLater(t *testing.T) {
	r, _ := testRepo(t, kinds[0])
	release, ok, err := r.TryMutex("resume/x")
	if err != nil || !ok {
		t.Fatalf("first taker: %v, %v", ok, err)
	}
	if _, ok, err := r.TryMutex("resume/x"); err != nil || ok {
		t.Fatalf("while held for good, a second taker got it: %v, %v", ok, err)
	}
	mutexBusy = release // the holder lets go once the taker has found it held
	defer func() { mutexBusy = nil }()
	again, ok, err := r.TryMutex("resume/x")
	if err != nil || !ok {
		t.Fatalf("a lock released a moment later was not taken: %v, %v", ok, err)
	}
	again()
}
