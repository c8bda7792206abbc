package git

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath resolves symbolic links in the longest part of p that exists.
func realPath(p string) string {
	rest := ""
	for cur := filepath.Clean(p); ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
