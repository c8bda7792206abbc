package worktrees

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/par"
	"github.com/git-atlas/git-atlas/ledger"
)

// Info is what a managed worktree looks like on disk now, next to what the ledger
// recorded about it.
type Info struct {
	// Exists: the directory is there and git has it registered as a worktree.
	Exists bool
	// Missing: not Exists; the directory was deleted (or never made), and
	// `worktree add` recreates it.
	Missing bool
	// Registered: git still lists the worktree (a locked one stays listed after its
	// directory is deleted by hand).
	Registered bool
	// Locked: git will not prune it.
	Locked bool
	// Dirty: staged, unstaged or untracked changes.
	Dirty bool
	// Head is the worktree's HEAD commit, Branch its checked-out branch (full ref
	// name, "" when detached); both "" when missing.
	Head   string
	Branch string
	// Ahead counts the commits on Head that the recorded baseline does not have.
	Ahead int
}

// OnBranch reports whether the worktree has its recorded branch checked out.
func (i Info) OnBranch(rec ledger.WorktreeRec) bool { return i.Branch == branchRef(rec.Branch) }

// Inspect looks at one managed worktree without changing it or any index: dirtiness
// comes from `git --no-optional-locks status`.
func Inspect(ctx context.Context, repo *git.Repository, rec ledger.WorktreeRec) (Info, error) {
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return Info{}, err
	}
	return inspect(ctx, repo, rec, list)
}

// InspectAll inspects many worktrees from one `git worktree list`, in parallel
// (at most GOMAXPROCS*2 at once: each check is a git process that mostly waits on
// lstat). infos[i] belongs to recs[i]; a worktree that could not be inspected leaves
// its zero Info and adds its error to the returned *multierror.Error, so one failure
// never hides the others. errs[i] is that worktree's own error, or nil.
func InspectAll(ctx context.Context, repo *git.Repository, recs []ledger.WorktreeRec) (infos []Info, errs []error, err error) {
	infos = make([]Info, len(recs))
	errs = make([]error, len(recs))
	if len(recs) == 0 {
		return infos, errs, nil
	}
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return nil, nil, err
	}
	errs = par.Each(len(recs), runtime.GOMAXPROCS(0)*2, func(i int) error {
		info, err := inspect(ctx, repo, recs[i], list)
		if err != nil {
			return fmt.Errorf("worktree %s at %s: %w", recs[i].Branch, recs[i].Path, err)
		}
		infos[i] = info
		return nil
	})
	return infos, errs, par.Join(errs) // in input order: the same failures read the same way
}

func inspect(ctx context.Context, repo *git.Repository, rec ledger.WorktreeRec, list []git.WorktreeInfo) (Info, error) {
	var info Info
	w := findWorktree(list, rec.Path)
	if w != nil {
		info.Registered, info.Locked = true, w.Locked
	}
	if st, err := os.Stat(rec.Path); w == nil || err != nil || !st.IsDir() || w.Prunable {
		info.Missing = true
		return info, nil
	}
	info.Exists, info.Head, info.Branch = true, w.Head, w.Branch
	wt := repo.Worktree(rec.Path)
	dirty, err := wt.Dirty(ctx)
	if err != nil {
		return info, fmt.Errorf("status: %w", err)
	}
	if !dirty {
		// status does not see edits behind assume-unchanged or skip-worktree marks
		if dirty, err = wt.HidesChanges(ctx); err != nil {
			return info, fmt.Errorf("status: %w", err)
		}
	}
	info.Dirty = dirty
	if info.Head != "" && !rec.Baseline.IsZero() && info.Head != rec.Baseline.String() {
		n, err := countAhead(ctx, repo, rec.Baseline, info.Head)
		if err != nil {
			return info, err
		}
		info.Ahead = n
	}
	return info, nil
}

// countAhead counts the commits reachable from head and not from base.
func countAhead(ctx context.Context, repo *git.Repository, from git.OID, head string) (int, error) {
	to, err := git.ParseOID(head)
	if err != nil {
		return 0, fmt.Errorf("head: %w", err)
	}
	n, err := repo.CountCommits(ctx, to, from)
	if err != nil {
		return 0, fmt.Errorf("count commits ahead of baseline %s: %w", from, err)
	}
	return n, nil
}
