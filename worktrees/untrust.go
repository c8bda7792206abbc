package worktrees

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
)

// Owner finds the run and the ledger record of the managed worktree whose top level is
// path: a linked worktree under the worktree root that some run recorded. It returns
// ("", nil, nil) for any other checkout. The common layout <root>/<run>/<node> is
// tried first (one run read); a worktree recorded elsewhere is found by reading every
// run.
func Owner(ctx context.Context, store *gitstate.Store, path string) (string, *gitstate.WorktreeRec, error) {
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
	if rel, err := filepath.Rel(root, canon(path)); err == nil {
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

// MarkIfOffBranch records that the managed worktree of rec is no longer trusted when
// its HEAD is not on its branch (detached, or another branch checked out): Untrusted
// is set with a worktree_untrusted event, which makes resume snapshot it and recreate
// it clean. It reports whether it wrote anything; a worktree already marked, or on its
// branch, is left alone.
func MarkIfOffBranch(ctx context.Context, store *gitstate.Store, run string, rec gitstate.WorktreeRec) (bool, error) {
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
	_, err = store.Update(ctx, run, func(r *gitstate.Run) (*gitstate.Change, error) {
		marked = false
		cur := r.State.Worktree(rec.Node)
		if cur == nil || !samePath(cur.Path, rec.Path) || cur.Untrusted {
			return nil, nil // recreated or marked meanwhile: nothing to record
		}
		cur.Untrusted = true
		marked = true
		return &gitstate.Change{Event: untrustedEvent(*cur, *w)}, nil
	})
	return marked, err
}

func untrustedEvent(rec gitstate.WorktreeRec, w git.WorktreeInfo) gitstate.Event {
	d := map[string]any{"node": rec.Node, "path": rec.Path, "branch": rec.Branch, "head": w.Head,
		"checked_out": strings.TrimPrefix(w.Branch, "refs/heads/"), "reason": "HEAD left its branch"}
	data, _ := json.Marshal(d)
	return gitstate.Event{Type: gitstate.EventWorktreeUntrusted, Stage: rec.Stage, Job: jobOf(rec), Data: data}
}
