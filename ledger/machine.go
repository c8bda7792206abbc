package ledger

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/gitid"
)

// Run statuses (docs/contract.md §5.1).
const (
	RunRunning   = "running"
	RunBlocked   = "blocked"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunStopped   = "stopped"
)

// Stage statuses (docs/contract.md §5.2).
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

// Job states (docs/contract.md §5.3).
const (
	JobPending = "PENDING"
	JobRunning = "RUNNING"
	JobDone    = "DONE"
	JobFailed  = "FAILED"
)

var runMachine = map[string][]string{
	RunRunning: {RunBlocked, RunCompleted, RunFailed, RunStopped},
	RunBlocked: {RunRunning, RunCompleted, RunFailed, RunStopped},
	// A stopped run goes back to running only through resume; finish may also end it
	// completed or failed (a person decides the paused work is done, or abandoned).
	RunStopped: {RunRunning, RunCompleted, RunFailed},
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

// runStatuses and jobStates list every run status and job state.
var (
	runStatuses = []string{RunRunning, RunBlocked, RunCompleted, RunFailed, RunStopped}
	jobStates   = []string{JobPending, JobRunning, JobDone, JobFailed}
)

// StageStatuses lists every stage status, in machine order.
var StageStatuses = []string{StagePending, StageDispatched, StageVerifying, StagePassed, StageGated, StageCompleted, StageRejected, StageFailed, StageRework, StageSkipped}

// RunTerminal reports whether a run status is final.
func RunTerminal(status string) bool { return status == RunCompleted || status == RunFailed }

// StageTerminal reports whether a stage status is final.
func StageTerminal(status string) bool { return status == StageCompleted || status == StageSkipped }

// CheckRunTransition refuses a run status change the machine does not allow.
func CheckRunTransition(from, to string) error {
	if _, ok := runMachine[to]; !ok && !RunTerminal(to) {
		return fault.Usage("unknown run status %q (valid: running, blocked, completed, failed, stopped)", to)
	}
	if slices.Contains(runMachine[from], to) {
		return nil
	}
	return fault.Refused("run is %s: cannot become %s", from, to).WithHint("valid targets from %s: %s", from, orNone(runMachine[from])).WithTargets(runMachine[from])
}

// RunTargets lists the statuses a run may move to from status.
func RunTargets(status string) []string { return runMachine[status] }

// CheckStageTransition refuses a stage status change the machine does not allow, and
// names the valid targets.
func CheckStageTransition(stage, from, to string) error {
	if _, ok := stageMachine[to]; !ok {
		return fault.Usage("unknown stage status %q (valid: %s)", to, strings.Join(StageStatuses, ", "))
	}
	if slices.Contains(stageMachine[from], to) {
		return nil
	}
	return fault.Refused("stage %s is %s: cannot move to %s; valid targets: %s", stage, from, to, orNone(stageMachine[from])).WithTargets(stageMachine[from])
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none (terminal)"
	}
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, ", ")
}

// ApplyStageTransition moves stage to status in r, opening a new attempt on every
// dispatch. Beyond the table of docs/contract.md §5.2 (CheckStageTransition) it refuses what the
// run's definitions forbid (StageAllowed): a stage with a gate goes passed → gated
// only and one without a gate passed → completed only; a stage is dispatched only when
// every earlier stage is completed or skipped; no dispatch past the stage's
// max_retries budget (counted from the ledger's attempts, so it survives any resume).
// Every refusal names the targets the stage may take now. at is the transition's
// time; nonce is the nonce of the stage token a dispatch issues (gitstate.Store.Nonce; unused
// by any other transition).
func ApplyStageTransition(r *Run, stage, to, reason string, baseline gitid.OID, at, nonce string) error {
	def, st, ok := r.Stage(stage)
	if !ok {
		return fault.NotFound("run %s has no stage %q", r.Header.RunID, stage).WithHint("stages: %s", strings.Join(stageNames(r), ", "))
	}
	if RunTerminal(r.State.Status) {
		return fault.Refused("run %s is %s: no more transitions", r.Header.RunID, r.State.Status).WithTargets(nil)
	}
	if err := CheckStageTransition(stage, st.Status, to); err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Targets != nil {
			now := StageAllowed(r, stage)
			fe.Msg = fmt.Sprintf("stage %s is %s: cannot move to %s; valid targets now: %s", stage, st.Status, to, orNone(now))
			fe.Targets = nonNilTargets(now)
		}
		return err
	}
	if why := stageBlocked(r, def, st, to); why != "" {
		return fault.Refused("stage %s is %s: cannot move to %s: %s; valid targets now: %s", stage, st.Status, to, why, orNone(StageAllowed(r, stage))).
			WithTargets(StageAllowed(r, stage))
	}
	if to == StageDispatched {
		// The attempt's token is <stage>#<attempt>@<epoch> and a nonce, as a job's
		// lease token is: two clones that dispatch the same stage from the same ledger
		// would otherwise issue the same token, and once one side's chain is kept the
		// other side's subagent could report on an attempt it never ran.
		n := len(st.Attempts) + 1
		st.Attempts = append(st.Attempts, Attempt{N: n, StartedAt: at, Baseline: baseline, Lease: LeaseToken(stage, n, r.State.Epoch, nonce)})
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
	autoComplete(r)
	return nil
}

