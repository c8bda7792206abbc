package recovery_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/recovery"
)

// TestAssessAsksGitNow: a command keeps the status it read of a worktree (issue 34:
// one status per state), but the check that guards a reset or removal asks git again,
// so a file written since the command looked is seen and snapshotted, never lost.
func TestAssessAsksGitNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	f.repo.KeepWorktrees()
	wt := f.worktree("n")
	if dirty, err := f.repo.Worktree(wt).Dirty(ctx); err != nil || dirty {
		t.Fatalf("a new worktree: dirty %v, %v", dirty, err)
	}
	write(t, filepath.Join(wt, "late.txt"), "written after the look\n")
	if risk, err := recovery.Assess(ctx, f.repo, wt); err != nil || !risk.Dirty || !risk.Any() {
		t.Fatalf("Assess after a file was written: %+v, %v; want dirty", risk, err)
	}
}
