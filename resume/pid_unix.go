//go:build unix

package resume

import (
	"errors"
	"syscall"
)

// pidAlive: signal 0 checks that the process exists (EPERM: it exists, owned by
// another user).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
