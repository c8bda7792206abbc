package ledger

import (
	"fmt"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// UndoResult says what Undo restored and what it had to leave as it is.
type UndoResult struct {
	To        int      `json:"to"`
	From      int      `json:"from"`
	Epoch     int      `json:"epoch"`
	ResetJobs []string `json:"reset_jobs"`
	// Kept are the parts of the state that stay as they are now, because they
	// describe what exists outside the ledger or what was spent.
	Kept []string `json:"kept"`
}

// Undo sets r (the run's newest state) back to past, the state right after event
// past.State.Seq, as one new event (docs/contract.md §14): the chain is never rewritten. What is
// restored is what the ledger alone decides: run and stage statuses, the jobs and
// their states. What undo cannot take back stays as it is now, so that the ledger
// never says something untrue:
//   - the epoch is raised, so every lease token issued so far is stale; jobs that were
//     RUNNING at past go back to PENDING (their tokens could otherwise still match);
//     the stage tokens of attempts opened after past are revoked;
//   - gas and attempts are never refunded: gas spent, each job's attempt count and each
//     stage's attempts and reworks keep the larger of then and now;
//   - worktrees, snapshots, replay branches and the union are facts on disk and in
//     refs: they stay as now.
//
// It refuses (exit 5) a finished or stopped run, and a past that cannot be restored
// honestly: one that had a managed worktree since removed or recreated (its work is in
// a snapshot, not in that worktree), or that recorded a snapshot the ledger no longer
// has (consumed or dropped). present reports whether a ref still exists.
func Undo(r, past *Run, present func(ref string) bool) (*UndoResult, error) {
	id, seq := r.Header.RunID, past.State.Seq
	switch {
	case RunTerminal(r.State.Status):
		return nil, fault.Refused("run %s is %s: undo never reopens a finished run", id, r.State.Status).
			WithHint("start a new run from where this one ended")
	case r.State.Status == RunStopped:
		return nil, fault.Refused("run %s is stopped: only resume and finish change a stopped run", id).
			WithHint("`%s` first, then undo", fault.Do("resume", "run", id))
	case seq >= r.State.Seq:
		return nil, fault.Refused("run %s is at event %d: there is nothing after event %d to undo", id, r.State.Seq, seq)
	}
	for _, pw := range past.State.Worktrees {
		now := r.State.Worktree(pw.Node)
		if now == nil || now.Path != pw.Path || now.Baseline != pw.Baseline {
			return nil, fault.Refused("run %s cannot go back to event %d: the worktree of node %s it had then was removed or recreated since", id, seq, pw.Node).
				WithHint("its work is kept in a recovery snapshot: `%s`; undo to an event after the removal, or restore the snapshot with `%s`",
					fault.Do("recovery list", "run", id), fault.Do("recovery restore", "snapshot", fault.Placeholder("SNAPSHOT")))
		}
	}
	for _, ps := range past.State.Snapshots {
		found := false
		for _, s := range r.State.Snapshots {
			found = found || s.ID == ps.ID
		}
		if !found || (present != nil && !present(ps.Ref)) {
			return nil, fault.Refused("run %s cannot go back to event %d: snapshot %s it recorded then has been consumed or dropped", id, seq, ps.ID)
		}
	}

	now := r.State
	st := past.State
	st.Seq = now.Seq // commit numbers the new event
	st.Epoch = now.Epoch + 1
	st.UpdatedAt = now.UpdatedAt
	st.GasSpent = max(now.GasSpent, past.State.GasSpent)
	st.GasFixed = now.GasFixed // fixed at the first claim: going back never resets it
	st.Driver = now.Driver
	st.Worktrees, st.Snapshots, st.Union, st.Replays = now.Worktrees, now.Snapshots, now.Union, now.Replays
	st.Resuming = nil
	st.Extra = now.Extra

	st.Stages = make([]StageState, len(past.State.Stages))
	copy(st.Stages, past.State.Stages)
	for i := range st.Stages {
		for _, n := range now.Stages {
			if n.Name != st.Stages[i].Name {
				continue
			}
			if then := len(st.Stages[i].Attempts); len(n.Attempts) > then {
				// Kept (never refunded), but the tokens of attempts opened after
				// past are revoked: every token issued after past is stale.
				st.Stages[i].Attempts = append([]Attempt(nil), n.Attempts...)
				for k := then; k < len(st.Stages[i].Attempts); k++ {
					st.Stages[i].Attempts[k].Lease = ""
				}
			}
			st.Stages[i].Reworks = max(st.Stages[i].Reworks, n.Reworks)
		}
	}

	res := &UndoResult{To: seq, From: now.Seq, Epoch: st.Epoch, ResetJobs: []string{},
		Kept: []string{"gas_spent", "gas_fixed", "attempts", "driver", "worktrees", "snapshots", "union", "replays"}}
	st.Jobs = make([]Job, len(past.State.Jobs))
	copy(st.Jobs, past.State.Jobs)
	for i := range st.Jobs {
		j := &st.Jobs[i]
		if n := now.Job(j.ID); n != nil {
			j.Attempts = max(j.Attempts, n.Attempts)
		}
		if j.State == JobRunning {
			endLease(j, JobPending)
			res.ResetJobs = append(res.ResetJobs, j.ID)
		}
	}
	if len(st.Jobs) == 0 {
		st.Jobs = nil
	}
	r.State = st
	return res, nil
}

// String is the undo for people.
func (u *UndoResult) String() string {
	return fmt.Sprintf("back to the state after event %d (was at %d), epoch %d", u.To, u.From, u.Epoch)
}
