package resume

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
)

// Next actions for the orchestrator (SPEC §6.7).
const (
	NextDispatch  = "dispatch"  // open a new attempt of the stage
	NextContinue  = "continue"  // carry on with the stage's open attempt (or the step that finishes it)
	NextGate      = "gate"      // the stage waits at its gate
	NextClaim     = "claim"     // a worker claims a ready job
	NextIntegrate = "integrate" // build the union of the done jobs
	NextFinish    = "finish"    // nothing is left to do: finish the run
	NextWait      = "wait"      // someone else is working: the run's live driver, or running jobs
	NextStop      = "stop"      // the orchestrator stops; a person decides
	NextDone      = "done"      // the run is finished
)

// NextAction tells the orchestrator exactly what to do next.
type NextAction struct {
	Action    string            `json:"action"`
	Stage     string            `json:"stage,omitempty"`
	Attempt   int               `json:"attempt,omitempty"`
	Jobs      []string          `json:"jobs,omitempty"`
	Worktrees map[string]string `json:"worktrees,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	Command   string            `json:"command,omitempty"`
	// ThreadID names the persisted attempt to continue (continue), or whose agent
	// still lives (wait); Lease is the open attempt's stage token, for its reports.
	ThreadID string `json:"thread_id,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Lease    string `json:"lease,omitempty"`
	// Owner is the engine that owns the run's resumption (handoff, handoff.go).
	Owner string `json:"owner,omitempty"`
}

// Host is the machine resume runs on, as an attempt's agent sees it: its name, as
// attempts record it, and whether a process lives on it. The zero Host is the real
// one; a test gives its own.
type Host struct {
	// Name is this host's name (nil: os.Hostname).
	Name func() string
	// PIDAlive reports whether process pid lives on this host (nil: signal 0 where
	// there is one).
	PIDAlive func(pid int) bool
}

// hostname is the host's name.
func (h Host) hostname() string {
	if h.Name != nil {
		return h.Name()
	}
	name, _ := os.Hostname()
	return name
}

// alive reports whether process pid lives on the host.
func (h Host) alive(pid int) bool {
	if h.PIDAlive != nil {
		return h.PIDAlive(pid)
	}
	return pidAlive(pid)
}

// runs reports whether attempt a's agent still runs on the host: it recorded its pid
// here, and that process lives.
func (h Host) runs(a gitstate.Attempt) bool {
	return a.PID > 0 && a.Host == h.hostname() && h.alive(a.PID)
}

// NextForDriver is Next for the run's own driver (the pointer a compacted session
// gets): what to do as the driver, not "wait for the driver".
func NextForDriver(r *gitstate.Run, now time.Time, host Host) NextAction {
	c := *r
	c.State.Driver = nil
	return Next(&c, now, host)
}

