package resume

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// Next actions for the orchestrator (docs/contract.md §6.7).
const (
	NextDispatch  = "dispatch"  // open a new attempt of the stage
	NextContinue  = "continue"  // carry on with the stage's open attempt (or the step that finishes it)
	NextGate      = "gate"      // the stage waits at its gate
	NextClaim     = "claim"     // a worker claims a ready job
	NextIntegrate = "integrate" // build the union of the done jobs
	NextFinish    = "finish"    // nothing is left to do: finish the run
	NextWait      = "wait"      // someone else is working: the run's live driver, a live attempt, or running jobs
	NextTakeOver  = "take_over" // the run's driver lease lives but its attempt is dead: replace that driver, recorded
	NextStop      = "stop"      // the orchestrator stops; a person decides
	NextDone      = "done"      // the run is finished
	NextSetup     = "setup"     // a worktree to work in is not ready: its setup did not succeed
)

// NextAction tells the orchestrator exactly what to do next.
type NextAction struct {
	Action    string            `json:"action"`
	Stage     string            `json:"stage,omitempty"`
	Attempt   int               `json:"attempt,omitempty"`
	Jobs      []string          `json:"jobs,omitempty"`
	Worktrees map[string]string `json:"worktrees,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	// Command runs as printed for the one who asked (docs/contract.md §11.13): it carries the
	// asker's --holder (or the attempt's stage token), every argument quoted for sh.
	// When the asker named no holder and does not drive the run, it is left out and
	// Template is the command with <holder> where the asker's name goes.
	Command  string `json:"command,omitempty"`
	Template string `json:"template,omitempty"`
	// Verdict is a graph run's verdict when finish is suggested and it is not
	// resolved (unverified: some criterion is met by unverified jobs only).
	Verdict string `json:"verdict,omitempty"`
	// ThreadID names the persisted attempt to continue (continue), or whose agent
	// still lives (wait); Lease is the open attempt's stage token, for its reports.
	ThreadID string `json:"thread_id,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Lease    string `json:"lease,omitempty"`
	// Agent is the agent of the attempt to continue (continue), when its dispatch
	// named one; AgentCommand is that agent's own command to continue the
	// conversation ThreadID from the stage's worktree, quoted for sh (AgentContinue).
	Agent        string `json:"agent,omitempty"`
	AgentCommand string `json:"agent_command,omitempty"`
	// Owner is the engine that owns the run's resumption (handoff, handoff.go).
	Owner string `json:"owner,omitempty"`
	// Tool and Arguments are Step as an MCP tool call: the tool and its arguments
	// (a placeholder as <name>). Only the MCP front end sets them.
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// Step is the operation Command (or Template) runs, with its fields, and Why the
	// reason when it names request fields or steps: each front end spells them
	// (Spell; docs/contract.md §4.6). A field the asker must fill in is a
	// fault.Placeholder: the step is then a Template.
	Step fault.Step `json:"-"`
	Why  fault.Text `json:"-"`
}

// Spell sets n's Command (or Template) and Reason from its Step and Why as the front
// end sp writes them. A next action with no step (wait, done, a handoff's own
// command) keeps what it says.
func (n *NextAction) Spell(sp fault.Spelling) {
	if sp.Step == nil {
		sp = plainSpelling
	}
	if n.Why.Format != "" {
		n.Reason = n.Why.Spell(sp)
	}
	if n.Step.Op == "" {
		return
	}
	line := sp.Step(n.Step)
	n.Command, n.Template = line, ""
	for _, f := range n.Step.Fields {
		if _, ok := f.Value.(fault.Placeholder); ok {
			n.Command, n.Template = "", line
		}
	}
}

// plainSpelling is the spelling of an asker that gave none: fields by their names,
// steps in neutral words (fault.Step's String).
var plainSpelling = fault.Spelling{Field: func(f string) string { return f }, Step: fault.Step.String}

// why sets n's reason to the text of format and args (fields as {name}, steps as
// arguments), for the front end to spell.
func (n *NextAction) why(format string, args ...any) { n.Why = fault.Textf(format, args...) }

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
func (h Host) runs(a ledger.Attempt) bool {
	return a.PID > 0 && a.Host == h.hostname() && h.alive(a.PID)
}

