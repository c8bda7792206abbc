package ops

import (
	"github.com/git-atlas/git-atlas/ledger"
)

// checkAgent checks the agent and thread id a dispatch or a claim names
// (docs/contract.md §15): both are printed back in commands for an agent to run, so
// each must be a plain value.
func checkAgent(agent, thread string) error {
	if agent != "" {
		if err := ledger.ValidAgent(agent); err != nil {
			return err
		}
	}
	if thread != "" {
		return ledger.ValidThreadID(thread)
	}
	return nil
}

// workPlaces are the worktrees a run's work goes on in now (docs/contract.md §15): its
// current stage's, and its RUNNING jobs', those recorded; nil when it has none.
func workPlaces(r *ledger.Run) []ledger.WorktreeRec {
	var out []ledger.WorktreeRec
	if st := r.CurrentStage(); st != nil {
		if w := r.State.Worktree(st.Name); w != nil && w.Path != "" {
			out = append(out, *w)
		}
	}
	for _, j := range r.State.Jobs {
		if j.State != ledger.JobRunning {
			continue
		}
		if w := r.State.Worktree(j.ID); w != nil && w.Path != "" {
			out = append(out, *w)
		}
	}
	return out
}
