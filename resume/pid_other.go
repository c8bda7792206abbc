//go:build !unix

package resume

import "os"

// pidAlive: where there is no signal 0, a process that can be found is taken as alive.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.FindProcess(pid)
	return err == nil
}
