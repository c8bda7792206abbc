package ops

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
)

// AuditRequest is `audit [--size]`.
type AuditRequest struct {
	// Size measures each recovery snapshot's disk usage.
	Size bool `json:"size,omitempty" help:"${audit_size}"`
	// Now is when runs are judged live or interrupted (zero: Ops.Clock).
	Now time.Time
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
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
	if err := req.Check(); err != nil {
		return nil, err
	}
	rep, err := audit.Audit(ctx, o.Reader(), audit.Options{Size: req.Size, Now: o.orNow(req.Now), Progress: o.Progress})
	if rep == nil {
		return nil, err
	}
	res := &AuditResult{Worktrees: rep.Worktrees, Refs: rep.Refs, Attention: rep.Attention, Leftovers: rep.Leftovers, Incomplete: err}
	if req.ForAgent {
		o.agentText().audit(ctx, res)
	}
	if rep.Attention || err != nil {
		// A check that failed may hide what needs attention: the report cannot say
		// all is well.
		return res, fault.New(fault.ErrAttention, "audit found something that needs attention").WithHint("`%s` shows what it would clean up", fault.Do("gc"))
	}
	return res, nil
}

// GCRequest is `gc [--before DUR] [--apply] [--recoveries]`.
type GCRequest struct {
	// Before: finished runs last updated longer ago than this are dropped (0: every
	// finished run; nil: DefaultGCBefore, unless a KeepLast, given or from config,
	// replaces it). Negative is refused.
	Before *time.Duration
	// Apply does the plan; without it GC only plans, and changes nothing.
	Apply bool
	// Recoveries also drops the recovery snapshots of dropped and vanished runs.
	Recoveries bool
	// KeepLast keeps the newest N finished runs (nil: config atlas.gc.keepLast, else
	// no such limit). Negative is refused.
	KeepLast *int
	// MaxSize, with Recoveries: snapshots of finished runs go, oldest first, until the
	// bytes only snapshots hold fit (0: config atlas.gc.maxSize, else no budget).
	MaxSize int64
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
	// UnreachableBytes are the bytes of the objects the plan's ref deletions leave
	// reachable from no ref (with Apply: those the deletions done left). gc never
	// prunes: git's own gc frees them, once its reflogs and grace period let it.
	UnreachableBytes int64 `json:"unreachable_bytes"`
	// UnreachableUnknown, when set, says why those bytes could not be measured (git
	// could not walk every ref: a worktree killed while git made it leaves a HEAD that
	// names no object). The count is informational: gc's own steps stand.
	UnreachableUnknown string `json:"unreachable_unknown,omitempty"`
	// Incomplete gathers the checks of the plan's audit that failed (without Apply):
	// the plan leaves out what they would have found, and a front end warns of it.
	Incomplete error `json:"-"`
}

// GC plans the garbage collection of what finished runs left behind or, with Apply,
// does it (audit.Apply: it audits again between worktree removals and ref
// deletions). A plan audits first and changes nothing. The result comes back
// together with the error of any step that failed: a front end shows it, then fails.
func (o *Ops) GC(ctx context.Context, req GCRequest) (*GCResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	opt, err := o.gcOptions(ctx, req)
	if err != nil {
		return nil, err
	}
	opt.Ignored = o.snapshotOptions(req.Snapshot, "", "")
	res := &GCResult{Applied: req.Apply}
	if req.Apply {
		// A driver of no name: gc removes only finished runs' worktrees, which have no
		// driver to claim (ledger.ClaimDriver).
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
	for i := range res.Actions {
		res.Actions[i].Spell(o.Spelling)
	}
	n, uerr := unreachable(ctx, o.Repo, res.Actions, req.Apply)
	res.UnreachableBytes = n
	if uerr != nil {
		res.UnreachableUnknown = uerr.Error()
	}
	return res, err
}

// DefaultGCBefore is how long ago a finished run was last updated for gc to drop it,
// when the request names no time and no number of runs to keep.
const DefaultGCBefore = 720 * time.Hour

// Config keys of gc's defaults (docs/contract.md §15).
const (
	GCKeepLastKey = "atlas.gc.keepLast"
	GCMaxSizeKey  = "atlas.gc.maxSize"
)

// gcOptions are req's options, with KeepLast and MaxSize from config when the
// request names none; a KeepLast replaces Before's default.
func (o *Ops) gcOptions(ctx context.Context, req GCRequest) (audit.GCOptions, error) {
	opt := audit.GCOptions{Before: DefaultGCBefore, Recoveries: req.Recoveries, KeepLast: -1, MaxSize: req.MaxSize, Now: o.orNow(req.Now), Progress: o.Progress}
	switch {
	case req.KeepLast != nil:
		opt.KeepLast = *req.KeepLast
	case o.Repo.Config(ctx, GCKeepLastKey) != "":
		v := o.Repo.Config(ctx, GCKeepLastKey)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return opt, fault.Usage("git config %s is %q: it must be a whole number, 0 or more", GCKeepLastKey, v)
		}
		opt.KeepLast = n
	}
	switch {
	case req.Before != nil:
		opt.Before = *req.Before
	case opt.KeepLast >= 0:
		opt.Before = 0
	}
	if opt.MaxSize == 0 {
		if v := o.Repo.Config(ctx, GCMaxSizeKey); v != "" {
			n, err := ParseSize(v)
			if err != nil {
				return opt, fault.Usage("git config %s: %v", GCMaxSizeKey, err)
			}
			opt.MaxSize = n
		}
	}
	return opt, nil
}

// unreachable is the bytes of the objects the ref deletions among acts leave (done,
// with apply) reachable from no ref.
func unreachable(ctx context.Context, repo *git.Repository, acts []audit.Action, apply bool) (int64, error) {
	var tips []git.OID
	var refs []string
	for _, a := range acts {
		deletes := a.Kind == audit.DropRun || a.Kind == audit.DeleteRef || a.Kind == audit.DeleteBranch
		if !deletes || a.Old == "" || (apply && !a.Done) {
			continue
		}
		id, err := git.ParseOID(a.Old)
		if err != nil {
			continue
		}
		tips = append(tips, id)
		if !apply {
			refs = append(refs, a.Ref) // still there: not counted as keeping anything
		}
	}
	return repo.UnreachableBytes(ctx, tips, refs)
}

// ParseSize reads a size: 123, 10K, 10KiB, 5M, 5MB, 2G (powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if before, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = before, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fault.Usage("invalid size %q: use a positive number of bytes, optionally with K, M or G", s)
	}
	return n * mult, nil
}

// DuRequest is `du [RUN]`.
type DuRequest struct {
	// Run is the run to measure ("": every run).
	Run string
}

// Du measures the disk usage of runs' managed worktrees and recovery snapshots
// (audit.Du); it changes nothing.
func (o *Ops) Du(ctx context.Context, req DuRequest) (*audit.DuReport, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	return audit.Du(ctx, o.Reader(), req.Run)
}
