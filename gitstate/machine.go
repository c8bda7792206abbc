package gitstate

import (
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// Run statuses (SPEC §5.1).
const (
	RunRunning   = "running"
	RunBlocked   = "blocked"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunStopped   = "stopped"
)

// Stage statuses (SPEC §5.2).
const (
	StagePending    = "pending"
	StageDispatched = "dispatched"
	StageVerifying  = "verifying"
	StagePassed     = "passed"
	StageGated      = "gated"
	StageCompleted  = "completed"
	StageRejected   = "rejected"
	StageFailed     = "failed"
	StageRework     = "rework"
	StageSkipped    = "skipped"
)

// Job states (SPEC §5.3).
const (
	JobPending = "PENDING"
	JobRunning = "RUNNING"
	JobDone    = "DONE"
	JobFailed  = "FAILED"
)

var runMachine = map[string][]string{
	RunRunning: {RunBlocked, RunCompleted, RunFailed, RunStopped},
	RunBlocked: {RunRunning, RunCompleted, RunFailed, RunStopped},
	RunStopped: {RunRunning},
}

var stageMachine = map[string][]string{
	StagePending:    {StageDispatched, StageSkipped},
	StageDispatched: {StageVerifying, StagePassed, StageFailed, StageDispatched},
	StageVerifying:  {StagePassed, StageFailed},
	StagePassed:     {StageGated, StageCompleted},
	StageGated:      {StageCompleted, StageRejected},
	StageFailed:     {StageDispatched, StageRework},
	StageRework:     {StageDispatched},
	StageRejected:   {StageDispatched},
	StageCompleted:  nil,
	StageSkipped:    nil,
}

// StageStatuses lists every stage status, in machine order.
var StageStatuses = []string{StagePending, StageDispatched, StageVerifying, StagePassed, StageGated, StageCompleted, StageRejected, StageFailed, StageRework, StageSkipped}

// RunTerminal reports whether a run status is final.
func RunTerminal(status string) bool { return status == RunCompleted || status == RunFailed }

// StageTerminal reports whether a stage status is final.
func StageTerminal(status string) bool { return status == StageCompleted || status == StageSkipped }

// StageTargets lists the statuses a stage may move to from status.
func StageTargets(status string) []string { return stageMachine[status] }

// CheckRunTransition refuses a run status change the machine does not allow.
func CheckRunTransition(from, to string) error {
	if _, ok := runMachine[to]; !ok && !RunTerminal(to) {
		return fault.Usage("unknown run status %q (valid: running, blocked, completed, failed, stopped)", to)
	}
	for _, t := range runMachine[from] {
		if t == to {
			return nil
		}
	}
	return fault.Refused("run is %s: cannot become %s", from, to).WithHint("valid targets from %s: %s", from, orNone(runMachine[from]))
}

// CheckStageTransition refuses a stage status change the machine does not allow, and
// names the valid targets.
func CheckStageTransition(stage, from, to string) error {
	if _, ok := stageMachine[to]; !ok {
		return fault.Usage("unknown stage status %q (valid: %s)", to, strings.Join(StageStatuses, ", "))
	}
	for _, t := range stageMachine[from] {
		if t == to {
			return nil
		}
	}
	return fault.Refused("stage %s is %s: cannot move to %s; valid targets: %s", stage, from, to, orNone(stageMachine[from]))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none (terminal)"
	}
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, ", ")
}

// ApplyStageTransition moves stage to status in r (already checked), opening a new
// attempt on every dispatch and refusing one past the stage's max_retries budget.
// Budgets are counted from the ledger's attempts, so they survive any resume.
func ApplyStageTransition(r *Run, stage, to, reason, baseline, at string) error {
	def, st, ok := r.Stage(stage)
	if !ok {
		return fault.NotFound("run %s has no stage %q", r.Header.RunID, stage).WithHint("stages: %s", strings.Join(stageNames(r), ", "))
	}
	if RunTerminal(r.State.Status) {
		return fault.Refused("run %s is %s: no more transitions", r.Header.RunID, r.State.Status)
	}
	if err := CheckStageTransition(stage, st.Status, to); err != nil {
		return err
	}
	if to == StageDispatched {
		// The first dispatch is the first try; max_retries more are allowed.
		if len(st.Attempts) >= def.MaxRetries+1 {
			return fault.Refused("stage %s has used its %d attempt(s) (max_retries %d)", stage, len(st.Attempts), def.MaxRetries)
		}
		st.Attempts = append(st.Attempts, Attempt{N: len(st.Attempts) + 1, StartedAt: at, Baseline: baseline})
	}
	if to == StageRework {
		st.Reworks++
		// rework_to sends the work back to an earlier stage: it is reopened in rework
		// (even from completed), so its next dispatch is a new attempt, counted against
		// its own budget. A stage that never ran has nothing to rework.
		if def.ReworkTo != "" && def.ReworkTo != stage {
			if _, back, ok := r.Stage(def.ReworkTo); ok && len(back.Attempts) > 0 {
				back.Status = StageRework
				back.Reason = "rework from " + stage
				if reason != "" {
					back.Reason += ": " + reason
				}
				back.UpdatedAt = at
			}
		}
	}
	st.Status = to
	st.Reason = reason
	st.UpdatedAt = at
	return nil
}

// BudgetLeft is how many more dispatches a stage may have.
func BudgetLeft(def *StageDef, st *StageState) int {
	left := def.MaxRetries + 1 - len(st.Attempts)
	if left < 0 {
		return 0
	}
	return left
}

func stageNames(r *Run) []string {
	var n []string
	for _, s := range r.State.Stages {
		n = append(n, s.Name)
	}
	return n
}

// CurrentStage is the first stage that is not terminal ("" when all are).
func (r *Run) CurrentStage() *StageState {
	for i := range r.State.Stages {
		if !StageTerminal(r.State.Stages[i].Status) {
			return &r.State.Stages[i]
		}
	}
	return nil
}