// ReasonAllStagesCompleted is the reason of a single run that completed itself.
const ReasonAllStagesCompleted = "all-stages-completed"

// autoComplete ends a single run whose every stage is completed or skipped (none can
// then be failed or rejected) in the write that finished its last stage (docs/contract.md §5.1):
// no run stays "running" with nothing left to do.
func autoComplete(r *Run) {
	if r.Header.Kind != KindSingle || len(r.State.Stages) == 0 || RunTerminal(r.State.Status) {
		return
	}
	for _, s := range r.State.Stages {
		if !StageTerminal(s.Status) {
			return
		}
	}
	r.State.Status, r.State.Reason, r.State.Driver = RunCompleted, ReasonAllStagesCompleted, nil
}

// stageBlocked says why the run's definitions forbid a move the table allows, or "".
func stageBlocked(r *Run, def *StageDef, st *StageState, to string) string {
	switch {
	case st.Status == StagePassed && to == StageCompleted && def.Gate != "":
		return fmt.Sprintf("it has a %s gate, which is mandatory: passed → gated, then completed or rejected at the gate", def.Gate)
	case st.Status == StagePassed && to == StageGated && def.Gate == "":
		return "it has no gate"
	case to == StageDispatched && len(st.Attempts) >= def.MaxRetries+1:
		// The first dispatch is the first try; max_retries more are allowed.
		return fmt.Sprintf("it has used its %d attempt(s) (max_retries %d)", len(st.Attempts), def.MaxRetries)
	case to == StageDispatched:
		if open := openBefore(r, st.Name); len(open) > 0 {
			return "earlier stages are not completed or skipped: " + strings.Join(open, ", ")
		}
	}
	return ""
}

// openBefore lists the stages before stage that are neither completed nor skipped, as
// "name (status)": a stage is dispatched only after every earlier one is finished.
func openBefore(r *Run, stage string) []string {
	var open []string
	for _, s := range r.State.Stages {
		if s.Name == stage {
			break
		}
		if !StageTerminal(s.Status) {
			open = append(open, s.Name+" ("+s.Status+")")
		}
	}
	return open
}

// StageAllowed lists the statuses stage may move to now: the table of docs/contract.md §5.2 less
// what the run refuses (a finished run, the gate rule, the stage order, the budget).
// It is what a refused transition names as its valid targets, and what next_action
// may suggest.
func StageAllowed(r *Run, stage string) []string {
	def, st, ok := r.Stage(stage)
	if !ok || RunTerminal(r.State.Status) {
		return []string{}
	}
	out := []string{}
	for _, to := range stageMachine[st.Status] {
		if stageBlocked(r, def, st, to) == "" {
			out = append(out, to)
		}
	}
	return out
}

func nonNilTargets(t []string) []string {
	if t == nil {
		return []string{}
	}
	return t
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

// ErrAlreadyFinished: finish named the status the run already has (a single run that
// completed itself): nothing to write, and not an error for the command.
var ErrAlreadyFinished = errors.New("run already has that status")

// Finish ends a run (`git atlas finish`): running, blocked or stopped to completed,
// failed or stopped, as the run machine allows. A run with RUNNING jobs is not
// finished completed or failed: their workers' receipts would be refused forever
// (ReapRunning first ends those leases, recorded). Stopping such a run is allowed: a
// stopped run is resumed, and resume puts its RUNNING jobs back to PENDING.
func Finish(r *Run, status, reason string) error {
	if status == r.State.Status && RunTerminal(status) {
		return ErrAlreadyFinished
	}
	if err := CheckRunTransition(r.State.Status, status); err != nil {
		return err
	}
	if RunTerminal(status) {
		var held, holders []string
		for _, j := range r.State.Jobs {
			if j.State == JobRunning {
				held = append(held, fmt.Sprintf("%s (lease %s, holder %s)", j.ID, j.Lease, orDash(j.Holder)))
				holders = append(holders, j.Holder)
			}
		}
		if len(held) > 0 {
			return fault.Named(fault.ErrRefused, "run %s has running jobs: %s; finished %s, their receipts would be refused forever", r.Header.RunID, strings.Join(held, ", "), status).
				WithHint("wait for their receipts, or pass {force} to reap them first (each takes the timeout transition, recorded as job_reaped)").
				WithQuoted(holders...)
		}
	}
	r.State.Status, r.State.Reason, r.State.Driver = status, reason, nil
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
