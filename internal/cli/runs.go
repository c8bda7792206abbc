package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/ops"
)

// DriverFlags name who makes a run write (docs/contract.md §5.1): --holder takes a free driver
// lease or renews its own (same holder, or same --session), another live driver's
// run is refused (exit 3) unless --take-over. The rule itself is ledger.ClaimDriver,
// applied by the store on every compare-and-swap try; these are only its flags.
type DriverFlags struct {
	Holder   string        `help:"${driver_holder}" placeholder:"NAME"`
	Session  string        `env:"ATLAS_SESSION" help:"${driver_session}" placeholder:"ID"`
	TakeOver bool          `name:"take-over" help:"${driver_take_over}"`
	TTL      time.Duration `name:"ttl" positive:"" help:"${driver_ttl}" placeholder:"DUR"`
}

// ops is the driver the flags name, for an operation's request.
func (d DriverFlags) ops() ops.Driver {
	return ops.Driver{Holder: d.Holder, Session: d.Session, TakeOver: d.TakeOver, TTL: d.TTL}
}

// WorkerFlags name a worker holding job leases: its writes never touch the run's
// driver lease (docs/contract.md §5.1).
type WorkerFlags struct {
	Holder string        `help:"${worker_holder}" placeholder:"NAME"`
	TTL    time.Duration `name:"ttl" positive:"" help:"${worker_ttl}" placeholder:"DUR"`
}

// ops is the worker the flags name, for an operation's request.
func (f WorkerFlags) ops() ops.Worker { return ops.Worker{Holder: f.Holder, TTL: f.TTL} }

// StartCmd is `git atlas start`.
type StartCmd struct {
	ID           string   `name:"id" help:"${start_id}" placeholder:"ID"`
	Intent       string   `help:"${start_intent}" placeholder:"TEXT"`
	Criterion    []string `sep:"none" help:"${start_criterion}" placeholder:"TEXT"`
	Verify       string   `help:"${start_verify}" placeholder:"CMD"`
	VerifySafe   bool     `help:"${start_verify_safe}"`
	Scope        []string `sep:"none" help:"${start_scope}" placeholder:"GLOB"`
	Baseline     string   `help:"${start_baseline}" placeholder:"REV"`
	Stages       string   `help:"${start_stages}" placeholder:"a,b,c"`
	Pipeline     string   `help:"${start_pipeline}" placeholder:"FILE"`
	Graph        bool     `help:"${start_graph}"`
	Gas          int      `positive:"" help:"${start_gas}"`
	MaxAttempts  int      `name:"max-attempts" positive:"" help:"${start_max_attempts}"`
	MaxJobs      int      `name:"max-jobs" positive:"" help:"${start_max_jobs}"`
	MaxDepth     int      `name:"max-depth" positive:"" help:"${start_max_depth}"`
	Config       []string `sep:"none" help:"${start_config}" placeholder:"FILE"`
	ManagedBy    string   `name:"managed-by" help:"${start_managed_by}" placeholder:"NAME"`
	ResumeWith   string   `name:"resume-with" help:"${start_resume_with}" placeholder:"CMD"`
	DispatchOnly bool     `name:"dispatch-only" help:"${start_dispatch_only}"`
	Setup        string   `help:"${start_setup}" placeholder:"CMD"`
	// SetupTimeout is 0 when not given: the run then records none (the default applies).
	SetupTimeout time.Duration `name:"setup-timeout" help:"${start_setup_timeout}" placeholder:"DUR"`
	Ports        int           `help:"${start_ports}" placeholder:"N"`
	DriverFlags
}

// Run starts the run.
func (c *StartCmd) Run(env *Env) error {
	pipeline := c.Pipeline
	if pipeline != "" {
		pipeline = env.path(pipeline)
	}
	files := make([]string, len(c.Config))
	for i, f := range c.Config {
		files[i] = env.path(f)
	}
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Start(env.Ctx, ops.StartRequest{ID: c.ID, Intent: c.Intent, Criteria: c.Criterion, Verify: c.Verify, VerifySafe: c.VerifySafe,
		Scope: c.Scope, Baseline: c.Baseline, Pipeline: pipeline, StageList: c.Stages, Graph: c.Graph, Gas: c.Gas, MaxAttempts: c.MaxAttempts, MaxJobs: c.MaxJobs,
		MaxDepth: c.MaxDepth, ConfigFiles: files, Driver: c.ops(),
		ManagedBy: c.ManagedBy, ResumeWith: c.ResumeWith, DispatchOnly: c.DispatchOnly,
		Setup: c.Setup, SetupTimeout: c.SetupTimeout, Ports: c.Ports})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) { fmt.Fprintln(w, res.RunID) })
}

