package resume

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that they can run in
// parallel. TestRunVerifyEnvironment alone stays serial: it sets the process's own
// environment, which a verify inherits (the serial tests finish before any parallel
// one resumes).
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
