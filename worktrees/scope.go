package worktrees

import (
	"context"
	"fmt"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// OutsideScope lists the paths run's node worktree rec changed against base
// (committed, staged, unstaged, untracked and not ignored) that none of the scope globs
// (doublestar) matches: docs/contract.md §5.3, a job's scope is a contract. No scope,
// or a node whose worktree is gone, changes nothing outside: nil. It reads only the
// worktree Own vouches for: a record naming any other checkout (the user's, or one
// git-atlas did not make) is refused as foreign, and nothing of it is read.
func OutsideScope(ctx context.Context, repo *git.Repository, run string, rec *ledger.WorktreeRec, id git.OID, scope []string) ([]string, error) {
	if len(scope) == 0 || rec == nil {
		return nil, nil
	}
	if id.IsZero() {
		return nil, fmt.Errorf("node %s of run %s: no baseline to compare with", rec.Node, run)
	}
	m, err := Own(ctx, repo, run, *rec)
	if err != nil {
		return nil, err
	}
	if m.Missing() {
		return nil, nil
	}
	changed, err := m.ChangedPaths(ctx, id)
	if err != nil {
		return nil, err
	}
	return PathsOutside(changed, scope), nil
}
