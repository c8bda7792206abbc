package ledger

import (
	"testing"
	"time"
)

// A run needs resuming when it is stopped, or running or blocked with no live driver;
// a finished run never does, whatever its lease says.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	live := &Lease{Holder: "h", ExpiresAt: Stamp(now.Add(time.Minute))}
	expired := &Lease{Holder: "h", ExpiresAt: Stamp(now.Add(-time.Minute))}
	for _, tc := range []struct {
		status string
		driver *Lease
		want   bool
	}{
		{RunRunning, nil, true},
		{RunRunning, expired, true},
		{RunRunning, live, false},
		{RunBlocked, nil, true},
		{RunBlocked, live, false},
		{RunStopped, live, true},
		{RunStopped, nil, true},
		{RunCompleted, nil, false},
		{RunFailed, expired, false},
	} {
		r := &Run{State: State{Status: tc.status, Driver: tc.driver}}
		if got := r.Interrupted(now); got != tc.want {
			t.Errorf("%s with driver %v: Interrupted = %v, want %v", tc.status, tc.driver, got, tc.want)
		}
	}
}
