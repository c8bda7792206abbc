package gitstate

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that they can run in
// parallel. TestJobMachine alone stays serial (it fixes LeaseNonce; the serial tests
// finish before any parallel one resumes).
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
