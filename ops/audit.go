package ops

import (
	"context"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// AuditRequest is `audit [--size]`.
type AuditRequest struct {
	// Size measures each recovery snapshot's disk usage.
	Size bool
	// Now is when runs are judged live or interrupted (zero: Ops.Clock).
	Now time.Time
}

// AuditResult is `audit --json`: every worktree and atlas ref, classified (docs/contract.md §8).
type AuditResult struct {
	Worktrees []audit.Worktree `json:"worktrees"`
	Refs      []audit.Ref      `json:"refs"`
	Attention bool             `json:"attention"`
	// Leftovers are temporary files and trash directories failed or killed writes
	// left, with their size (gc removes those older than an hour).
	Leftovers []audit.Leftover `json:"leftovers,omitempty"`
	// Incomplete gathers the checks that failed (a worktree's status, a snapshot's
	// size): the report holds everything else, and a front end warns of it.
	Incomplete error `json:"-"`
}

// Audit classifies every worktree and atlas ref against the ledger; it changes
// nothing. When something needs attention, or a check failed (Incomplete), the
// result comes back together with an ErrAttention error: a front end shows the
// report, then fails.
func (o *Ops) Audit(ctx context.Context, req AuditRequest) (*AuditResult, error) {
	rep, err := audit.Audit(ctx, o.Reader(), audit.Options{Size: req.Size, Now: o.orNow(req.Now), Progress: o.Progress})
	if rep == nil {
		return nil, err
	}
	res := &AuditResult{Worktrees: rep.Worktrees, Refs: rep.Refs, Attention: rep.Attention, Leftovers: rep.Leftovers, Incomplete: err}
	if rep.Attention || err != nil {
		// A check that failed may hide what needs attention: the report cannot say
		// all is well.
		return res, fault.New(fault.ErrAttention, "audit found something that needs attention").WithHint("`git atlas gc` shows what it would clean up")
	}
	return res, nil
}

// GCRequest is `gc [--before DUR] [--apply] [--recoveries]`.
type GCRequest struct {
	// Before: finished runs last updated longer ago than this are dropped (0: every
	// finished run). Negative is refused.
	Before time.Duration
	// Apply does the plan; without it GC only plans, and changes nothing.
	Apply bool
	// Recoveries also drops the recovery snapshots of dropped and vanished runs.
	Recoveries bool
	// Now is what Before counts back from (zero: Ops.Clock).
	Now time.Time
	// Snapshot is --include-ignored with its cap, for the snapshots taken before a
	// removal; the plan names the ignored files a removal would delete.
	Snapshot SnapshotOptions
}

// GCResult is `gc --json`. Its fields are in the order of the JSON keys (sorted: gc
// printed a map once, and scripts read it so).
type GCResult struct {
	// Actions are the plan's steps, worktrees first (with Apply, each says whether it
	// was done); never null.
	Actions []audit.Action `json:"actions"`
	Applied bool           `json:"applied"`
	// Incomplete gathers the checks of the plan's audit that failed (without Apply):
	// the plan leaves out what they would have found, and a front end warns of it.
	Incomplete error `json:"-"`
}

// GC plans the garbage collection of what finished runs left behind or, with Apply,
// does it (audit.Apply: it audits again between worktree removals and ref
// deletions). A plan audits first and changes nothing. The result comes back
// together with the error of any step that failed: a front end shows it, then fails.
func (o *Ops) GC(ctx context.Context, req GCRequest) (*GCResult, error) {
	if req.Before < 0 {
		return nil, fault.Usage("--before must not be negative")
	}
	opt := audit.GCOptions{Before: req.Before, Recoveries: req.Recoveries, Now: o.orNow(req.Now), Progress: o.Progress,
		Ignored: o.snapshotOptions(req.Snapshot, "", "")}
	res := &GCResult{Applied: req.Apply}
	var err error
	if req.Apply {
		// A driver of no name: gc removes only finished runs' worktrees, which have no
		// driver to claim (gitstate.ClaimDriver).
		res.Actions, err = audit.Apply(ctx, o.Store(Driver{}.Writer()), opt)
	} else {
		store := o.Reader()
		rep, aerr := audit.Audit(ctx, store, audit.Options{Now: opt.Now, Progress: opt.Progress})
		if rep == nil {
			return nil, aerr
		}
		res.Incomplete = aerr
		res.Actions, err = audit.Plan(ctx, store.Repo, rep, opt)
	}
	res.Actions = nonNil(res.Actions)
	return res, err
}
