package worktrees

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Roots are the directories managed worktrees live under: Root (atlas.worktreeRoot,
// when set) and the default <git-common-dir>/atlas/worktrees. Both come from this
// repository's own configuration, never from a ledger.
func Roots(ctx context.Context, repo *git.Repository) ([]confine.Root, error) {
	root, err := Root(ctx, repo)
	if err != nil {
		return nil, err
	}
	var roots []confine.Root
	for _, dir := range []string{root, gitstate.CanonPath(repo.Layout().Worktrees())} {
		r, err := confine.New(dir)
		if err != nil {
			return nil, err
		}
		if len(roots) == 0 || roots[0].Dir() != r.Dir() {
			roots = append(roots, r)
		}
	}
	return roots, nil
}

// Own is the one gate between a worktree record read from a ledger (pulled,
// imported or edited by hand: shared data is hostile) and anything that resets,
// cleans, checks out in, moves, locks, removes or recreates a worktree: it returns the
// worktree as a git.Managed, the only value those operations are methods of, or a
// refusal (fault.ErrRefused, cause git.ErrForeign) for a worktree git-atlas does not
// manage, which is then left exactly as it is. A record passes when
//
//   - it was not adopted at import (git-atlas did not make that worktree);
//   - its branch is one of run's (atlas/<run>/...), so no reset ever moves a branch of
//     the user's;
//   - its path passes git.Repository.Managed: under Roots (symbolic links resolved),
//     or registered and locked with this node's lock reason, and its .git file and
//     git's registration name each other;
//   - under Roots, its path is this node's own place, <root>/<run>/<node>
//     (atItsPlace): a record naming another run's or another node's worktree there
//     does not make that worktree this one's.
func Own(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec) (*git.Managed, error) {
	g, err := NewGate(ctx, repo)
	if err != nil {
		return nil, err
	}
	return g.Own(run, rec)
}

// Gate is Own with the managed roots read once, for checking many records (a resume
// plan, an audit).
type Gate struct {
	repo  *git.Repository
	roots []confine.Root
}

// NewGate reads the managed roots of repo.
func NewGate(ctx context.Context, repo *git.Repository) (*Gate, error) {
	roots, err := Roots(ctx, repo)
	if err != nil {
		return nil, err
	}
	return &Gate{repo: repo, roots: roots}, nil
}

// Own is the package's Own.
func (g *Gate) Own(run string, rec ledger.WorktreeRec) (*git.Managed, error) {
	if err := ownRecord(run, rec); err != nil {
		return nil, err
	}
	m, err := g.repo.Managed(rec.Path, g.roots, lockReason(run, rec.Node))
	if err != nil {
		return nil, describe(run, rec, err)
	}
	if err := atItsPlace(g.roots, run, rec, m.Path); err != nil {
		return nil, err
	}
	return m, nil
}

// Foreign says why a record is foreign, or nil: what a resume plan and an audit
// leave alone and report. It is Own, except that a directory under the managed root
// with no .git at all is not foreign: a checkout killed before git wrote it, or whose
// .git file was deleted, which is git-atlas's to set aside whole (SetAsideUnreadable:
// renamed, never deleted). A .git that disagrees with git's registration is foreign.
func (g *Gate) Foreign(run string, rec ledger.WorktreeRec) error {
	_, err := g.Own(run, rec)
	if err == nil || !Foreign(err) {
		return err
	}
	if ownRecord(run, rec) != nil {
		return err
	}
	p, perr := g.repo.Placed(rec.Path, g.roots)
	if perr != nil || atItsPlace(g.roots, run, rec, p) != nil {
		return err
	}
	if _, serr := os.Lstat(filepath.Join(p, ".git")); errors.Is(serr, os.ErrNotExist) {
		return nil // no .git: unreadable, set aside whole
	}
	return err
}

// ownRecord checks what Own checks of the record alone: not adopted, its branch in
// run's namespace.
func ownRecord(run string, rec ledger.WorktreeRec) error {
	if rec.Adopted != "" {
		e := &fault.Error{Kind: fault.ErrRefused, Msg: rec.Path + ": adopted from " + rec.Adopted + " at import: git-atlas did not make it", Err: git.ErrForeign}
		return describe(run, rec, e.WithWithheld(ledger.AdoptedWithheld(rec.Adopted)...))
	}
	if !strings.HasPrefix(rec.Branch, "atlas/"+run+"/") {
		return describe(run, rec, &fault.Error{Kind: fault.ErrRefused, Msg: rec.Path + ": its branch " + rec.Branch + " is not one of run " + run + "'s (atlas/" + run + "/...)", Err: git.ErrForeign})
	}
	return nil
}

// Placed checks that path, a place a ledger names for a worktree of git-atlas's, lies
// under Roots (symbolic links resolved), before anything is made there or beside it (a
// checkout, a marker, a directory set aside), and returns it resolved.
func Placed(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec) (string, error) {
	if err := ownRecord(run, rec); err != nil {
		return "", err
	}
	roots, err := Roots(ctx, repo)
	if err != nil {
		return "", err
	}
	p, err := repo.Placed(rec.Path, roots)
	if err != nil {
		return "", describe(run, rec, err)
	}
	if err := atItsPlace(roots, run, rec, p); err != nil {
		return "", err
	}
	return p, nil
}

// atItsPlace refuses real, the resolved path of run's record rec, when it lies under
// one of roots but is not the node's own place there, <root>/<run>/<node>, where
// git-atlas makes every node, union and replay worktree. Each such place passes every
// other check of Own: a pulled record naming another run's worktree (or another
// node's) would have resume snapshot it, remake it on this run's branch and push the
// snapshot with this run. A path outside every root is vouched for by its lock
// reason, which names the run and the node (git.Repository.Managed).
func atItsPlace(roots []confine.Root, run string, rec ledger.WorktreeRec, real string) error {
	var dirs []string
	for _, root := range roots {
		if !confine.Within(real, root.Dir()) {
			continue
		}
		if want := filepath.Join(root.Dir(), run, rec.Node); real == want {
			return nil
		}
		dirs = append(dirs, filepath.Join(root.Dir(), run, rec.Node))
	}
	if dirs == nil {
		return nil
	}
	return describe(run, rec, &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf("%s: not the place of node %s of run %s (%s): another run's or node's", rec.Path, rec.Node, run, strings.Join(dirs, ", ")), Err: git.ErrForeign})
}

// describe names the node and run of a refused worktree, and what to do.
func describe(run string, rec ledger.WorktreeRec, err error) error {
	var fe *fault.Error
	if !errIsForeign(err, &fe) {
		return err
	}
	return (&fault.Error{Kind: fault.ErrRefused, Msg: "the worktree of node " + rec.Node + " of run " + run + " (" + fe.Msg + ")", Err: git.ErrForeign}).
		WithHint("`%s` lists it as foreign; if the run is not yours, drop it, and check where it came from", fault.Do("audit")).
		WithWithheld(fe.Withheld...)
}

// Foreign reports whether err is Own's refusal of a worktree git-atlas does not
// manage.
func Foreign(err error) bool {
	var fe *fault.Error
	return errIsForeign(err, &fe)
}

func errIsForeign(err error, fe **fault.Error) bool {
	return errors.As(err, fe) && errors.Is((*fe).Err, git.ErrForeign)
}