// Asker is who asks for the next action: the --holder and --session of the command
// that asked. The commands a next action prints are for the asker (docs/contract.md §11.13).
type Asker struct {
	Holder  string
	Session string
	// Key reads the ledger's keyed hashes of sessions (ledger.SessionKey): a
	// session matches the stored one only through it.
	Key ledger.SessionKey
	// Spelling is how the asker's front end writes a next action's step and the
	// fields its reason names (docs/contract.md §4.6); the zero one: neutral words.
	Spelling fault.Spelling
}

// Drives reports whether the asker holds the run's live driver lease: its holder, or
// its session (a compacted session coming back).
func (a Asker) Drives(r *ledger.Run, now time.Time) bool {
	if !r.Live(now) {
		return false
	}
	d := r.State.Driver
	return (a.Holder != "" && d.Holder == a.Holder) || a.Key.Matches(d.Session, a.Session)
}

// name is the --holder the asker's commands carry: its own, else (a session that
// drives the run) the driver's; "" when unknown.
func (a Asker) name(r *ledger.Run, now time.Time) string {
	if a.Holder != "" {
		return a.Holder
	}
	if a.Drives(r, now) {
		return r.State.Driver.Holder
	}
	return ""
}

// ownAttempt reports whether attempt a is the asker's own: its session (the driver
// coming back after a compaction, same pid or not), or its holder when the attempt
// recorded no session.
func (a Asker) ownAttempt(at ledger.Attempt) bool {
	if at.Session != "" {
		return a.Key.Matches(at.Session, a.Session)
	}
	return a.Holder != "" && at.Holder == a.Holder
}

// othersAttempt reports whether attempt a is known to be someone else's: it records
// a session or holder that is not the asker's.
func (a Asker) othersAttempt(at ledger.Attempt) bool {
	return (at.Session != "" || at.Holder != "") && !a.ownAttempt(at)
}

// LiveAttempt is the current stage's open attempt when its agent is live (docs/contract.md §5.2):
// its pid alive on this host, or its last heartbeat (else its start) inside the
// stage's idle budget; nil otherwise.
func LiveAttempt(r *ledger.Run, now time.Time, host Host) *ledger.Attempt {
	cur := r.CurrentStage()
	if cur == nil {
		return nil
	}
	_, st, _ := r.Stage(cur.Name)
	a := ledger.OpenAttempt(st)
	if a == nil {
		return nil
	}
	if host.runs(*a) {
		return a
	}
	if t := r.IdleDeadline(); !t.IsZero() && now.Before(t) {
		return a
	}
	return nil
}

// OthersLiveAttempt is LiveAttempt when the attempt is not the asker's: its pid lives
// here and it is not the asker's own, or its heartbeat is inside its idle budget and
// it records another session or holder. Such an attempt is never acted on without
// --take-over (docs/contract.md §5.2).
func OthersLiveAttempt(r *ledger.Run, now time.Time, host Host, asker Asker) *ledger.Attempt {
	a := LiveAttempt(r, now, host)
	switch {
	case a == nil:
		return nil
	case host.runs(*a) && !asker.ownAttempt(*a), asker.othersAttempt(*a):
		return a
	}
	return nil
}

// command sets n's step for the asker named who: s with its holder who; with no
// name, the template with the <holder> placeholder instead.
func (n *NextAction) command(who string, s fault.Step) {
	n.Step = s.With("holder", holder(who))
}

// holder is the value of a step's holder field for the asker named who: the
// <holder> placeholder when unknown.
func holder(who string) any {
	if who == "" {
		return fault.Placeholder("<holder>")
	}
	return who
}

// Next is NextFor an asker who named nobody (no holder, no session).
func Next(r *ledger.Run, now time.Time, host Host) NextAction {
	return NextFor(r, now, host, Asker{})
}

