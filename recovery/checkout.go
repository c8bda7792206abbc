package recovery

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/worktrees"
)

// UserCheckout is the user's checkout as seen from topLevel, the working tree a
// command was started in (from -C, a subdirectory or a linked worktree alike): that
// working tree, unless it is one git-atlas manages (a node, union or replay worktree),
// in which case the main worktree. It is "" when there is no user's checkout to be
// found: a bare repository, or a managed worktree of a bare repository. A managed
// worktree is never taken for the user's checkout: it is locked with git-atlas's
// reason, recorded by a run, or lives under the managed worktree root.
func UserCheckout(ctx context.Context, store *gitstate.Store, topLevel string) (string, error) {
	if topLevel == "" {
		return "", nil
	}
	managed, err := Managed(ctx, store, topLevel)
	if err != nil || !managed {
		return topLevel, err
	}
	list, err := store.Repo.ListWorktrees(ctx)
	if err != nil {
		return "", err
	}
	if len(list) == 0 || list[0].Bare || list[0].Prunable {
		return "", nil
	}
	return list[0].Path, nil
}

// Managed reports whether the working tree at path is one git-atlas created.
func Managed(ctx context.Context, store *gitstate.Store, path string) (bool, error) {
	repo := store.Repo
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return false, err
	}
	real := resolved(path)
	for i, w := range list {
		if resolved(w.Path) != real {
			continue
		}
		if i == 0 {
			return false, nil // the main worktree is always the user's
		}
		if f := strings.Fields(w.LockReason); len(f) == 5 && f[0] == "git-atlas" && f[1] == "run" && f[3] == "node" {
			return true, nil
		}
		break
	}
	root, err := worktrees.Root(ctx, repo)
	if err != nil {
		return false, err
	}
	if rel, err := filepath.Rel(resolved(root), real); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true, nil
	}
	// Recorded by a run elsewhere (the root was moved after it was made).
	entries, err := store.List(ctx)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Run == nil {
			continue
		}
		for _, w := range e.Run.State.Worktrees {
			if resolved(w.Path) == real {
				return true, nil
			}
		}
	}
	return false, nil
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