// runView is the JSON of a run in start, list and show (docs/contract.md §4.7).
type runView = ops.RunView

func runJSON(r *ops.Run, now time.Time) runView { return ops.RunViewOf(r, now) }

// ListCmd is `git atlas list`.
type ListCmd struct {
	All bool `help:"${list_all}"`
}

// Run lists runs; an unreadable run is listed as such and never hides the others.
func (c *ListCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.List(env.Ctx, ops.ListRequest{All: c.All, ForAgent: env.forAgent()})
	if err != nil {
		return err
	}
	for _, it := range res.Runs {
		if it.Unreadable {
			env.warn("%s", it.Error)
		}
	}
	return env.out(res, func(w io.Writer) {
		if len(res.Runs) == 0 {
			fmt.Fprintln(w, "no runs")
			return
		}
		t := newTable(w, "RUN", "KIND", "STATUS", "STAGE", "LIVE", "UPDATED", "BASELINE")
		for _, it := range res.Runs {
			live := "-"
			if it.Live {
				live = it.Holder
			}
			t.row(it.RunID, dash(it.Kind), it.Status+modeNote(it.PipelineMode, it.ManagedBy, it.TakenOver), dash(it.CurrentStage), live, dash(ageOrEmpty(it.UpdatedAt, res.Now)), dash(short(it.Baseline)))
		}
		t.flush()
	})
}

func ageOrEmpty(stamp string, now time.Time) string {
	if stamp == "" {
		return ""
	}
	return age(stamp, now)
}

// ShowCmd is `git atlas show RUN`.
type ShowCmd struct {
	RunID string `arg:"" name:"run" help:"${show_run}"`
	At    *int   `help:"${show_at}" placeholder:"SEQ"`
}

// Run shows header and state.
func (c *ShowCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Show(env.Ctx, ops.ShowRequest{Run: c.RunID, At: c.At, ForAgent: env.forAgent()})
	if err != nil {
		return err
	}
	r := res.Run
	return env.out(res, func(w io.Writer) {
		if c.At != nil {
			fmt.Fprintf(w, "as of     event %d (%s)\n", r.State.Seq, r.Tip)
		}
		printRun(w, r, res.Now)
		printVerdict(w, res.Verdict)
	})
}

