package gitstate

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that all of them can run
// in parallel: no test sets an environment variable or a package global (a fixed
// clock or nonce is given to the store or function that uses it).
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
