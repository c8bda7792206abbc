package resume

import (
	"context"
	"os"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/worktrees"
)

// planWorktrees inspects every managed worktree of the run and decides what the reset
// does with it. Worktrees of finished nodes (DONE or FAILED jobs, completed or skipped
// stages) are kept: their branches are what the union integrates.
//
// The worktree of the stage that verify-first will judge (keepStage) is kept too: its
// work is what the verify command checks; a failed verify that re-dispatches resets it
// then (docs/contract.md §6.6).
func planWorktrees(ctx context.Context, repo *git.Repository, r *ledger.Run, keepStage string, ignored *recovery.Options) ([]WorktreePlan, error) {
	plans := make([]WorktreePlan, len(r.State.Worktrees))
	var check []ledger.WorktreeRec
	var at []int
	gate, err := worktrees.NewGate(ctx, repo)
	if err != nil {
		return nil, err
	}
	for i, rec := range r.State.Worktrees {
		wp := WorktreePlan{Node: rec.Node, Path: rec.Path, Action: ActionKeep, Setup: rec.Setup}
		var foreign error
		if rec.Adopted == "" {
			foreign = gate.Foreign(r.Header.RunID, rec)
		}
		switch {
		case rec.Adopted != "":
			// The source system's worktree (often inside its own run directory): not
			// git-atlas's to remove, so a reset leaves it as it is.
			wp.Reason, wp.Exists = "adopted from "+rec.Adopted+" at import: git-atlas did not make it and leaves it as it is", exists(rec.Path)
		case foreign != nil:
			// Not git-atlas's (a pulled or edited record naming the user's worktree,
			// say): never inspected, reset, removed or verified in.
			wp.Foreign, wp.Reason = true, "foreign: "+foreign.Error()
		case finishedNode(r, rec.Node):
			wp.Reason, wp.Exists = "node finished", exists(rec.Path)
		case owesVerify(r, rec.Node):
			wp.Reason, wp.Exists = "its job's verify is owed: resume runs it here", exists(rec.Path)
		case keepStage != "" && (rec.Node == keepStage || rec.Stage == keepStage):
			wp.Reason, wp.Exists = "verify first runs here", exists(rec.Path)
		default:
			check, at = append(check, rec), append(at, i)
		}
		plans[i] = wp
	}
	// One `git worktree list`, then every worktree checked in parallel (a status each,
	// and a rev-list when HEAD left the baseline).
	infos, errs, err := worktrees.InspectAll(ctx, repo, check)
	if infos == nil {
		return nil, err
	}
	for k, rec := range check {
		wp, info := &plans[at[k]], infos[k]
		wp.Exists, wp.Dirty, wp.Head = info.Exists, info.Dirty, info.Head
		inProgress, halfMade, owner := worktrees.Making(rec.Path)
		switch {
		case inProgress:
			// Another process is checking it out now: resume leaves it alone and
			// refuses to reset the run until it is done (Apply).
			wp.Action, wp.Reason, wp.Busy = ActionKeep, "being made by "+owner, true
		case halfMade && info.Exists:
			// A killed process left it half-made; it may still hold an agent's work.
			wp.Action, wp.Reason = ActionSnapshot, halfMadeReason
		case halfMade:
			wp.Action, wp.Reason = ActionRecreate, halfMadeReason
		case errs[k] != nil:
			wp.Action, wp.Reason = ActionSnapshot, "unreadable: "+errs[k].Error()
		case info.Missing:
			wp.Action, wp.Reason = ActionRecreate, "missing"
		case info.Dirty:
			wp.Action, wp.Reason = ActionSnapshot, "dirty"
		case info.Head != rec.Head.String():
			wp.Action, wp.Reason = ActionSnapshot, "HEAD moved from "+short(rec.Head.String())
		case rec.Untrusted:
			wp.Action, wp.Reason = ActionSnapshot, "marked untrusted"
		case !info.OnBranch(rec):
			// Detached, or another branch checked out, with no checkout hook to mark
			// it: worktree add refuses it until resume puts it back on its branch.
			wp.Action, wp.Reason = ActionSnapshot, "HEAD left its branch "+rec.Branch
		}
		if ignored != nil && wp.Action == ActionSnapshot && wp.Exists && errs[k] == nil {
			// A reset deletes the ignored files its snapshot leaves out: the plan names
			// them first (an unreadable checkout is set aside whole: nothing deleted).
			// Apply's own plans list none: its snapshots report what they deleted
			// (ignored_deleted), without a second walk of the same files.
			if wp.IgnoredToDelete, err = recovery.IgnoredToDelete(ctx, repo, rec.Path, *ignored); err != nil {
				return nil, err
			}
		}
	}
	return plans, nil
}

func finishedNode(r *ledger.Run, node string) bool {
	if j := r.State.Job(node); j != nil {
		return j.State == ledger.JobDone || j.State == ledger.JobFailed
	}
	if _, st, ok := r.Stage(node); ok {
		return ledger.StageTerminal(st.Status)
	}
	return false
}

// owesVerify: the node is a job whose ok receipt arrived and whose verify is owed; its
// worktree holds the work the verify judges.
func owesVerify(r *ledger.Run, node string) bool {
	j := r.State.Job(node)
	return j != nil && j.State == ledger.JobRunning && j.VerifyOwed
}

func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// frontier is the graph run's job frontier as the reset will leave it: RUNNING jobs
// back to PENDING, attempts and gas unchanged.
func frontier(r *ledger.Run) *Frontier {
	s := r.State
	s.Jobs = append([]ledger.Job(nil), r.State.Jobs...)
	f := &Frontier{ResetJobs: nonNil(ledger.ResumeReset(&s))}
	f.ReadyJobs = nonNil(ledger.Ready(&r.Header, &s))
	f.GasRemaining = ledger.GasRemaining(&r.Header, &s)
	f.VerifyOwed = nonNil(ledger.OwedVerifies(&s))
	return f
}
