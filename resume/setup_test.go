package resume

import (
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/ledger"
)

// A setup runs at most MaxSetupTimeout, whatever the header says: a pulled run may
// have raised its setup_timeout under a command trusted here.
func TestSetupTimeoutIsBounded(t *testing.T) {
	t.Parallel()
	for given, want := range map[string]time.Duration{"": DefaultSetupTimeout, "5m": 5 * time.Minute, "8760h": MaxSetupTimeout, "-1s": DefaultSetupTimeout, "x": DefaultSetupTimeout} {
		if got := SetupTimeout(&ledger.Header{SetupTimeout: given}); got != want {
			t.Errorf("setup_timeout %q: %s, want %s", given, got, want)
		}
	}
}
