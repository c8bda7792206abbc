package importer

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once (the repositories' git and
// the snapshots' commits see no config of the person running the tests), so that all
// of them can run in parallel.
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