// Next derives the orchestrator's next step from the run as it stands (SPEC §6.7).
// It is never a step the ledger would refuse: a dispatch only within the stage's
// budget and after every earlier stage finished, a gate only for a stage that has
// one, integrate only while a DONE job is missing from the union, finish only with no
// job running. A stage whose attempt is open (dispatched, verifying; also right after
// a redispatch) is continued, never dispatched again: that would burn an attempt. An
// attempt whose agent still runs on host is waited for.
func Next(r *gitstate.Run, now time.Time, host Host) NextAction {
	id := r.Header.RunID
	if r.Driven(now) {
		d := r.State.Driver
		who := d.Holder
		if d.Session != "" {
			who += " (session " + d.Session + ")"
		}
		return NextAction{Action: NextWait, Reason: "the run's driver " + who + " is live until " + d.ExpiresAt +
			" (if that driver is gone for good, `git atlas resume " + r.Header.RunID + " --take-over` replaces it, recorded)"}
	}
	switch r.State.Status {
	case gitstate.RunCompleted, gitstate.RunFailed:
		return NextAction{Action: NextDone, Reason: "run " + r.State.Status + reasonSuffix(r.State.Reason)}
	case gitstate.RunStopped:
		return NextAction{Action: NextStop, Reason: "run stopped" + reasonSuffix(r.State.Reason) + ": a person decides whether it goes on",
			Command: "git atlas resume " + id}
	}
	wts := worktreeMap(r)
	cur := r.CurrentStage()
	// An open stage attempt comes first (it is what a resume's verify judged, or
	// just redispatched); then the graph's jobs; then the stages.
	if r.Header.Kind == gitstate.KindGraph && (cur == nil || !inFlight(cur.Status)) {
		if n, ok := nextJobs(r, wts); ok {
			return n
		}
	}
	if cur == nil {
		return finishAction(r)
	}
	def, st, _ := r.Stage(cur.Name)
	transition := func(to string) string { return "git atlas transition " + id + " " + st.Name + " " + to }
	n := NextAction{Stage: st.Name, Worktrees: wts}
	switch st.Status {
	case gitstate.StageDispatched, gitstate.StageVerifying:
		return openAttempt(r, def, st, wts, now, host)
	case gitstate.StagePassed:
		if def.Gate != "" {
			n.Action, n.Reason, n.Command = NextGate, "stage "+st.Name+" passed: it goes to its "+def.Gate+" gate", transition(gitstate.StageGated)
		} else {
			n.Action, n.Reason, n.Command = NextContinue, "stage "+st.Name+" passed and has no gate: mark it completed", transition(gitstate.StageCompleted)
		}
	case gitstate.StageGated:
		n.Action, n.Reason = NextGate, "stage "+st.Name+" waits at its "+def.Gate+" gate: completed approves it, rejected sends it back"
		n.Command = transition(gitstate.StageCompleted)
	default: // pending, failed, rework, rejected: the next step is a new attempt
		if left := gitstate.BudgetLeft(def, st); left == 0 {
			return NextAction{Action: NextFinish, Stage: st.Name, Worktrees: wts,
				Reason:  fmt.Sprintf("stage %s is %s and has used its %d attempt(s) (max_retries %d): no dispatch is left", st.Name, st.Status, len(st.Attempts), def.MaxRetries),
				Command: "git atlas finish " + id + " --status failed"}
		}
		n.Action, n.Attempt = NextDispatch, len(st.Attempts)+1
		n.Reason = fmt.Sprintf("stage %s is %s: attempt %d of %d", st.Name, st.Status, n.Attempt, def.MaxRetries+1)
		n.Command = transition(gitstate.StageDispatched)
	}
	return n
}

