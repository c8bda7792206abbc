package recovery

import (
	"context"

	"github.com/git-atlas/git-atlas/internal/git"
)

// CaptureOnce is one capture of the worktree at path the fast way, staging only the
// paths status names (nil: the whole worktree, add -A), read back and compared with
// the disk: the tree, or ErrChanged when the tree is not the disk's.
func CaptureOnce(ctx context.Context, repo *git.Repository, path string, status []byte) (string, error) {
	c, err := capture(ctx, repo.Worktree(path), Target{Run: "r", Path: path, Source: SourceWorktree}, Options{}, false, status)
	if err != nil {
		return "", err
	}
	return c.manifest.Tree.String(), nil
}

// ErrConverted is errConverted, for tests.
var ErrConverted = errConverted

// WriteMetaTree is writeMetaTree, for tests.
var WriteMetaTree = writeMetaTree

// CaptureIndexTree is one capture of the worktree at path, as CaptureOnce: its index
// tree.
func CaptureIndexTree(ctx context.Context, repo *git.Repository, path string) (string, error) {
	c, err := capture(ctx, repo.Worktree(path), Target{Run: "r", Path: path, Source: SourceWorktree}, Options{}, false, nil)
	if err != nil {
		return "", err
	}
	return c.manifest.IndexTree.String(), nil
}

// CheckIndexTree is checkIndexTree, for tests.
var CheckIndexTree = checkIndexTree
