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