func printRun(w io.Writer, r *ops.Run, now time.Time) {
	h, s := r.Header, r.State
	fmt.Fprintf(w, "run       %s (%s)\n", ledgerText(h.RunID, cellMax), ledgerText(h.Kind, cellMax))
	status := s.Status
	if s.Reason != "" {
		status += " (" + s.Reason + ")"
	}
	fmt.Fprintf(w, "status    %s\n", ledgerText(status, cellMax))
	if r.Live(now) {
		fmt.Fprintf(w, "driver    %s, live until %s (%s)\n", ledgerText(driverName(s.Driver), cellMax), ledgerText(s.Driver.ExpiresAt, cellMax), until(s.Driver.ExpiresAt, now))
		if r.AttemptIdle(now) {
			fmt.Fprintf(w, "          but the open attempt is dead (no heartbeat for its idle budget): the run counts as interrupted\n")
		}
	} else {
		fmt.Fprintf(w, "driver    none live\n")
	}
	fmt.Fprintf(w, "baseline  %s\n", ledgerText(h.Baseline.String(), cellMax))
	fmt.Fprintf(w, "epoch     %d, %d events, updated %s\n", s.Epoch, s.Seq, age(s.UpdatedAt, now))
	if h.Intent != "" {
		fmt.Fprintf(w, "intent    %s\n", ledgerText(h.Intent, cellMax))
	}
	for _, c := range h.Criteria {
		fmt.Fprintf(w, "criterion %s\n", ledgerText(c, cellMax))
	}
	if h.Mode() != ops.ModeStandalone {
		fmt.Fprintf(w, "mode      %s\n", ledgerText(modeLine(h.Mode(), h.ManagedBy, h.ResumeWith, s.TakenOver), 0))
	}
	if len(s.Stages) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "STAGE", "STATUS", "GATE", "ATTEMPTS", "BUDGET", "VERIFY")
		views := ops.StageViews(r, now)
		for _, v := range views {
			verify := v.Verify
			if verify != "" && v.VerifySafe {
				verify += " (safe)"
			}
			if v.Unverified != "" { // passed on the agent's word: say so (docs/contract.md §5.2)
				verify = dash(verify) + " [unverified: " + v.Unverified + "]"
			}
			t.row(v.Name, v.Status, v.Gate, fmt.Sprint(v.Attempts), fmt.Sprint(v.BudgetLeft), dash(verify))
		}
		t.flush()
		for _, v := range views {
			def, st, _ := r.Stage(v.Name)
			a := ops.OpenAttempt(st)
			if a == nil {
				continue
			}
			beat := "no heartbeat yet"
			if a.HeartbeatAt != "" {
				beat = "heartbeat " + age(a.HeartbeatAt, now)
			}
			line := fmt.Sprintf("attempt   %s #%d (retry %d of %d) by %s, started %s, %s", v.Name, a.N, a.N-1, def.MaxRetries, dash(a.Holder), age(a.StartedAt, now), beat)
			if v.WallLeft != "" {
				line += ", wall budget left " + v.WallLeft
			}
			if v.IdleLeft != "" {
				line += ", idle budget left " + v.IdleLeft
			}
			if a.ThreadID != "" {
				line += ", thread " + a.ThreadID
			}
			if a.PID != 0 {
				line += fmt.Sprintf(", pid %d on %s", a.PID, dash(a.Host))
			}
			fmt.Fprintln(w, ledgerText(line, 0))
		}
	}
	if h.Setup != "" || h.Ports > 0 {
		fmt.Fprintln(w)
	}
	if h.Setup != "" {
		fmt.Fprintf(w, "setup     %s\n", ledgerText(h.Setup, cellMax))
	}
	for _, wt := range s.Worktrees {
		line := ""
		if wt.Setup != nil {
			line = fmt.Sprintf(" setup %s (exit %d)", wt.Setup.Outcome, wt.Setup.ExitCode)
			if !wt.Ready() {
				line += ", not ready: `git atlas worktree setup " + h.RunID + " " + wt.Node + "` runs it again"
			}
		}
		if len(wt.Ports) > 0 {
			line += fmt.Sprintf(" ports %d-%d", wt.Ports[0], wt.Ports[len(wt.Ports)-1])
		}
		if line != "" {
			fmt.Fprintln(w, ledgerText("worktree  "+wt.Node+line, 0))
		}
	}
	if len(s.Jobs) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "JOB", "STATE", "ATTEMPTS", "NEEDS", "LEASE")
		for _, j := range s.Jobs {
			t.row(j.ID, j.State, fmt.Sprint(j.Attempts), dash(strings.Join(j.Needs, ",")), dash(j.Lease))
		}
		t.flush()
	}
}

// LogCmd is `git atlas log RUN`.
type LogCmd struct {
	RunID string `arg:"" name:"run" help:"${log_run}"`
	Type  string `help:"${log_type}" placeholder:"TYPE"`
	Stage string `help:"${log_stage}" placeholder:"STAGE"`
	Last  int    `positive:"" help:"${log_last}" placeholder:"N"`
	// Heartbeats are many and say little: left out unless asked.
	Heartbeats bool `help:"Include heartbeat events (left out by default; --type heartbeat shows only them)."`
	// Diverged reads a chain kept by pull or a --remote write (refs/atlas/diverged/<run>/<n>).
	Diverged int `positive:"" help:"Read the run's N-th kept diverged chain (refs/atlas/diverged/RUN/N, kept when the remote's chain won) instead of its ledger." placeholder:"N"`
}

// Run prints the events.
func (c *LogCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Log(env.Ctx, ops.LogRequest{Run: c.RunID, Type: c.Type, Stage: c.Stage, Last: c.Last, Heartbeats: c.Heartbeats, Diverged: c.Diverged, ForAgent: env.forAgent()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		t := newTable(w, "SEQ", "TIME", "EPOCH", "TYPE", "STAGE/JOB", "DATA")
		for _, e := range res.Kept {
			subject := e.Stage
			if e.Job != "" {
				subject = e.Job
			}
			t.row(fmt.Sprint(e.Seq), e.Time, fmt.Sprint(e.Epoch), string(e.Type), dash(subject), dash(string(e.Data)))
		}
		t.flush()
	})
}

