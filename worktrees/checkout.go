package worktrees

import (
	"context"
	"path/filepath"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/git"
)

// UsersCheckout is the working tree of the user's that path lies in: the main
// worktree, or a linked worktree git-atlas did not make (not under Roots); "" when
// path lies under a managed root or in no worktree of repo (docs/contract.md §15).
// path comes from an agent's tool call, so it is only resolved (internal/confine,
// symbolic links included) and compared, never opened. A path that is not absolute
// is in none.
func UsersCheckout(ctx context.Context, repo *git.Repository, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", nil
	}
	roots, err := Roots(ctx, repo)
	if err != nil {
		return "", err
	}
	for _, r := range roots {
		if _, err := r.Path(path); err == nil {
			return "", nil // a managed worktree's, or git-atlas's own directory
		}
	}
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return "", err
	}
	// The innermost worktree that holds path: a linked worktree may lie inside the
	// main one.
	best := ""
	for _, w := range list {
		if w.Bare || w.Path == "" {
			continue
		}
		r, err := confine.New(w.Path)
		if err != nil {
			continue
		}
		if _, err := r.Path(path); err == nil && len(r.Dir()) > len(best) {
			best = r.Dir()
		}
	}
	return best, nil
}
