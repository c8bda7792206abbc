package hooks

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that all of them can run
// in parallel: no test sets an environment variable (a test's stand-in git-atlas goes
// first on PATH in the environment of the git commands it runs, not the process's).
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
