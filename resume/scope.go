package resume

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// scopeHold says why verify-first does not pass a stage whose work changed paths
// outside its scope (docs/contract.md §5.3: a scope is a contract): resume accepts no
// such work; the driver's `transition … passed` names the paths, and only a person
// accepts them. "" when nothing is outside (a stage without a worktree is not judged:
// worktrees.StageOutsideScope).
func scopeHold(ctx context.Context, repo *git.Repository, r *ledger.Run, stage string) (string, error) {
	outside, err := worktrees.StageOutsideScope(ctx, repo, r, stage)
	if err != nil || len(outside) == 0 {
		return "", err
	}
	return fmt.Sprintf("stage %s changed %d path(s) outside its scope: %s; not verified or passed by resume: `git atlas transition %s %s passed` names them, and only a person accepts them",
		stage, len(outside), strings.Join(outside, ", "), r.Header.RunID, stage), nil
}
