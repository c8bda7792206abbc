//go:build unix

package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive flock on dir's lock file, waiting for it, and returns its
// release. The lock dies with the test binary that holds it.
func lockDir(dir string) (unlock func(), err error) {
	return flockDir(dir, syscall.LOCK_EX)
}

// tryLockDir is lockDir without the wait: EWOULDBLOCK while another process holds it.
func tryLockDir(dir string) (unlock func(), err error) {
	return flockDir(dir, syscall.LOCK_EX|syscall.LOCK_NB)
}

func flockDir(dir string, how int) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}
