package ops

import (
	"context"

	"github.com/git-atlas/git-atlas/hooks"
)

// CheckoutRequest is the post-checkout hook's call (`git atlas hook post-checkout`).
type CheckoutRequest struct {
	// Args are git's arguments to the hook: the previous HEAD, the new HEAD, and 1 for
	// a branch checkout or 0 for a file checkout.
	Args []string
}

// CheckoutResult is what the hook found: the managed worktree the checkout happened
// in and whether it was marked untrusted, or the interrupted runs.
type CheckoutResult = hooks.Checkout

// PostCheckout is the post-checkout hook's work in the checkout the operations were
// opened in (hooks.PostCheckout): in a managed worktree whose HEAD left its branch it
// records worktree_untrusted (as an observer, never a driver, and never through a
// remote: a checkout does not wait for the network); anywhere else it detects the
// interrupted runs and leaves a fresh hint for the next checkout.
func (o *Ops) PostCheckout(ctx context.Context, req CheckoutRequest) (*CheckoutResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	res, err := hooks.PostCheckout(ctx, o.Repo, req.Args, hooks.Options{Clock: o.Clock})
	return &res, err
}
