package gitstate

import "time"

// Interrupted reports whether the run needs resuming (SPEC §5.1): running or blocked
// with no live driver, or stopped. Finished runs never are.
func (r *Run) Interrupted(now time.Time) bool {
	switch r.State.Status {
	case RunStopped:
		return true
	case RunRunning, RunBlocked:
		return !r.Live(now)
	}
	return false
}