// NextFor derives the asker's next step from the run as it stands (docs/contract.md §6.7).
// For anyone but the run's live driver it is wait (or take_over, with its command,
// when the driver's attempt is dead); for the driver, or anyone on a run with no live
// driver, the step itself, its command carrying the asker's holder. It is never a
// step the ledger would refuse: a dispatch only within the stage's budget and after
// every earlier stage finished, a gate only for a stage that has one, integrate only
// while a DONE job with a branch is missing from the union, finish only with no job
// running. A stage whose attempt is open (dispatched, verifying; also right after a
// redispatch) is continued, never dispatched again: that would burn an attempt. An
// attempt whose agent is live and not the asker's is waited for.
func NextFor(r *ledger.Run, now time.Time, host Host, asker Asker) NextAction {
	id := r.Header.RunID
	if !ledger.RunTerminal(r.State.Status) && r.Live(now) && !asker.Drives(r, now) {
		d := r.State.Driver // named by holder and expiry, never its session (docs/contract.md §5.1)
		who := d.Holder
		takeOver := fault.Do("resume", "run", id, "take_over", true, "holder", holder(asker.Holder))
		if r.Driven(now) {
			n := NextAction{Action: NextWait}
			n.why("the run's driver %s is live until %s (if that driver is gone for good, `%s` replaces it, recorded)", who, d.ExpiresAt, takeOver)
			n.Spell(asker.Spelling)
			return n
		}
		n := NextAction{Action: NextTakeOver, Step: takeOver}
		n.why("the run's driver %s holds its lease until %s but its attempt is dead (no heartbeat for its idle budget): resume it with {take_over} to replace that driver, recorded", who, d.ExpiresAt)
		n.Spell(asker.Spelling)
		return n
	}
	c := *r
	c.State.Driver = nil
	n := next(&c, now, host, asker, asker.name(r, now))
	n.Spell(asker.Spelling)
	return n
}

// next is NextFor once the asker may act on the run: who is the --holder its
// commands carry ("" for a template).
func next(r *ledger.Run, now time.Time, host Host, asker Asker, who string) NextAction {
	id := r.Header.RunID
	switch r.State.Status {
	case ledger.RunCompleted, ledger.RunFailed:
		return NextAction{Action: NextDone, Reason: "run " + r.State.Status + reasonSuffix(r.State.Reason)}
	case ledger.RunStopped:
		n := NextAction{Action: NextStop, Reason: "run stopped" + reasonSuffix(r.State.Reason) + ": a person decides whether it goes on"}
		n.command(who, fault.Do("resume", "run", id))
		return n
	}
	if n, ok := notReady(r, who); ok {
		return n
	}
	wts := worktreeMap(r)
	cur := r.CurrentStage()
	// An open stage attempt comes first (it is what a resume's verify judged, or
	// just redispatched); then the graph's jobs; then the stages.
	if r.Header.Kind == ledger.KindGraph && (cur == nil || !inFlight(cur.Status)) {
		if n, ok := nextJobs(r, wts, who); ok {
			return n
		}
	}
	if cur == nil {
		return finishAction(r, who)
	}
	def, st, _ := r.Stage(cur.Name)
	n := NextAction{Stage: st.Name, Worktrees: wts}
	transition := func(to string) { n.command(who, fault.Do("transition", "run", id, "stage", st.Name, "status", to)) }
	switch st.Status {
	case ledger.StageDispatched, ledger.StageVerifying:
		return openAttempt(r, def, st, wts, now, host, asker, who)
	case ledger.StagePassed:
		if def.Gate != "" {
			n.Action, n.Reason = NextGate, "stage "+st.Name+" passed: it goes to its "+def.Gate+" gate"
			transition(ledger.StageGated)
		} else {
			n.Action, n.Reason = NextContinue, "stage "+st.Name+" passed and has no gate: mark it completed"
			transition(ledger.StageCompleted)
		}
	case ledger.StageGated:
		n.Action, n.Reason = NextGate, "stage "+st.Name+" waits at its "+def.Gate+" gate: completed approves it, rejected sends it back"
		transition(ledger.StageCompleted)
		if def.Gate == "human" {
			// A person's step (docs/contract.md §5.2): never a command an agent runs as printed; the
			// person's name goes where <person> is.
			n.why("%s; a human gate is passed by a person only, on a terminal or with {approved_by} NAME", n.Reason)
			n.Step = n.Step.With("approved_by", fault.Placeholder("<person>"))
		}
	default: // pending, failed, rework, rejected: the next step is a new attempt
		if left := ledger.BudgetLeft(def, st); left == 0 {
			n := NextAction{Action: NextFinish, Stage: st.Name, Worktrees: wts,
				Reason: fmt.Sprintf("stage %s is %s and has used its %d attempt(s) (max_retries %d): no dispatch is left", st.Name, st.Status, len(st.Attempts), def.MaxRetries)}
			n.command(who, fault.Do("finish", "run", id, "status", ledger.RunFailed))
			return n
		}
		n.Action, n.Attempt = NextDispatch, len(st.Attempts)+1
		n.Reason = fmt.Sprintf("stage %s is %s: attempt %d of %d", st.Name, st.Status, n.Attempt, def.MaxRetries+1)
		transition(ledger.StageDispatched)
	}
	return n
}

