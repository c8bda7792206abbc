package worktrees

import (
	"context"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
)

// OutsideScope lists the paths a node's worktree changed against base (committed,
// staged, unstaged, untracked and not ignored) that none of the scope globs
// (doublestar) matches: docs/contract.md §5.3, a job's scope is a contract. No scope, or a node
// with no worktree here, changes nothing outside: nil.
func OutsideScope(ctx context.Context, repo *git.Repository, rec *gitstate.WorktreeRec, base string, scope []string) ([]string, error) {
	if len(scope) == 0 || rec == nil || !repo.OwnsWorktree(rec.Path) {
		return nil, nil
	}
	id, err := git.ParseOID(base)
	if err != nil {
		return nil, err
	}
	changed, err := repo.Worktree(rec.Path).ChangedPaths(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range changed {
		in := false
		for _, g := range scope {
			if ok, _ := doublestar.Match(g, p); ok {
				in = true
				break
			}
		}
		if !in {
			out = append(out, p)
		}
	}
	return out, nil
}
