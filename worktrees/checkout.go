package worktrees

import (
	"context"
	"os"
	"path/filepath"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/git"
)

// UsersCheckout is the working tree of the user's that path lies in: the main
// worktree, or a linked worktree git-atlas did not make (not under Roots); "" when
// path lies under a managed root or in no worktree of repo (docs/contract.md §15).
// path comes from an agent's tool call, so it is only resolved (internal/confine,
// symbolic links included) and compared, never opened. A path that is not absolute
// is in none. A write through a symbolic link lands on its target, so path is judged
// by WriteTarget.
func UsersCheckout(ctx context.Context, repo *git.Repository, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", nil
	}
	path = WriteTarget(path)
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

// maxLinks bounds the dangling links WriteTarget follows: more than any system
// follows in one path (Linux 40, macOS 32), so a longer chain cannot be written
// through.
const maxLinks = 64

// WriteTarget is the file a write to path (absolute) lands on: path with every
// symbolic link resolved, a dangling one included. confine.RealPath resolves only
// the part of a path that exists, leaving a link whose target does not exist yet as
// a plain name; but a tool that writes to that name creates the target, wherever
// the link points (a link planted in a managed worktree can point into the user's
// checkout). So each such link is read and its target, relative to the link's
// directory, resolved in turn. Only links are read; nothing is opened.
func WriteTarget(path string) string {
	p := confine.RealPath(path)
	for range maxLinks {
		// RealPath resolved the longest part of p that exists; what Lstat finds past it
		// can only be a link that leads nowhere (yet).
		link, rest := p, ""
		fi, err := os.Lstat(link)
		for err != nil {
			parent := filepath.Dir(link)
			if parent == link {
				return p
			}
			rest = filepath.Join(filepath.Base(link), rest)
			link = parent
			fi, err = os.Lstat(link)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p
		}
		target, err := os.Readlink(link)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(link), target)
		}
		p = confine.RealPath(filepath.Join(target, rest))
	}
	return p
}
