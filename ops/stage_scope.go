package ops

import (
	"context"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// stageScope checks a stage reported passed against its scope (docs/contract.md §5.3:
// a scope is a contract), once the report would be accepted (its token, the driver
// rule, an attempt under way): paths its worktree changed outside the scope,
// committed or not, refuse it (exit 5, the paths named, nothing written) unless a person
// accepts them (--allow-outside-scope, StepOutsideScope). It returns the paths
// accepted and who approved them, for the event.
func (o *Ops) stageScope(ctx context.Context, store *gitstate.Store, req TransitionRequest) ([]string, string, error) {
	r, err := store.Load(ctx, req.Run)
	if err != nil {
		return nil, "", err
	}
	def, st, ok := r.Stage(req.Stage)
	if !ok || ledger.OpenAttempt(st) == nil || len(def.Scope) == 0 {
		return nil, "", nil // the write refuses it, with the valid targets
	}
	if err := ledger.CheckStageToken(r, req.Stage, req.Lease); err != nil {
		return nil, "", err
	}
	if _, err := ledger.ClaimDriver(r, store.Writer.SawDriver(r, store.Now()), store.Now()); err != nil {
		return nil, "", err
	}
	outside, err := worktrees.StageOutsideScope(ctx, o.Repo, r, req.Stage)
	if err != nil || len(outside) == 0 {
		return nil, "", err
	}
	if !req.AllowOutsideScope {
		return nil, "", fault.Refused("stage %s changed %d path(s) outside its scope (%s): %s; nothing was written",
			req.Stage, len(outside), strings.Join(def.Scope, ", "), strings.Join(outside, ", ")).
			WithHint("take those changes out and report passed again, or a person accepts them: `%s` on a terminal or with {approved_by} NAME",
				fault.Do("transition", "run", req.Run, "stage", req.Stage, "status", ledger.StagePassed, "allow_outside_scope", true)).
			WithField("paths", outside)
	}
	by, err := req.Person.approve(StepOutsideScope)
	if err != nil {
		return nil, "", err
	}
	return outside, by, nil
}
