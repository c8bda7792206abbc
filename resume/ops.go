package resume

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/worktrees"
)

// DefaultOps are the real worktree and recovery operations: snapshot-then-remove from
// recovery, recreate from worktrees, preserve-and-replay from recovery. checkout is the
// user's checkout, which a stage without a worktree ran in (snapshotted read-only,
// and copied into a temporary worktree for its verify).
func DefaultOps(store *gitstate.Store, checkout string) Ops {
	return Ops{
		Preserve: func(ctx context.Context, run, node, reason string) (string, error) {
			if err := setAsideBroken(ctx, store, run, node); err != nil {
				return "", err
			}
			always, err := worthSnapshot(ctx, store, run, node)
			if err != nil {
				return "", err
			}
			removed, err := recovery.PreserveAndRemove(ctx, store, run, node, recovery.Options{Reason: reason, KeepRecord: true, Always: always})
			if err != nil {
				return "", err
			}
			if removed.Snapshot == nil {
				return "", nil
			}
			return removed.Snapshot.Rec.ID, nil
		},
		Recreate: func(ctx context.Context, run, node string) (string, error) {
			return recreate(ctx, store, run, node)
		},
		CopyCheckout: func(ctx context.Context, run string) (string, func(context.Context) error, error) {
			if checkout == "" {
				return "", nil, nil
			}
			cp, err := recovery.CopyCheckout(ctx, store.Repo, run, checkout)
			if err != nil {
				return "", nil, err
			}
			return cp.Path, cp.Remove, nil
		},
		Replay: func(ctx context.Context, run, stage string) (string, error) {
			rec, err := recovery.Recover(ctx, store, run, recovery.RecoverRequest{Stage: stage, CheckoutPath: checkout, Options: recovery.Options{Reason: "resume: verify failed"}})
			if err != nil {
				return "", err
			}
			return rec.Replay.Branch, nil
		},
	}
}

// recreate makes a removed node worktree again, clean. Its branch goes back to the
// node's baseline when its tip is kept by some other ref (the snapshot just taken
// keeps HEAD); a tip nothing else keeps (a worktree deleted by hand, its commits on the
// branch alone) is never dropped: the worktree is recreated on the branch as it is.
func recreate(ctx context.Context, store *gitstate.Store, run, node string) (string, error) {
	repo := store.Repo
	r, err := store.Load(ctx, run)
	if err != nil {
		return "", err
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return "", nil // removed for good by someone else meanwhile
	}
	tip, err := repo.ReadRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil {
		return "", err
	}
	if tip != "" && tip != rec.Baseline && node != worktrees.Union {
		refs, err := repo.RefsContaining(ctx, tip, 2)
		if err != nil {
			return "", err
		}
		if len(refs) < 2 { // the branch alone holds it
			added, err := worktrees.Add(ctx, store, run, node, worktrees.AddOptions{Baseline: rec.Baseline})
			if err != nil {
				return "", err
			}
			return added.Rec.Path, nil
		}
	}
	got, err := worktrees.Recreate(ctx, store, run, node, tip)
	if err != nil {
		return "", err
	}
	return got.Path, nil
}

// setAsideBroken clears what a killed checkout left: a half-made worktree is discarded
// (it holds nothing but baseline files no agent saw); a worktree directory git cannot
// read for any other reason cannot be snapshotted, so it is renamed aside, whole, next
// to where it was, and git forgets the registration. Nothing anyone wrote is deleted.
func setAsideBroken(ctx context.Context, store *gitstate.Store, run, node string) error {
	r, err := store.Load(ctx, run)
	if err != nil {
		return err
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return nil
	}
	if worktrees.HalfMade(rec.Path) {
		// git-atlas was killed while checking it out: a partial copy of a baseline that
		// no agent was ever given. Nothing in it is anyone's work.
		return worktrees.DiscardHalfMade(ctx, store.Repo, rec.Path)
	}
	if !exists(rec.Path) {
		return nil
	}
	if _, _, err := store.Repo.Worktree(rec.Path).Head(ctx); err == nil {
		return nil
	}
	aside := fmt.Sprintf("%s.atlas-broken-%08x", rec.Path, rand.Uint32())
	if err := os.Rename(rec.Path, aside); err != nil {
		return fmt.Errorf("set aside unreadable worktree %s: %w", rec.Path, err)
	}
	return store.Repo.RemoveWorktree(ctx, rec.Path)
}

// worthSnapshot says whether a worktree about to be reset should be snapshotted even
// when recovery sees nothing that removal would lose (a HEAD that moved along its own
// branch is kept by the branch, but the branch is about to go back to its baseline).
// Only a clean worktree still at its baseline has nothing worth a snapshot.
func worthSnapshot(ctx context.Context, store *gitstate.Store, run, node string) (bool, error) {
	r, err := store.Load(ctx, run)
	if err != nil {
		return false, err
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return false, nil
	}
	info, err := worktrees.Inspect(ctx, store.Repo, *rec)
	if err != nil {
		return true, nil // unreadable: keep whatever there is
	}
	return info.Exists && (info.Dirty || info.Head != rec.Baseline), nil
}