// openAttempt is Next for a stage whose attempt is under way: continue it (its
// persisted agent conversation when it has one), wait while its agent lives here, or,
// once it is dead of idleness or past its wall budget, a new attempt when the budget
// allows one.
func openAttempt(r *ledger.Run, def *ledger.StageDef, st *ledger.StageState, wts map[string]string, now time.Time, host Host, asker Asker, who string) NextAction {
	id := r.Header.RunID
	a := st.Attempts[len(st.Attempts)-1]
	n := NextAction{Stage: st.Name, Worktrees: wts, Attempt: a.N, Lease: a.Lease, ThreadID: a.ThreadID}
	if host.runs(a) && !asker.ownAttempt(a) {
		n.Action, n.PID = NextWait, a.PID
		n.Reason = fmt.Sprintf("attempt %d of stage %s has its agent (pid %d) alive on this host: never a second agent on one attempt", a.N, st.Name, a.PID)
		return n
	}
	if live := OthersLiveAttempt(r, now, host, asker); live != nil {
		n.Action = NextWait
		n.Reason = fmt.Sprintf("attempt %d of stage %s is live (a heartbeat inside its idle budget %s) and is not yours: never a second agent on one attempt", a.N, st.Name, def.IdleBudget)
		return n
	}
	over := ledger.WallExceeded(def, st, now)
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
		if contains(ledger.StageAllowed(r, st.Name), ledger.StageDispatched) {
			n.Action, n.Attempt = NextDispatch, a.N+1
			n.Reason = over + ": dispatch a new attempt"
			n.command(who, fault.Do("transition", "run", id, "stage", st.Name, "status", ledger.StageDispatched))
			return n
		}
		n.Action, n.Attempt = NextStop, a.N
		n.Reason = over + ", and no attempt is left (max_retries " + fmt.Sprint(def.MaxRetries) + "): a person decides"
		n.command(who, fault.Do("transition", "run", id, "stage", st.Name, "status", ledger.StageFailed))
		return n
	}
	n.Action = NextContinue
	if a.ThreadID != "" {
		if idle != "" {
			n.Reason = idle + "; "
		}
		n.Agent, n.AgentCommand = a.Agent, AgentContinue(a.Agent, a.ThreadID, wts[st.Name])
		if n.AgentCommand != "" {
			n.Reason += fmt.Sprintf("continue the persisted attempt %d of stage %s: its %s conversation is %s (`%s`); then report passed or failed with its stage token", a.N, st.Name, a.Agent, a.ThreadID, n.AgentCommand)
		} else {
			n.Reason += fmt.Sprintf("continue the persisted attempt %d of stage %s: its agent conversation is thread %s (e.g. `codex exec resume %s`); then report passed or failed with its stage token", a.N, st.Name, a.ThreadID, a.ThreadID)
		}
	} else {
		n.Reason = fmt.Sprintf("attempt %d of stage %s is open: run (or continue) its work, then report passed or failed", a.N, st.Name)
	}
	// The report carries the attempt's stage token: with it, the command runs as
	// printed for whoever does the attempt's work, named or not.
	report := fault.Do("transition", "run", id, "stage", st.Name, "status", ledger.StagePassed)
	if a.Lease != "" {
		report = report.With("lease", a.Lease)
		if who == "" {
			n.Step = report
			return n
		}
	}
	n.command(who, report)
	return n
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

