package git

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/git-atlas/git-atlas/internal/confine"
)

// WorkingTreeOf returns the working tree (of any worktree of the repository: the
// user's or a managed one) that dir is inside, or "" when none is. A worktree's own
// .git directory is not part of its working tree.
func (repo *Repository) WorkingTreeOf(ctx context.Context, dir string) (string, error) {
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return "", fmt.Errorf("list worktrees: %w", err)
	}
	roots := []string{}
	if repo.TopLevel != "" {
		roots = append(roots, repo.TopLevel)
	}
	for _, w := range list {
		if !w.Bare {
			roots = append(roots, w.Path)
		}
	}
	dir = realPath(dir)
	for _, root := range roots {
		root = realPath(root)
		if within(dir, root) && !within(dir, filepath.Join(root, ".git")) {
			return root, nil
		}
	}
	return "", nil
}

// within reports whether path is root or below it.
func within(path, root string) bool { return confine.Within(path, root) }

// RealPath resolves symbolic links in the longest part of p that exists.
func RealPath(p string) string { return confine.RealPath(p) }

// realPath resolves symbolic links in the longest part of p that exists.
func realPath(p string) string { return confine.RealPath(p) }
