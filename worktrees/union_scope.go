package worktrees

import (
	"context"
	"fmt"
	"slices"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// PathsOutside lists the paths that none of the scope globs (doublestar) matches, in
// their order. No scope: nothing is outside.
func PathsOutside(paths, scope []string) []string {
	if len(scope) == 0 {
		return nil
	}
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(scope, func(g string) bool { ok, _ := doublestar.Match(g, p); return ok }) {
			out = append(out, p)
		}
	}
	return out
}

// checkAllowed refuses an allow_outside_scope that names no job of run r.
func checkAllowed(r *ledger.Run, allow []string) error {
	for _, n := range allow {
		if err := ledger.ValidName("job", n); err != nil {
			return err
		}
		if r.Header.Kind != ledger.KindGraph {
			return fault.Named(fault.ErrUsage, "{allow_outside_scope} names jobs: run %s is not a graph run", r.Header.RunID)
		}
		if r.State.Job(n) == nil {
			return fault.Named(fault.ErrNotFound, "run %s has no job %q ({allow_outside_scope})", r.Header.RunID, n)
		}
	}
	return nil
}

// scopeParts checks each part of a graph run's union against its job's scope
// (docs/contract.md §5.3: a scope is a contract): a job whose branch changed paths
// against its baseline, read from the two commits' trees alone (no worktree), outside
// the scope is left out and reported in u.OutsideScope, unless allow names it, when it
// is integrated and reported in u.AllowedOutsideScope. One git process compares every
// scoped part. It returns the parts to integrate.
func scopeParts(ctx context.Context, repo *git.Repository, r *ledger.Run, parts []part, allow []string, u *ledger.UnionRec) ([]part, error) {
	if r.Header.Kind != ledger.KindGraph {
		return parts, nil
	}
	var pairs []git.CommitPair
	var scoped []int // the index in parts of each pair
	for i, p := range parts {
		j := r.State.Job(p.node)
		if j == nil || len(j.Scope) == 0 {
			continue
		}
		base := r.Header.Baseline
		if rec := r.State.Worktree(p.node); rec != nil && !rec.Baseline.IsZero() {
			base = rec.Baseline
		}
		if base.IsZero() {
			return nil, fmt.Errorf("no baseline to compare %s with", p.tip)
		}
		tip, err := git.ParseOID(p.tip)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, git.CommitPair{Base: base, Tip: tip})
		scoped = append(scoped, i)
	}
	changed, err := repo.DiffCommits(ctx, pairs)
	if err != nil {
		return nil, err
	}
	outside := make([][]string, len(parts)) // by part; nil: nothing outside or no scope
	for k, i := range scoped {
		paths := make([]string, len(changed[k]))
		for n, c := range changed[k] {
			paths[n] = c.Path
		}
		outside[i] = PathsOutside(paths, r.State.Job(parts[i].node).Scope)
	}
	var keep []part
	for i, p := range parts {
		switch out := outside[i]; {
		case len(out) == 0:
			keep = append(keep, p)
		case slices.Contains(allow, p.node):
			if u.AllowedOutsideScope == nil {
				u.AllowedOutsideScope = map[string][]string{}
			}
			u.AllowedOutsideScope[p.node] = out
			keep = append(keep, p)
		default:
			if u.OutsideScope == nil {
				u.OutsideScope = map[string][]string{}
			}
			u.OutsideScope[p.node] = out
		}
	}
	return keep, nil
}

// StageOutsideScope lists the paths stage's worktree changed against its open
// attempt's baseline, committed or not, that lie outside the stage's scope
// (docs/contract.md §5.3, a scope is a node's contract; OutsideScope). A stage with no
// worktree ran in the user's checkout, whose changes cannot be told from the user's
// own: it is not judged, and nothing of the checkout is read. No scope, no open
// attempt, or no worktree: nil.
func StageOutsideScope(ctx context.Context, repo *git.Repository, r *ledger.Run, stage string) ([]string, error) {
	def, st, ok := r.Stage(stage)
	a := ledger.OpenAttempt(st)
	rec := r.State.Worktree(stage)
	if !ok || a == nil || len(def.Scope) == 0 || rec == nil {
		return nil, nil
	}
	base := a.Baseline
	if base.IsZero() {
		base = r.Header.Baseline
	}
	return OutsideScope(ctx, repo, r.Header.RunID, rec, base, def.Scope)
}
