//go:build unix

package git

import (
	"errors"
	"os"
	"syscall"
)

// errLocked: another open file holds the lock.
var errLocked = errors.New("locked")

// tryFlock takes the exclusive lock without waiting; errLocked when it is held.
func tryFlock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return errLocked
		}
		return err
	}
}