// nextJobs is the graph's part of Next: claim, wait for running jobs, add the first
// jobs, integrate, or stop on a union with conflicts. ok is false when the jobs leave
// the decision to the stages.
func nextJobs(r *ledger.Run, wts map[string]string, who string) (NextAction, bool) {
	id := r.Header.RunID
	f := ledger.JobFrontier(&r.Header, &r.State)
	switch {
	case len(f.Ready) > 0:
		n := NextAction{Action: NextClaim, Jobs: f.Ready, Worktrees: wts}
		n.why("jobs are ready: a worker claims one (its {holder} is the worker's name)")
		n.command(who, fault.Do("job claim", "run", id))
		return n, true
	case len(f.Running) > 0:
		if n, ok := continueJob(r, f.Running, wts); ok {
			return n, true
		}
		return NextAction{Action: NextWait, Jobs: f.Running, Worktrees: wts, Reason: "jobs are running: wait for their receipts"}, true
	case len(r.State.Jobs) == 0 && len(r.State.Stages) == 0:
		// A job needs a name only the orchestrator can give: a template, never a
		// command with a placeholder in it.
		n := NextAction{Action: NextContinue, Reason: "the graph has no jobs yet: add them"}
		n.command(who, fault.Do("job add", "run", id, "job", fault.Placeholder("<job>")))
		return n, true
	}
	if missing := notInUnion(r); len(missing) > 0 {
		n := NextAction{Action: NextIntegrate, Jobs: missing, Worktrees: wts, Reason: "DONE jobs the union does not hold yet"}
		n.command(who, fault.Do("union", "run", id))
		return n, true
	}
	if u := r.State.Union; u != nil && len(u.Conflicted) > 0 {
		nodes := slices.Sorted(maps.Keys(u.Conflicted))
		return NextAction{Action: NextStop, Jobs: nodes, Worktrees: wts,
			Reason: "the union conflicts on " + strings.Join(nodes, ", ") + ": a person resolves them"}, true
	}
	if u := r.State.Union; u != nil && len(u.OutsideScope) > 0 {
		// docs/contract.md §5.3: a job that changed paths outside its scope is left out of
		// the union until it is redone or a person lets it in.
		nodes := slices.Sorted(maps.Keys(u.OutsideScope))
		n := NextAction{Action: NextStop, Jobs: nodes, Worktrees: wts}
		n.why("the union left out %s, changed outside its scope: a person lets it in (union {allow_outside_scope} JOB) or has it redone", strings.Join(nodes, ", "))
		return n, true
	}
	return NextAction{}, false
}

// continueJob is continue for the first running job whose claim named its agent and
// that agent's own thread id and whose worktree exists (docs/contract.md §15): the
// agent's own command continues that conversation from the job's worktree, and the
// receipt, carrying the job's lease, ends the attempt. A job whose verify is owed is
// resume's, not the agent's.
func continueJob(r *ledger.Run, running []string, wts map[string]string) (NextAction, bool) {
	id := r.Header.RunID
	for _, jid := range running {
		j, w := r.State.Job(jid), r.State.Worktree(jid)
		if j == nil || j.VerifyOwed || w == nil || j.Lease == "" {
			continue
		}
		cmd := AgentContinue(j.Agent, j.ThreadID, w.Path)
		if cmd == "" {
			continue
		}
		if fi, err := os.Stat(w.Path); err != nil || !fi.IsDir() {
			continue
		}
		n := NextAction{Action: NextContinue, Jobs: []string{jid}, Worktrees: wts, ThreadID: j.ThreadID, Lease: j.Lease,
			Agent: j.Agent, AgentCommand: cmd,
			Reason: fmt.Sprintf("job %s is RUNNING: continue its %s conversation %s (`%s`); then its receipt with its lease", jid, j.Agent, j.ThreadID, cmd)}
		// The receipt is the job's worker's, whoever asked: it carries the lease and
		// the holder the claim recorded.
		n.Step = fault.Do("job done", "run", id, "job", jid, "lease", j.Lease, "status", ledger.ReceiptOK)
		if j.Holder != "" {
			n.Step = n.Step.With("holder", j.Holder)
		}
		return n, true
	}
	return NextAction{}, false
}

// notInUnion lists the DONE jobs union can integrate that the last union neither
// integrated nor found in conflict: integrating again changes nothing for the
// others. A job with no branch (it never had a worktree, or the last union found its
// branch gone) has nothing to integrate: it is reported once (noBranch), not looped
// on.
func notInUnion(r *ledger.Run) []string {
	held := map[string]bool{}
	if u := r.State.Union; u != nil {
		for _, n := range u.Integrated {
			held[n] = true
		}
		for n := range u.Conflicted {
			held[n] = true
		}
		for _, n := range u.Missing {
			held[n] = true
		}
		for n := range u.OutsideScope {
			held[n] = true
		}
	}
	var out []string
	for _, j := range r.State.Jobs {
		if j.State == ledger.JobDone && !held[j.ID] && r.State.Worktree(j.ID) != nil {
			out = append(out, j.ID)
		}
	}
	return out
}

// noBranch lists the DONE jobs with nothing for union to integrate: no worktree (so
// no branch) was ever recorded for them, or the last union found no branch.
func noBranch(r *ledger.Run) []string {
	var out []string
	missing := map[string]bool{}
	if u := r.State.Union; u != nil {
		for _, n := range u.Missing {
			missing[n] = true
		}
	}
	for _, j := range r.State.Jobs {
		if j.State == ledger.JobDone && (r.State.Worktree(j.ID) == nil || missing[j.ID]) {
			out = append(out, j.ID)
		}
	}
	return out
}