// TransitionCmd is `git atlas transition RUN STAGE STATUS`.
type TransitionCmd struct {
	RunID         string        `arg:"" name:"run" help:"${transition_run}"`
	Stage         string        `arg:"" help:"${transition_stage}"`
	Status        string        `arg:"" help:"${transition_status}"`
	Reason        string        `help:"${transition_reason}" placeholder:"TEXT"`
	Lease         string        `help:"${transition_lease}" placeholder:"TOKEN"`
	ThreadID      string        `name:"thread-id" help:"${transition_thread_id}" placeholder:"ID"`
	Agent         string        `name:"agent" enum:",claude,codex,kimi" default:"" help:"${transition_agent}" placeholder:"AGENT"`
	PID           int           `name:"pid" help:"${transition_pid}" placeholder:"PID"`
	ApprovedBy    string        `name:"approved-by" help:"Passing or rejecting a human gate, or --allow-outside-scope, is a person's step: without a terminal, name the person approving it (recorded in the event)." placeholder:"NAME"`
	VerifyTimeout time.Duration `positive:"" help:"With passed: kill the stage's verify (run first when it is verify_safe and trusted here) after this long (default 10m)." placeholder:"DUR"`
	// docs/contract.md §5.3: accepting a stage's changes outside its scope is a person's step.
	AllowOutsideScope bool `name:"allow-outside-scope" help:"With passed: accept the stage although its work changed paths outside its scope: a person's step (a terminal, or --approved-by), recorded."`
	DriverFlags
}

// Help is the command's long help.
func (c *TransitionCmd) Help() string {
	return `Checked against the stage machine (docs/contract.md §5.2); a refused move names the valid targets
(exit 5, "valid_targets" in the JSON error). Every dispatch opens a new attempt, pins its
baseline (the stage worktree's HEAD, else the HEAD of the checkout this runs in) at
refs/atlas/pins/<run>/stage/<stage>/<n>, and prints its stage token
<stage>#<attempt>@<epoch>.<nonce> ("lease" in --json). Give the token to whoever does the
attempt's work: a report with --lease and a stale token (an older attempt) is refused
(exit 3) and changes nothing. A single run whose last stage becomes completed or skipped
completes itself in the same write (reason all-stages-completed).`
}

// Run applies one checked stage transition.
func (c *TransitionCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Transition(env.Ctx, ops.TransitionRequest{Run: c.RunID, Stage: c.Stage, Status: c.Status, Reason: c.Reason, Lease: c.Lease,
		ThreadID: c.ThreadID, Agent: c.Agent, PID: c.PID, Driver: c.ops(), Person: env.person(c.ApprovedBy), VerifyTimeout: c.VerifyTimeout,
		AllowOutsideScope: c.AllowOutsideScope, ForAgent: env.forAgent()})
	if res != nil && err != nil { // a passed report whose verify failed: the stage is failed
		_ = env.out(res, func(w io.Writer) { printTransition(w, c.Stage, res) })
	}
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) { printTransition(w, c.Stage, res) })
}

// printTransition is a transition for people.
func printTransition(w io.Writer, stage string, res *ops.TransitionResult) {
	fmt.Fprintf(w, "%s: %s -> %s\n", stage, res.Stage.From, res.Stage.Status)
	switch {
	case res.Stage.Verify != nil:
		fmt.Fprintf(w, "verify %s: exit %d\n", ledgerText(res.Stage.Verify.Command, cellMax), res.Stage.Verify.ExitCode)
	case res.Stage.Unverified != "":
		fmt.Fprintf(w, "passed unverified (%s)\n", res.Stage.Unverified)
	}
	if res.Lease != nil && *res.Lease != "" {
		fmt.Fprintf(w, "lease %s\n", *res.Lease)
	}
	if res.RunStatus == ops.RunCompleted && res.RunReason == ops.ReasonAllStagesCompleted {
		fmt.Fprintf(w, "run %s completed: every stage is completed or skipped\n", res.RunID)
	}
}

// HeartbeatCmd is `git atlas heartbeat RUN --holder H [--stage S]`.
type HeartbeatCmd struct {
	RunID string `arg:"" name:"run" help:"${heartbeat_run}"`
	Stage string `help:"${heartbeat_stage}" placeholder:"STAGE"`
	Lease string `help:"${heartbeat_lease}" placeholder:"TOKEN"`
	DriverFlags
}

// Help is the command's long help.
func (c *HeartbeatCmd) Help() string {
	return `Renews the driver lease (until now + --ttl) and, with --stage, records the heartbeat of
the stage's open attempt, in one write. Another live driver's run is refused (exit 3)
unless --take-over. An attempt past its stage's wall_budget is refused heartbeats (exit 5),
and one with no heartbeat for its idle_budget is dead: its run counts as interrupted.
` + "`git atlas log`" + ` leaves heartbeats out unless --heartbeats or --type heartbeat.`
}

