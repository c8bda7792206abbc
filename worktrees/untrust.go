package worktrees

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/ledger"
)

// Owner finds the run and the ledger record of the managed worktree whose top level is
// path: a linked worktree under the worktree root that some run recorded. It returns
// ("", nil, nil) for any other checkout. The common layout <root>/<run>/<node> is
// tried first (one run read); a worktree recorded elsewhere is found by reading every
// run.
func Owner(ctx context.Context, store *gitstate.Store, path string) (string, *ledger.WorktreeRec, error) {
	repo := store.Repo
	if path == "" || samePath(repo.GitDir, repo.CommonDir) {
		return "", nil, nil // the main worktree, or a bare repository
	}
	root, err := Root(ctx, repo)
	if err != nil {
		return "", nil, err
	}
	if !within(path, root) {
		return "", nil, nil
	}
	if rel, err := filepath.Rel(canon(root), canon(path)); err == nil {
		if parts := strings.Split(rel, string(filepath.Separator)); len(parts) == 2 {
			if r, err := store.Load(ctx, parts[0]); err == nil {
				if rec := r.State.Worktree(parts[1]); rec != nil && samePath(rec.Path, path) {
					return parts[0], rec, nil
				}
			}
		}
	}
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
	if err != nil {
		return "", nil, err
	}
	for _, e := range entries {
		if e.Run == nil {
			continue
		}
		for i := range e.Run.State.Worktrees {
			if rec := &e.Run.State.Worktrees[i]; samePath(rec.Path, path) {
				return e.ID, rec, nil
			}
		}
	}
	return "", nil, nil
}

// Managed is a managed worktree as the post-checkout hook judges a checkout in it:
// Branch is the full ref its HEAD must stay on, or "" when its record is marked
// untrusted already (a checkout there records nothing more).
type Managed struct {
	Path, Branch string
}

// ManagedIn lists the managed worktrees at their usual place, <root>/<run>/<node>,
// of the runs open accepts, each with the record Owner attributes a checkout there to
// (its first, one-run lookup, which no other run's record can change). Only the run
// directories that exist under root are looked at, and only their runs read in full,
// from the local ledger (the one the hook reads), even through a store with a remote.
// What MarkIfOffBranch does after a checkout in one of them is then a comparison of
// its HEAD with Branch; a worktree recorded anywhere else is not listed.
func ManagedIn(ctx context.Context, store *gitstate.Store, root string, open func(run string) bool) ([]Managed, error) {
	dirs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Managed
	for _, d := range dirs {
		if !d.IsDir() || !open(d.Name()) {
			continue
		}
		r, err := store.LoadLocal(ctx, d.Name()) // the hook's ledger: never a fetch
		if err != nil {
			continue // Owner cannot read it either: not listed, the hook asks
		}
		for i := range r.State.Worktrees {
			rec := &r.State.Worktrees[i]
			if rec != r.State.Worktree(rec.Node) || rec.Path == "" || !samePath(rec.Path, filepath.Join(root, d.Name(), rec.Node)) {
				continue
			}
			switch {
			case rec.Untrusted:
				out = append(out, Managed{Path: rec.Path})
			case rec.Branch != "":
				out = append(out, Managed{Path: rec.Path, Branch: branchRef(rec.Branch)})
			}
		}
	}
	return out, nil
}

// MarkIfOffBranch records that the managed worktree of rec is no longer trusted when
// its HEAD is not on its branch (detached, or another branch checked out): Untrusted
// is set with a worktree_untrusted event, which makes resume snapshot it and recreate
// it clean. It reports whether it wrote anything; a worktree already marked, or on its
// branch, is left alone.
func MarkIfOffBranch(ctx context.Context, store *gitstate.Store, run string, rec ledger.WorktreeRec) (bool, error) {
	if rec.Untrusted {
		return false, nil
	}
	list, err := store.Repo.ListWorktrees(ctx)
	if err != nil {
		return false, err
	}
	w := findWorktree(list, rec.Path)
	if w == nil || w.Branch == branchRef(rec.Branch) {
		return false, nil
	}
	marked := false
	_, err = store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		marked = false
		cur := r.State.Worktree(rec.Node)
		if cur == nil || !samePath(cur.Path, rec.Path) || cur.Untrusted {
			return nil, nil // recreated or marked meanwhile: nothing to record
		}
		cur.Untrusted = true
		marked = true
		ev, err := untrustedEvent(*cur, *w)
		if err != nil {
			return nil, err
		}
		return &gitstate.Change{Event: ev}, nil
	})
	return marked, err
}

func untrustedEvent(rec ledger.WorktreeRec, w git.WorktreeInfo) (ledger.Event, error) {
	head, err := gitid.ParseOptional(w.Head)
	if err != nil {
		return ledger.Event{}, fmt.Errorf("worktree %s: %w", w.Path, err)
	}
	d := ledger.WorktreeUntrustedData{Node: rec.Node, Path: rec.Path, Branch: rec.Branch, Head: head,
		CheckedOut: strings.TrimPrefix(w.Branch, "refs/heads/"), Reason: "HEAD left its branch"}
	return ledger.WorktreeUntrustedEvent(ledger.About{Stage: rec.Stage, Job: jobOf(rec)}, d), nil
}
