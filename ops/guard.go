package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/ledger"
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
// InWorktree, the same file in the first of those worktrees. Target is where a write
// to Path lands when a symbolic link leads elsewhere.
type GuardResult struct {
	Deny       bool     `json:"deny"`
	Path       string   `json:"path,omitempty"`
	Target     string   `json:"target,omitempty"`
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
			// The denial is an agent's to read: it names only worktrees where git-atlas
			// places them, or that an event of this clone's put there (a pulled
			// record's path is the ledger's text).
			at := o.agentText()
			var named []ledger.WorktreeRec
			for _, w := range places {
				if at.placedFor(ctx, r, r.Header.RunID, w.Node, w.Path) {
					named = append(named, w)
					res.WorkIn = append(res.WorkIn, w.Path)
				}
			}
			target := worktrees.WriteTarget(path)
			if target != confine.RealPath(path) {
				res.Target = target
			}
			if rel, err := filepath.Rel(checkout, target); err == nil && filepath.IsLocal(rel) && len(named) > 0 {
				res.InWorktree = filepath.Join(named[0].Path, rel)
			}
			return res, nil
		}
		return res, nil
	}
	return res, nil
}

// GuardCall is Guard for a tool call wherever its paths lead: each path is judged by
// every repository that holds the file a write to it lands on (worktrees.WriteTarget),
// found from that file's nearest existing directory outward (guardRepos.holding). The
// session's working directory plays no part: an agent's shell may have gone anywhere,
// and an edit of the user's checkout is denied from there too (docs/contract.md §15).
// open opens the repository that holds a directory, as the front end opens one (an
// error wrapping ErrNotRepository when there is none); GuardCall closes what it opened.
// A repository that fails to judge is reported in the error while the others still
// judge, and a denial from any of them wins.
func GuardCall(ctx context.Context, req GuardRequest, open func(dir string) (*Ops, error)) (*GuardResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	res := &GuardResult{}
	if req.Session == "" || len(req.Paths) == 0 {
		return res, nil
	}
	g := &guardRepos{open: open, byCommonDir: map[string]*guardRepo{}, around: map[string][]*guardRepo{}}
	defer g.close()
	for _, path := range req.Paths {
		if !filepath.IsAbs(path) {
			continue
		}
		for _, r := range g.holding(existingParent(worktrees.WriteTarget(path))) {
			if n := len(r.paths); n == 0 || r.paths[n-1] != path {
				r.paths = append(r.paths, path)
			}
		}
	}
	var errs []error
	for _, r := range g.repos {
		got, err := r.o.Guard(ctx, GuardRequest{Session: req.Session, Paths: r.paths})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got.Deny {
			return got, nil
		}
	}
	return res, errors.Join(errs...)
}

// guardRepos are the repositories GuardCall opened, once each, with the paths each
// judges.
type guardRepos struct {
	open        func(dir string) (*Ops, error)
	repos       []*guardRepo
	byCommonDir map[string]*guardRepo
	around      map[string][]*guardRepo // holding's answers: a patch names many files in few directories
}

type guardRepo struct {
	o     *Ops
	paths []string
}

// holding is every repository that holds dir, innermost first: the one git finds
// from dir, then the one around that repository's working tree, and so on, because
// a submodule or a clone inside the user's checkout is still the checkout. A
// directory inside a git dir, which git opens as no working tree, is passed for the
// one around it; a worktree git-atlas keeps inside the git dir is followed by the
// repository around that git dir.
func (g *guardRepos) holding(dir string) []*guardRepo {
	if rs, ok := g.around[dir]; ok {
		return rs
	}
	if !dotGitAbove(dir) {
		// No working tree holds dir, and git is not asked: the hook runs on every
		// edit, and most walks end at a directory like this one.
		g.around[dir] = nil
		return nil
	}
	var rs []*guardRepo
	next := filepath.Dir(dir)
	switch o, err := g.open(dir); {
	case errors.Is(err, ErrNotRepository):
		next = dir // git looked all the way up: nothing holds dir
	case err == nil:
		r := g.byCommonDir[o.CommonDir()]
		if r == nil {
			r = &guardRepo{o: o}
			g.byCommonDir[o.CommonDir()] = r
			g.repos = append(g.repos, r)
		} else if r.o != o {
			o.Close()
		}
		rs = append(rs, r)
		if top := o.TopLevel(); top != "" {
			next = filepath.Dir(top)
			if confine.Within(top, o.CommonDir()) {
				next = filepath.Dir(o.CommonDir())
			}
		}
	}
	if len(next) < len(dir) { // always upward, so the walk ends
		rs = append(rs, g.holding(next)...)
	}
	g.around[dir] = rs
	return rs
}

func (g *guardRepos) close() {
	for _, r := range g.repos {
		r.o.Close()
	}
}

// dotGitAbove reports whether dir or a directory above it holds a .git (a git dir,
// or a worktree's .git file): a working tree that holds dir has one there.
func dotGitAbove(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// existingParent is the nearest directory above path that exists: a Write may
// create directories.
func existingParent(path string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return dir
		}
	}
}
