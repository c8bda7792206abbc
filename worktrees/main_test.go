package worktrees

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// Every test runs in the pinned git environment, set once, so that all of them can run
// in parallel: no test sets an environment variable or a package global. The commit
// dates are pinned as well (as the fixture pinned them before), so that a commit's id
// does not depend on the second it was made in.
func TestMain(m *testing.M) {
	_ = os.Setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
	_ = os.Setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
	os.Exit(testenv.Pin(m))
}
