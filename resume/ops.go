package resume

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/worktrees"
)

// DefaultOps are the real worktree and recovery operations: snapshot-then-remove from
// recovery, recreate from worktrees, preserve-and-replay from recovery. checkout is the
// user's checkout, which a stage without a worktree ran in (snapshotted read-only,
// and copied into a temporary worktree for its verify). ignored is --include-ignored
// with its cap (Options.Ignored), for the snapshots taken before a reset.
func DefaultOps(store *gitstate.Store, checkout string, ignored recovery.Options) Ops {
	return Ops{
		Preserve: func(ctx context.Context, run, node, reason string) (string, error) {
			return preserveClaimed(ctx, store, run, node, reason, ignored)
		},
		Recreate: func(ctx context.Context, run, node string) (string, error) {
			return recreate(ctx, store, run, node)
		},
		ResetInPlace: func(ctx context.Context, run, node, reason string) (string, bool, error) {
			return resetInPlace(ctx, store, run, node, reason, ignored)
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
		IgnoredOf: func(ctx context.Context, run, snap string) ([]recovery.IgnoredEntry, error) {
			return recovery.IgnoredLeftOut(ctx, store, run, snap)
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
	if tip != "" && tip != rec.Baseline.String() && node != worktrees.Union {
		refs, err := refsContaining(ctx, repo, tip, 2)
		if err != nil {
			return "", err
		}
		if len(refs) < 2 { // the branch alone holds it
			added, err := worktrees.Add(ctx, store, run, node, worktrees.AddOptions{Baseline: rec.Baseline.String(), Unfenced: true})
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

// resetInPlace is resume's reset of a worktree that is there, readable and plain: its
// marker is claimed first and held to the end (no `worktree add` hands the directory
// out meanwhile, and a kill leaves a half-made checkout, which the next command
// snapshots before anything else), it is snapshotted exactly as PreserveWorktree
// would before a removal (verified against the bytes on disk), and only then made
// clean at its baseline where it is (worktrees.ResetInPlace), writing only the files
// that differ. ok is false, with nothing changed, for a worktree that takes the slow
// way (removed, then made again): missing, being made or half-made, unreadable, not
// this repository's linked worktree, adopted, in the middle of a merge or rebase,
// sparse, with marked index entries, holding a nested repository, or whose branch is
// gone.
func resetInPlace(ctx context.Context, store *gitstate.Store, run, node, reason string, ignored recovery.Options) (snap string, ok bool, err error) {
	repo := store.Repo
	r, err := store.Load(ctx, run)
	if err != nil {
		return "", false, err
	}
	rec := r.State.Worktree(node)
	if rec == nil || rec.Adopted != "" || !exists(rec.Path) {
		return "", false, nil
	}
	if _, err := worktrees.Own(ctx, repo, run, *rec); err != nil {
		return "", false, nil // not git-atlas's: the slow way, which refuses it
	}
	if inProgress, halfMade, _ := worktrees.Making(rec.Path); inProgress || halfMade {
		return "", false, nil
	}
	m, tookOver, err := worktrees.ClaimMaking(run, *rec)
	if err != nil {
		return "", false, err
	}
	if tookOver { // its maker died between our look and our claim: the slow way
		m.Drop()
		return "", false, nil
	}
	slow := func() (string, bool, error) { return "", false, m.Done() }
	wt := repo.Worktree(rec.Path)
	head, _, err := wt.Head(ctx)
	if err != nil {
		return slow()
	}
	if odd, err := wt.Unusual(ctx); err != nil || odd != "" {
		return slow()
	}
	tip, err := repo.ReadRef(ctx, "refs/heads/"+rec.Branch)
	if err != nil || tip == "" {
		return slow()
	}
	risk, err := recovery.Assess(ctx, repo, rec.Path)
	if err != nil {
		return slow()
	}
	// What worthSnapshot asks, from what Assess already read: a dirty worktree, or a
	// HEAD away from the baseline (the branch is about to go back to it).
	if risk.Any() || head != rec.Baseline.String() {
		base := rec.Baseline
		if base.IsZero() {
			base = r.Header.Baseline
		}
		got, err := recovery.Snapshot(ctx, store, recovery.Target{Run: run, Node: node, Stage: rec.Stage, Path: rec.Path, Baseline: base, Source: recovery.SourceWorktree},
			withIgnored(recovery.Options{Reason: reason}, ignored))
		if err != nil {
			_ = m.Done() // nothing was changed
			return "", false, err
		}
		if len(got.Manifest.Embedded) > 0 {
			return slow() // the slow way refuses it, with the reason
		}
		snap = got.Rec.ID
	}
	keep := false
	if tip != rec.Baseline.String() && node != worktrees.Union {
		refs, err := refsContaining(ctx, repo, tip, 2)
		if err != nil {
			_ = m.Done()
			return "", false, err
		}
		keep = len(refs) < 2 // the branch alone holds it: never dropped
	}
	if _, started, err := worktrees.ResetInPlace(ctx, store, run, node, tip, keep); err != nil {
		if !started {
			_ = m.Done()
			return snap, false, err
		}
		m.Drop() // part-reset: half-made, for the next command to snapshot again
		return snap, false, err
	}
	return snap, true, m.Done()
}

// preserveClaimed is Preserve for resume: a checkout another process is still making
// is a conflict (nothing is touched); one a killed process left half-made is claimed
// for the time it takes to preserve it, and is always snapshotted (an agent may have
// been given its path), like every other worktree.
func preserveClaimed(ctx context.Context, store *gitstate.Store, run, node, reason string, ignored recovery.Options) (string, error) {
	r, err := store.Load(ctx, run)
	if err != nil {
		return "", err
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return preserveWorktree(ctx, store, run, node, reason, false, ignored)
	}
	// A marker is claimed (a file made beside the worktree) only under the managed
	// root.
	if _, err := worktrees.Placed(ctx, store.Repo, run, *rec); err != nil {
		return "", err
	}
	inProgress, halfMade, _ := worktrees.Making(rec.Path)
	if !inProgress && !halfMade {
		return preserveWorktree(ctx, store, run, node, reason, false, ignored)
	}
	m, tookOver, err := worktrees.ClaimMaking(run, *rec)
	if err != nil {
		return "", err // a live maker: conflict
	}
	if tookOver && !strings.Contains(reason, halfMadeReason) {
		reason += " (" + halfMadeReason + ")"
	}
	snap, err := preserveWorktree(ctx, store, run, node, reason, tookOver, ignored)
	if err != nil {
		m.Drop()
		return "", err
	}
	return snap, m.Done()
}

// halfMadeReason is in the reason of every snapshot of a checkout a killed process
// left half-made.
const halfMadeReason = "checkout never finished"

// PreserveWorktree snapshots a managed worktree when anything in it could be lost (or
// always, with always) and removes it, keeping its ledger record. A directory git
// cannot read (a checkout killed before git wrote HEAD, a .git file deleted by hand)
// cannot be snapshotted as a checkout: it is renamed aside, whole, and never deleted,
// and its files are snapshotted as they are (recovery.SnapshotSetAside). It returns
// the snapshot id, or "". `worktree add` uses it for a half-made checkout.
func PreserveWorktree(ctx context.Context, store *gitstate.Store, run, node, reason string, always bool) (string, error) {
	return preserveWorktree(ctx, store, run, node, reason, always, recovery.Options{})
}

// withIgnored is opt with ignored's --include-ignored and cap.
func withIgnored(opt, ignored recovery.Options) recovery.Options {
	opt.IncludeIgnored, opt.IgnoredCap = ignored.IncludeIgnored, ignored.IgnoredCap
	return opt
}

// preserveWorktree is PreserveWorktree, its snapshots taking ignored files as ignored
// says (--include-ignored).
func preserveWorktree(ctx context.Context, store *gitstate.Store, run, node, reason string, always bool, ignored recovery.Options) (string, error) {
	r, err := store.Load(ctx, run)
	if err != nil {
		return "", err
	}
	asideSnap := ""
	if rec := r.State.Worktree(node); rec != nil {
		aside, err := worktrees.SetAsideUnreadable(ctx, store.Repo, run, *rec)
		if err != nil {
			return "", err
		}
		if aside != "" {
			base := rec.Baseline
			if base.IsZero() {
				base = r.Header.Baseline
			}
			snap, err := recovery.SnapshotSetAside(ctx, store, recovery.Target{Run: run, Node: node, Stage: rec.Stage, Path: aside, Baseline: base},
				withIgnored(recovery.Options{Reason: reason + " (set aside whole: git could not read it)"}, ignored))
			if err != nil {
				return "", fmt.Errorf("the worktree of node %s could not be read by git and was set aside whole at %s (nothing in it was removed), but its snapshot failed: %w", node, aside, err)
			}
			asideSnap = snap.Rec.ID
		}
	}
	worth, err := worthSnapshot(ctx, store, run, node)
	if err != nil {
		return "", err
	}
	removed, err := recovery.PreserveAndRemove(ctx, store, run, node, withIgnored(recovery.Options{Reason: reason, KeepRecord: true, Always: always || worth}, ignored))
	if err != nil {
		return "", err
	}
	if removed.Snapshot == nil {
		return asideSnap, nil
	}
	return removed.Snapshot.Rec.ID, nil
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
	return info.Exists && (info.Dirty || info.Head != rec.Baseline.String()), nil
}

// refsContaining is Repository.RefsContaining on a branch tip read as text.
func refsContaining(ctx context.Context, repo *git.Repository, tip string, limit int) ([]string, error) {
	id, err := git.ParseOID(tip)
	if err != nil {
		return nil, err
	}
	return repo.RefsContaining(ctx, id, limit)
}