// openAttempt is Next for a stage whose attempt is under way: continue it (its
// persisted agent conversation when it has one), wait while its agent lives here, or,
// once it is dead of idleness or past its wall budget, a new attempt when the budget
// allows one.
func openAttempt(r *gitstate.Run, def *gitstate.StageDef, st *gitstate.StageState, wts map[string]string, now time.Time, host Host) NextAction {
	id := r.Header.RunID
	a := st.Attempts[len(st.Attempts)-1]
	n := NextAction{Stage: st.Name, Worktrees: wts, Attempt: a.N, Lease: a.Lease, ThreadID: a.ThreadID}
	report := "git atlas transition " + id + " " + st.Name + " " + gitstate.StagePassed
	if a.Lease != "" {
		report += " --lease " + a.Lease
	}
	if host.runs(a) {
		n.Action, n.PID = NextWait, a.PID
		n.Reason = fmt.Sprintf("attempt %d of stage %s has its agent (pid %d) alive on this host: never a second agent on one attempt", a.N, st.Name, a.PID)
		return n
	}
	over := gitstate.WallExceeded(def, st, now)
	idle := ""
	if r.AttemptIdle(now) {
		idle = fmt.Sprintf("attempt %d of stage %s is dead: no heartbeat for its idle budget %s", a.N, st.Name, def.IdleBudget)
	}
	if over == "" && (a.ThreadID == "" || idle == "") {
		// Dead of idleness, an attempt whose conversation persists is still continued
		// (the preferred way back); without one, a new attempt takes its place.
		over = idle
	}
	if over != "" {
		n.ThreadID, n.Lease = "", ""
		if contains(gitstate.StageAllowed(r, st.Name), gitstate.StageDispatched) {
			n.Action, n.Attempt = NextDispatch, a.N+1
			n.Reason = over + ": dispatch a new attempt"
			n.Command = "git atlas transition " + id + " " + st.Name + " " + gitstate.StageDispatched
			return n
		}
		n.Action, n.Attempt = NextStop, a.N
		n.Reason = over + ", and no attempt is left (max_retries " + fmt.Sprint(def.MaxRetries) + "): a person decides"
		n.Command = "git atlas transition " + id + " " + st.Name + " " + gitstate.StageFailed
		return n
	}
	n.Action = NextContinue
	if a.ThreadID != "" {
		if idle != "" {
			n.Reason = idle + "; "
		}
		n.Reason += fmt.Sprintf("continue the persisted attempt %d of stage %s: its agent conversation is thread %s (e.g. `codex exec resume %s`); then report passed or failed with its stage token", a.N, st.Name, a.ThreadID, a.ThreadID)
	} else {
		n.Reason = fmt.Sprintf("attempt %d of stage %s is open: run (or continue) its work, then report passed or failed", a.N, st.Name)
	}
	n.Command = report
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nextJobs is the graph's part of Next: claim, wait for running jobs, add the first
// jobs, integrate, or stop on a union with conflicts. ok is false when the jobs leave
// the decision to the stages.
func nextJobs(r *gitstate.Run, wts map[string]string) (NextAction, bool) {
	id := r.Header.RunID
	f := gitstate.JobFrontier(&r.Header, &r.State)
	switch {
	case len(f.Ready) > 0:
		return NextAction{Action: NextClaim, Jobs: f.Ready, Worktrees: wts, Command: "git atlas job claim " + id + " --holder <worker>"}, true
	case len(f.Running) > 0:
		return NextAction{Action: NextWait, Jobs: f.Running, Worktrees: wts, Reason: "jobs are running: wait for their receipts"}, true
	case len(r.State.Jobs) == 0 && len(r.State.Stages) == 0:
		return NextAction{Action: NextContinue, Reason: "the graph has no jobs yet: add them",
			Command: "git atlas job add " + id + " <job>"}, true
	}
	if missing := notInUnion(r); len(missing) > 0 {
		return NextAction{Action: NextIntegrate, Jobs: missing, Worktrees: wts, Reason: "DONE jobs the union does not hold yet",
			Command: "git atlas union " + id}, true
	}
	if u := r.State.Union; u != nil && len(u.Conflicted) > 0 {
		var nodes []string
		for n := range u.Conflicted {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		return NextAction{Action: NextStop, Jobs: nodes, Worktrees: wts,
			Reason: "the union conflicts on " + strings.Join(nodes, ", ") + ": a person resolves them"}, true
	}
	return NextAction{}, false
}

// notInUnion lists the DONE jobs that the last union neither integrated nor found in
// conflict: integrating again changes nothing for the others.
func notInUnion(r *gitstate.Run) []string {
	held := map[string]bool{}
	if u := r.State.Union; u != nil {
		for _, n := range u.Integrated {
			held[n] = true
		}
		for n := range u.Conflicted {
			held[n] = true
		}
	}
	var out []string
	for _, j := range r.State.Jobs {
		if j.State == gitstate.JobDone && !held[j.ID] {
			out = append(out, j.ID)
		}
	}
	return out
}

// finishAction: every stage is completed or skipped and no job is left to run. The
// run is finished failed when a job failed or can no longer run, else completed.
func finishAction(r *gitstate.Run) NextAction {
	id := r.Header.RunID
	var failed, stuck []string
	for _, j := range r.State.Jobs {
		switch j.State {
		case gitstate.JobFailed:
			failed = append(failed, j.ID)
		case gitstate.JobPending:
			stuck = append(stuck, j.ID)
		}
	}
	n := NextAction{Action: NextFinish, Reason: "every stage is finished", Command: "git atlas finish " + id + " --status completed"}
	if len(r.State.Stages) == 0 {
		n.Reason = "every job ended"
	}
	if len(failed)+len(stuck) > 0 {
		var why []string
		if len(failed) > 0 {
			why = append(why, "jobs FAILED: "+strings.Join(failed, ", "))
		}
		if len(stuck) > 0 {
			why = append(why, "jobs that can no longer run (no gas or attempts left): "+strings.Join(stuck, ", "))
		}
		n.Reason, n.Command = strings.Join(why, "; "), "git atlas finish "+id+" --status failed"
	}
	return n
}

func worktreeMap(r *gitstate.Run) map[string]string {
	if len(r.State.Worktrees) == 0 {
		return nil
	}
	wts := map[string]string{}
	for _, w := range r.State.Worktrees {
		wts[w.Node] = w.Path
	}
	return wts
}

func reasonSuffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// planView is the run as a resume would leave it before its verify step (SPEC §6.5):
// RUNNING jobs back to PENDING, a stopped run running, no driver. A plan's next action
// is derived from it.
func planView(r *gitstate.Run) *gitstate.Run {
	c := *r
	c.State.Jobs = append([]gitstate.Job(nil), r.State.Jobs...)
	gitstate.ResumeReset(&c.State)
	if c.State.Status == gitstate.RunStopped {
		c.State.Status, c.State.Reason = gitstate.RunRunning, ""
	}
	c.State.Driver = nil
	return &c
}
