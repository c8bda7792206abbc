package resume

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/worktrees"
)

// scopeHold says why verify-first does not pass a stage whose work changed paths
// outside its scope (docs/contract.md §5.3: a scope is a contract): resume accepts no
// such work; the driver's `transition … passed` names the paths, and only a person
// accepts them. dir is where the verify would run (for a stage without a worktree,
// the copy of the checkout it ran in). "" when nothing is outside.
func scopeHold(ctx context.Context, repo *git.Repository, r *gitstate.Run, stage, dir string) (string, error) {
	checkout := ""
	if r.State.Worktree(stage) == nil {
		checkout = dir
	}
	outside, err := worktrees.StageOutsideScope(ctx, repo, r, stage, checkout)
	if err != nil || len(outside) == 0 {
		return "", err
	}
	return fmt.Sprintf("stage %s changed %d path(s) outside its scope: %s; not verified or passed by resume: `git atlas transition %s %s passed` names them, and only a person accepts them",
		stage, len(outside), strings.Join(outside, ", "), r.Header.RunID, stage), nil
}
