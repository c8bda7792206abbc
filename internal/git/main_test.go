package git_test

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that they can run in
// parallel. (This file is package git_test because testenv imports internal/git.)
// TestConversions alone stays serial: one of its cases sets XDG_CONFIG_HOME.
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }
