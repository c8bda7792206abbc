package recovery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/worktrees"
)

// UserCheckout is the user's checkout as seen from topLevel, the working tree a
// command was started in (from -C, a subdirectory or a linked worktree alike): that
// working tree, unless it is one git-atlas manages (a node, union or replay worktree),
// in which case the main worktree. It is "" when there is no user's checkout to be
// found: a bare repository, or a managed worktree of a bare repository. A managed
// worktree is never taken for the user's checkout: it is locked with git-atlas's
// reason, recorded by a run, or lives under the managed worktree root (or is a
// temporary copy made for a verify).
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
		if strings.HasPrefix(w.LockReason, "git-atlas ") {
			return true, nil // a node, union or replay worktree, or a verify copy
		}
		break
	}
	if rel, err := filepath.Rel(resolved(verifyDir(repo)), real); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true, nil
	}
	root, err := worktrees.Root(ctx, repo)
	if err != nil {
		return false, err
	}
	if rel, err := filepath.Rel(resolved(root), real); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true, nil
	}
	// Recorded by a run elsewhere (the root was moved after it was made).
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
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

// CheckoutCopy is a temporary linked worktree that holds what a checkout holds at
// one moment: a stage that ran in the user's checkout is verified there, so that a
// verify command that writes files, or judges them, never meets the checkout itself.
type CheckoutCopy struct {
	Path string
	repo *git.Repository
}

// verifyDir holds the temporary copies, inside the common dir, outside every
// working tree.
func verifyDir(repo *git.Repository) string {
	return repo.Layout().Verify()
}

// CopyCheckout snapshots the checkout at path read-only (a temporary index, as every
// snapshot: its HEAD, index and files are never touched), writes no ref and records
// nothing, and makes a detached linked worktree at the checkout's HEAD whose files
// are the snapshot's tree and whose index is the checkout's index: `git status` and
// `git diff` there say what they say in the checkout. Ignored files are not copied.
// Remove takes the copy away. Copies left by a process that died are removed first.
func CopyCheckout(ctx context.Context, repo *git.Repository, run, path string) (*CheckoutCopy, error) {
	removeDeadCopies(ctx, repo)
	c, err := captureTries(ctx, repo.Worktree(path), Target{Run: run, Path: path, Source: SourceCheckout}, Options{})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	m := c.manifest
	if m.Head.IsZero() {
		return nil, fault.Refused("%s has no commit yet: verify cannot run in a copy of it", path)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(verifyDir(repo), fmt.Sprintf("%s-%d-%s", run, os.Getpid(), hex.EncodeToString(b[:])))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	cp := &CheckoutCopy{Path: dir, repo: repo}
	if err := repo.AddWorktree(ctx, dir, m.Head, "git-atlas verify copy of "+path, nil); err != nil {
		_ = cp.Remove(ctx)
		return nil, fmt.Errorf("add worktree %s: %w", dir, err)
	}
	s, err := checkSnap(ctx, repo, &Snap{Tree: m.Tree, IndexTree: m.IndexTree, Manifest: m, Unmerged: c.unmerged})
	if err != nil {
		_ = cp.Remove(ctx)
		return nil, fmt.Errorf("copy %s into %s: %w", path, dir, err)
	}
	if err := applyTo(ctx, repo.Worktree(dir), s); err != nil {
		_ = cp.Remove(ctx)
		return nil, fmt.Errorf("copy %s into %s: %w", path, dir, err)
	}
	return cp, nil
}

// Remove deletes the copy and git's record of it: the directory, which must lie
// under the verify directory (internal/confine), then git's registration of it.
func (c *CheckoutCopy) Remove(ctx context.Context) error {
	root, err := confine.New(verifyDir(c.repo))
	if err != nil {
		return err
	}
	dir, err := root.Below(c.Path)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	m, err := c.repo.Managed(dir, []confine.Root{root}, "")
	if err != nil {
		return err
	}
	return m.Remove(ctx)
}

// removeDeadCopies removes the copies whose process is gone (killed mid-verify):
// each is a copy of a checkout that is still there, and verify's own output.
func removeDeadCopies(ctx context.Context, repo *git.Repository) {
	entries, err := os.ReadDir(verifyDir(repo))
	if err != nil {
		return
	}
	for _, e := range entries {
		f := strings.Split(e.Name(), "-")
		if len(f) < 3 {
			continue
		}
		pid, err := strconv.Atoi(f[len(f)-2])
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // alive (or not ours to judge)
		}
		cp := &CheckoutCopy{Path: filepath.Join(verifyDir(repo), e.Name()), repo: repo}
		_ = cp.Remove(ctx)
	}
}
