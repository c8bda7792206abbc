package resume

import (
	"context"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// scopeHold says why verify-first does not pass a stage whose work changed paths
// outside its scope (docs/contract.md §5.3: a scope is a contract): resume accepts no
// such work; the driver's `transition … passed` names the paths, and only a person
// accepts them. "" when nothing is outside (a stage without a worktree is not judged:
// worktrees.StageOutsideScope). The transition is holder's, spelled by sp.
func scopeHold(ctx context.Context, repo *git.Repository, r *ledger.Run, stage, holder string, sp fault.Spelling) (string, error) {
	outside, err := worktrees.StageOutsideScope(ctx, repo, r, stage)
	if err != nil || len(outside) == 0 {
		return "", err
	}
	pass := as(fault.Do("transition", "run", r.Header.RunID, "stage", stage, "status", ledger.StagePassed), holder, "")
	return fault.Textf("stage %s changed %d path(s) outside its scope: %s; not verified or passed by resume: `%s` names them, and only a person accepts them",
		stage, len(outside), strings.Join(outside, ", "), pass).Spell(sp), nil
}
