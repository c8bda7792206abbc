package ops

import (
	"context"
	"path/filepath"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/worktrees"
)

// GuardRequest is a file-writing tool call the agent guard judges (`git atlas agent
// guard`, docs/contract.md §15): the agent's session and the absolute paths written.
type GuardRequest struct {
	Session string
	Paths   []string
}

// GuardResult says whether the call is denied: Path lies in the user's checkout
// (Checkout) while the session drives run RunID, whose work goes on in WorkIn; and
// InWorktree, the same file in the first of those worktrees.
type GuardResult struct {
	Deny       bool     `json:"deny"`
	Path       string   `json:"path,omitempty"`
	RunID      string   `json:"run_id,omitempty"`
	Checkout   string   `json:"checkout,omitempty"`
	WorkIn     []string `json:"work_in,omitempty"`
	InWorktree string   `json:"in_worktree,omitempty"`
}

// Guard denies a file write into the user's checkout (the main worktree, or a linked
// worktree git-atlas did not make) while the session drives a run whose current stage
// or RUNNING job has a worktree; it allows anything else. It reads this clone's
// ledger as it is (never a remote) and loads in full only the runs the session
// drives: it runs on every tool call.
func (o *Ops) Guard(ctx context.Context, req GuardRequest) (*GuardResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	res := &GuardResult{}
	if req.Session == "" || len(req.Paths) == 0 {
		return res, nil
	}
	store := o.Reader()
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListStates, NoFetch: true})
	if err != nil {
		return res, err
	}
	key, _ := store.SessionKey()
	now := o.now()
	for _, e := range entries {
		if e.Err != nil || !e.Run.OwnedBy(key, req.Session, now) {
			continue
		}
		r, err := store.Load(ctx, e.ID)
		if err != nil {
			continue
		}
		places := workPlaces(r)
		if len(places) == 0 {
			continue
		}
		for _, path := range req.Paths {
			checkout, err := worktrees.UsersCheckout(ctx, o.Repo, path)
			if err != nil {
				return res, err
			}
			if checkout == "" {
				continue
			}
			res.Deny, res.Path, res.RunID, res.Checkout = true, path, r.Header.RunID, checkout
			for _, w := range places {
				res.WorkIn = append(res.WorkIn, w.Path)
			}
			if rel, err := filepath.Rel(checkout, confine.RealPath(path)); err == nil && filepath.IsLocal(rel) {
				res.InWorktree = filepath.Join(places[0].Path, rel)
			}
			return res, nil
		}
		return res, nil
	}
	return res, nil
}
