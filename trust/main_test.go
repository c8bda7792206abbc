package trust

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that they can run in
// parallel.
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
