package hooks

import (
	"context"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Checkout is what the post-checkout hook found.
type Checkout struct {
	// Run and Node name the managed worktree the checkout happened in ("" elsewhere).
	Run, Node string
	// Untrusted: the checkout moved the managed worktree's HEAD off its branch and
	// this call recorded it.
	Untrusted bool
	// Interrupted are the interrupted runs, newest first (only outside managed
	// worktrees).
	Interrupted []resume.Candidate
}

// PostCheckout is the work of the post-checkout hook in the checkout repo was opened
// in (git runs hooks from the top level of the working tree; git.Open finds the
// repository from the directory alone, without the GIT_DIR, GIT_INDEX_FILE, ... git
// exported to the hook). args are git's: the previous HEAD, the new HEAD, and 1 for a
// branch checkout or 0 for a file checkout; a file checkout moves no HEAD and is
// ignored. It is an operation (ops.PostCheckout): it may record worktree_untrusted.
func PostCheckout(ctx context.Context, repo *git.Repository, args []string, opts Options) (Checkout, error) {
	var res Checkout
	if len(args) >= 3 && args[2] == "0" {
		return res, nil
	}
	store := opts.store(repo)
	store.Writer.Role = ledger.RoleObserver // it records what it saw; never a driver's write
	run, rec, err := worktrees.Owner(ctx, store, repo.TopLevel)
	if err != nil {
		return res, err
	}
	if rec != nil {
		res.Run, res.Node = run, rec.Node
		res.Untrusted, err = worktrees.MarkIfOffBranch(ctx, store, run, *rec)
		return res, err
	}
	// The hint was missing or stale (or this is an older hook script): detect, and
	// leave a fresh hint for the next checkout.
	res.Interrupted, err = RefreshHint(ctx, store, true)
	if res.Interrupted == nil && err != nil {
		res.Interrupted, _, err = resume.Detect(ctx, store, store.Now(), resume.DetectOptions{Depth: gitstate.ListStates, NoFetch: true})
	}
	return res, err
}