// Run beats.
func (c *HeartbeatCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Heartbeat(env.Ctx, ops.HeartbeatRequest{Run: c.RunID, Stage: c.Stage, Lease: c.Lease, Driver: c.ops()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s: driver %s until %s\n", c.RunID, ledgerText(res.Driver.Holder, cellMax), res.Driver.ExpiresAt)
	})
}

// EventCmd is `git atlas event RUN TYPE`.
type EventCmd struct {
	RunID string `arg:"" name:"run" help:"${event_run}"`
	Type  string `arg:"" help:"${event_type}"`
	Stage string `help:"${event_stage}" placeholder:"STAGE"`
	Data  string `help:"${event_data}" placeholder:"JSON"`
	DriverFlags
}

// Help is the command's long help.
func (c *EventCmd) Help() string {
	return "TYPE is any valid name but the types git-atlas writes itself (appending one of\n" +
		"those by hand would make the ledger say something its state does not): " +
		ops.ReservedEventTypes() + "."
}

// Run appends the event.
func (c *EventCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Event(env.Ctx, ops.EventRequest{Run: c.RunID, Type: c.Type, Stage: c.Stage, Data: json.RawMessage(c.Data), Driver: c.ops()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) { fmt.Fprintf(w, "%s #%d %s\n", c.RunID, res.Seq, c.Type) })
}

// FinishCmd is `git atlas finish RUN --status S`.
type FinishCmd struct {
	RunID            string `arg:"" name:"run" help:"${finish_run}"`
	Status           string `required:"" enum:"completed,stopped,failed" help:"${finish_status}"`
	Reason           string `help:"${finish_reason}" placeholder:"TEXT"`
	Force            bool   `help:"${finish_force}"`
	AcceptUnresolved bool   `name:"accept-unresolved" help:"Finish a graph run completed although its verdict is unresolved: a person's step (a terminal, or --approved-by), recorded."`
	ApprovedBy       string `name:"approved-by" help:"Without a terminal, the person approving --accept-unresolved (recorded in the event)." placeholder:"NAME"`
	DriverFlags
}

// Help is the command's long help.
func (c *FinishCmd) Help() string {
	return `A running or blocked run may become completed, failed or stopped; a stopped run
completed or failed (or running again, through resume). A graph run with RUNNING jobs is
not finished completed or failed (exit 5, naming them): their receipts would be refused
forever. --force reaps them first, in its own recorded event (job_reaped).`
}

// Run finishes the run.
func (c *FinishCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Finish(env.Ctx, ops.FinishRequest{Run: c.RunID, Status: c.Status, Reason: c.Reason, Force: c.Force, Driver: c.ops(),
		AcceptUnresolved: c.AcceptUnresolved, Person: env.person(c.ApprovedBy)})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		for _, o := range res.Reaped {
			fmt.Fprintf(w, "%s: lease %s reaped -> %s\n", o.ID, o.Lease, o.To)
		}
		fmt.Fprintf(w, "%s %s\n", c.RunID, c.Status)
		printVerdict(w, res.Verdict) // docs/contract.md §5.3: unverified is said, not hidden
		printOutsideScope(w, "left out of the union, outside scope", res.OutsideScope)
	})
}

// driverName is a lease's holder for people (never its session, docs/contract.md §5.1).
func driverName(d *ops.Lease) string { return d.Holder }

// driverText is a driver lease for people: "holder until T" (never its session).
func driverText(d *ops.Lease) string {
	if d == nil {
		return "none"
	}
	return d.Holder + " until " + d.ExpiresAt
}

// modeNote marks a list row of a run git-atlas does not resume itself: " (managed by
// NAME)", " (dispatch-only)"; nothing for a standalone run or one taken over here.
func modeNote(mode, owner, takenOver string) string {
	switch {
	case takenOver != "" || mode == ops.ModeStandalone || mode == "":
		return ""
	case mode == ops.ModeManaged:
		return " (managed by " + ledgerText(owner, cellMax) + ")"
	}
	return " (" + ledgerText(mode, cellMax) + ")"
}

// modeLine says who resumes a run that is not standalone; its resume command is
// quoted, as text (a command only where trust says so: `resume --plan`).
func modeLine(mode, owner, resumeWith, takenOver string) string {
	line := mode
	if owner != "" {
		line += ", managed by " + owner
	}
	if resumeWith != "" {
		line += ", resumed there with " + strconv.Quote(resumeWith)
	}
	if takenOver != "" {
		line += "; taken over here by " + takenOver
	}
	return line
}
