package ledger

import "time"

// Interrupted reports whether the run needs resuming (docs/contract.md §5.1): running or blocked
// with no live driver (a lease that ran out, or an open attempt past its idle budget:
// see Driven), or stopped. Finished runs never are.
func (r *Run) Interrupted(now time.Time) bool {
	switch r.State.Status {
	case RunStopped:
		return true
	case RunRunning, RunBlocked:
		return !r.Driven(now)
	}
	return false
}

// OwnedBy reports whether the run's live driver is session's (a session compacted or
// restarted while it drove the run): that run is the session's own.
//
// The ledger keeps the session's keyed hash (k, session.go), or, written by an earlier
// release, the plain id.
func (r *Run) OwnedBy(k SessionKey, session string, now time.Time) bool {
	return session != "" && !RunTerminal(r.State.Status) && r.Driven(now) && k.Matches(r.State.Driver.Session, session)
}
