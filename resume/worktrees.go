package resume

import (
	"context"
	"os"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/worktrees"
)

// planWorktrees inspects every managed worktree of the run and decides what the reset
// does with it. Worktrees of finished nodes (DONE or FAILED jobs, completed or skipped
// stages) are kept: their branches are what the union integrates.
//
// The worktree of the stage that verify-first will judge (keepStage) is kept too: its
// work is what the verify command checks; a failed verify that re-dispatches resets it
// then (SPEC §6.6).
func planWorktrees(ctx context.Context, repo *git.Repository, r *gitstate.Run, keepStage string) ([]WorktreePlan, error) {
	plans := []WorktreePlan{}
	for _, rec := range r.State.Worktrees {
		wp := WorktreePlan{Node: rec.Node, Path: rec.Path, Action: ActionKeep}
		if finishedNode(r, rec.Node) || (keepStage != "" && (rec.Node == keepStage || rec.Stage == keepStage)) {
			wp.Reason = "node finished"
			if !finishedNode(r, rec.Node) {
				wp.Reason = "verify first runs here"
			}
			wp.Exists = exists(rec.Path)
			plans = append(plans, wp)
			continue
		}
		if worktrees.HalfMade(rec.Path) {
			wp.Action, wp.Reason = ActionRecreate, "checkout never finished"
			plans = append(plans, wp)
			continue
		}
		if !exists(rec.Path) {
			wp.Action, wp.Reason = ActionRecreate, "missing"
			plans = append(plans, wp)
			continue
		}
		wp.Exists = true
		wt := repo.Worktree(rec.Path)
		head, _, err := wt.Head(ctx)
		if err != nil {
			wp.Action, wp.Reason = ActionSnapshot, "HEAD unreadable"
			plans = append(plans, wp)
			continue
		}
		wp.Head = head
		dirty, err := wt.Dirty(ctx)
		if err != nil {
			wp.Action, wp.Reason = ActionSnapshot, "unreadable: "+err.Error()
			plans = append(plans, wp)
			continue
		}
		wp.Dirty = dirty
		switch {
		case dirty:
			wp.Action, wp.Reason = ActionSnapshot, "dirty"
		case head != rec.Head:
			wp.Action, wp.Reason = ActionSnapshot, "HEAD moved from "+short(rec.Head)
		case rec.Untrusted:
			wp.Action, wp.Reason = ActionSnapshot, "marked untrusted"
		}
		plans = append(plans, wp)
	}
	return plans, nil
}

func finishedNode(r *gitstate.Run, node string) bool {
	if j := r.State.Job(node); j != nil {
		return j.State == gitstate.JobDone || j.State == gitstate.JobFailed
	}
	if _, st, ok := r.Stage(node); ok {
		return gitstate.StageTerminal(st.Status)
	}
	return false
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
func frontier(r *gitstate.Run) *Frontier {
	s := r.State
	s.Jobs = append([]gitstate.Job(nil), r.State.Jobs...)
	f := &Frontier{ResetJobs: nonNil(gitstate.ResumeReset(&s))}
	f.ReadyJobs = nonNil(gitstate.Ready(&r.Header, &s))
	f.GasRemaining = gitstate.GasRemaining(&r.Header, &s)
	return f
}