// finishAction: every stage is completed or skipped and no job is left to run. The
// run is finished failed when a job failed or can no longer run, else completed.
func finishAction(r *ledger.Run, who string) NextAction {
	id := r.Header.RunID
	var failed, stuck []string
	for _, j := range r.State.Jobs {
		switch j.State {
		case ledger.JobFailed:
			failed = append(failed, j.ID)
		case ledger.JobPending:
			stuck = append(stuck, j.ID)
		}
	}
	n := NextAction{Action: NextFinish, Reason: "every stage is finished"}
	status := ledger.RunCompleted
	if len(r.State.Stages) == 0 {
		n.Reason = "every job ended"
	}
	if nb := noBranch(r); len(nb) > 0 && r.Header.Kind == ledger.KindGraph {
		n.Reason += "; DONE jobs with no branch, so nothing to integrate: " + strings.Join(nb, ", ")
	}
	if len(failed)+len(stuck) > 0 {
		var why []string
		if len(failed) > 0 {
			why = append(why, "jobs FAILED: "+strings.Join(failed, ", "))
		}
		if len(stuck) > 0 {
			why = append(why, "jobs that can no longer run (no gas or attempts left): "+strings.Join(stuck, ", "))
		}
		n.Reason, status = strings.Join(why, "; "), ledger.RunFailed
	} else if v := ledger.RunVerdict(&r.Header, &r.State); r.Header.Kind == ledger.KindGraph && v != nil && v.Verdict != ledger.VerdictResolved {
		// docs/contract.md §5.3: finish completed refuses an unresolved verdict (a person may
		// accept it); an unverified one is said, not hidden.
		n.Verdict = v.Verdict
		if v.Verdict == ledger.VerdictUnresolved {
			n.Action = NextStop
			n.why("the run's verdict is unresolved (criteria no DONE job meets: %s): a person decides between finishing it failed and accepting it (finish {status} completed {accept_unresolved})", strings.Join(v.Unresolved, "; "))
			n.command(who, fault.Do("finish", "run", id, "status", ledger.RunFailed))
			return n
		}
		n.Reason += "; verdict unverified (criteria met by unverified jobs only: " + strings.Join(v.Unverified, "; ") + ")"
	}
	n.command(who, fault.Do("finish", "run", id, "status", status))
	return n
}

func worktreeMap(r *ledger.Run) map[string]string {
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

// planView is the run as a resume would leave it before its verify step (docs/contract.md §6.5):
// RUNNING jobs back to PENDING, a stopped run running, no driver. A plan's next action
// is derived from it.
func planView(r *ledger.Run) *ledger.Run {
	c := *r
	c.State.Jobs = append([]ledger.Job(nil), r.State.Jobs...)
	ledger.ResumeReset(&c.State)
	if c.State.Status == ledger.RunStopped {
		c.State.Status, c.State.Reason = ledger.RunRunning, ""
	}
	c.State.Driver = nil
	return &c
}

// notReady is the setup step owed by a worktree someone is to work in (the current
// stage's, a job's that is not settled, the union's) whose setup did not succeed
// (docs/contract.md §15): the worktree is not ready, and nothing falls back to the
// user's checkout.
func notReady(r *ledger.Run, who string) (NextAction, bool) {
	cur := r.CurrentStage()
	for _, w := range r.State.Worktrees {
		if w.Ready() {
			continue
		}
		j := r.State.Job(w.Node)
		switch {
		case cur != nil && w.Node == cur.Name, w.Node == "union",
			j != nil && j.State != ledger.JobDone && j.State != ledger.JobFailed:
		default:
			continue
		}
		n := NextAction{Action: NextSetup, Stage: w.Stage,
			Reason: fmt.Sprintf("the worktree of %s is not ready: its setup %s (exit %d); run it again once its cause is fixed", w.Node, w.Setup.Outcome, w.Setup.ExitCode)}
		if j != nil {
			n.Jobs = []string{w.Node}
		}
		if w.Setup.Outcome == ledger.SetupUntrusted {
			n.why("the worktree of %s is not ready: its setup came with the run from elsewhere and was not run; a person trusts it (`%s`), then runs it", w.Node, fault.Do("trust", "run", r.Header.RunID))
		}
		n.command(who, fault.Do("worktree setup", "run", r.Header.RunID, "node", w.Node))
		return n, true
	}
	return NextAction{}, false
}
