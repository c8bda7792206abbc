package cli

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ops"
)

// ResumeCmd is `git atlas resume` (docs/contract.md §6).
type ResumeCmd struct {
	RunID         string        `arg:"" optional:"" name:"run" help:"${resume_run}"`
	Detect        bool          `help:"List interrupted runs; change nothing." xor:"mode"`
	Plan          bool          `help:"Print the resume plan; change nothing." xor:"mode"`
	Brief         bool          `help:"A few lines for an agent's session start; nothing when there is nothing to resume; never fails." xor:"mode"`
	Session       string        `help:"${resume_session}" placeholder:"ID"`
	TakeOver      bool          `name:"take-over" help:"${resume_take_over}"`
	Holder        string        `help:"${resume_holder}" placeholder:"NAME"`
	TTL           time.Duration `name:"ttl" positive:"" help:"${resume_ttl}" placeholder:"DUR"`
	NoVerify      bool          `help:"${resume_no_verify}"`
	VerifyTimeout time.Duration `positive:"" help:"${resume_verify_timeout}" placeholder:"DUR"`
	OnVerifyFail  string        `enum:",fail,redispatch,replay,stop" default:"" empty:"ok" help:"${resume_on_verify_fail}"`
	SnapshotFlags
}

// Run resumes.
func (c *ResumeCmd) Run(env *Env) error {
	if c.Brief {
		if env.Remote == nil {
			// A session start reads this clone's ledger as it is, as the agent hook
			// does: atlas.remote is not read (no fork, no network), so an unreachable
			// remote can neither slow the brief nor hide an interrupted run.
			local := ""
			env.Remote = &local
		}
		c.brief(env)
		return nil
	}
	o, err := env.Ops()
	if err != nil {
		return err
	}
	if c.Detect {
		res, err := o.ResumeDetect(env.Ctx, ops.ResumeDetectRequest{Session: c.session(env)})
		if err != nil {
			return err
		}
		for _, b := range res.UnreadableRuns {
			env.warn("%s", b.Error)
		}
		return env.out(res, func(w io.Writer) { printDetect(w, res) })
	}
	snap, err := c.options()
	if err != nil {
		return err
	}
	req := ops.ResumeRequest{
		RunID: c.RunID, Session: c.session(env), TakeOver: c.TakeOver, Holder: c.Holder, TTL: c.TTL,
		NoVerify: c.NoVerify, VerifyTimeout: c.VerifyTimeout, OnVerifyFail: c.OnVerifyFail, Warn: env.warn,
		ForAgent: env.forAgent(), Snapshot: snap,
	}
	if !env.headless() {
		req.Prompt = &ops.Prompt{Choose: env.chooseRun(env.now()), Ask: env.ask}
	}
	if c.Plan {
		p, err := o.ResumePlan(env.Ctx, req)
		if err != nil {
			return err
		}
		return env.out(p, func(w io.Writer) { printPlan(w, p, env.now(), env.spelling()) })
	}
	res, err := o.Resume(env.Ctx, req)
	if res != nil && err != nil {
		_ = env.out(res, func(w io.Writer) { printResult(w, res, env.spelling()) })
	}
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) { printResult(w, res, env.spelling()) })
}

// session is --session, else $ATLAS_SESSION.
func (c *ResumeCmd) session(env *Env) string {
	if c.Session != "" {
		return c.Session
	}
	return env.getenv("ATLAS_SESSION")
}

// printDetect prints the interrupted runs (--detect), after the pointer to the run the
// session still drives.
func printDetect(w io.Writer, res *ops.ResumeDetectResult) {
	if res.Driving != nil {
		fmt.Fprintln(w, res.Driving.Pointer)
	}
	rest := notOwn(res.ResumableRuns) // the session's own live run is the pointer's
	if len(rest) == 0 {
		fmt.Fprintln(w, "no interrupted runs")
		return
	}
	t := newTable(w, "RUN", "KIND", "STATUS", "STAGE", "UPDATED", "INTENT")
	for _, c := range rest {
		stage := c.InterruptedStage
		if stage != "" {
			stage += " (" + c.StageStatus + ")"
		}
		t.row(c.RunID, c.Kind, c.Status, dash(stage), age(c.LastUpdate, res.Now), dash(ledgerText(c.Intent, briefMax)))
	}
	t.flush()
}

// notOwn is the candidates but the session's own live run.
func notOwn(cands []ops.Candidate) []ops.Candidate {
	var rest []ops.Candidate
	for _, c := range cands {
		if !c.Own {
			rest = append(rest, c)
		}
	}
	return rest
}

// brief prints at most a few lines and never fails: a session start must not break
// because of git-atlas.
func (c *ResumeCmd) brief(env *Env) {
	o, err := env.Ops()
	if err != nil {
		return
	}
	const most = 3 // runs a person or an agent reads at session start; --json has all
	req := ops.ResumeDetectRequest{Session: c.session(env)}
	if !env.JSON {
		req.Most = most + 1 // one more: whether there are more is a line of its own
	}
	res, err := o.ResumeBrief(env.Ctx, req)
	if err != nil || len(res.ResumableRuns) == 0 {
		return
	}
	if env.JSON {
		_ = printJSON(env.Stdout, res)
		return
	}
	if res.Driving != nil {
		fmt.Fprintln(env.Stdout, res.Driving.Pointer)
	}
	cands := notOwn(res.ResumableRuns)
	for i, c := range cands {
		if i == most {
			fmt.Fprintf(env.Stdout, "git-atlas: %d more interrupted run(s): `%s`\n", len(cands)+res.Omitted-most, env.spelling().Step(fault.Do("resume", "detect", true)))
			break
		}
		// One line per run, whatever the ledger holds: every value is ledger text, and
		// the intent is there only for a run started or trusted here (ops.ResumeBrief).
		id := ledgerText(c.RunID, cellMax)
		where := ""
		if c.InterruptedStage != "" {
			where = fmt.Sprintf(" at stage %s (%s)", ledgerText(c.InterruptedStage, cellMax), ledgerText(c.StageStatus, cellMax))
		}
		what := ""
		if c.Intent != "" {
			what = fmt.Sprintf(" [%s]", ledgerText(c.Intent, briefMax))
		}
		kind := ""
		if c.Kind != "" {
			kind = ledgerText(c.Kind, cellMax) + " "
		}
		if c.Handoff {
			// Another engine's run (or dispatch-only): name its owner, never
			// `git atlas resume` (docs/contract.md §6).
			owner := "it has no pipeline to resume (dispatch-only): re-assign its tasks"
			if c.ManagedBy != "" {
				owner = "it is managed by " + ledgerText(c.ManagedBy, cellMax) + ": resume it there"
			}
			fmt.Fprintf(env.Stdout, "git-atlas: %srun %s%s was interrupted%s, %s; %s\n",
				kind, id, what, where, age(c.LastUpdate, res.Now), owner)
			continue
		}
		fmt.Fprintf(env.Stdout, "git-atlas: %srun %s%s was interrupted%s, %s; resume it with `%s`\n",
			kind, id, what, where, age(c.LastUpdate, res.Now), env.spelling().Step(fault.Do("resume", "run", c.RunID)))
	}
}

// ask puts a question on the terminal (stderr) and reads the answer from stdin.
func (e *Env) ask(question string, choices []string) (string, error) {
	if e.stdinReader == nil {
		e.stdinReader = bufio.NewReader(e.Stdin)
	}
	in := e.stdinReader
	for range 3 {
		fmt.Fprintf(e.Stderr, "%s [%s] ", question, strings.Join(choices, "/"))
		line, err := in.ReadString('\n')
		ans := strings.TrimSpace(line)
		for _, c := range choices {
			if ans == c || (len(ans) == 1 && strings.HasPrefix(c, ans)) {
				return c, nil
			}
		}
		if err != nil {
			return "", fault.Usage("no answer on the terminal").WithHint("pass --yes or the choice as a flag")
		}
	}
	return "", fault.Usage("no valid answer").WithHint("answer one of: %s", strings.Join(choices, ", "))
}

// chooseRun asks which of several interrupted runs to resume.
func (e *Env) chooseRun(now time.Time) ops.Chooser {
	return func(cands []ops.Candidate) (int, error) {
		fmt.Fprintln(e.Stderr, "Several runs were interrupted:")
		choices := make([]string, len(cands))
		for i, c := range cands {
			choices[i] = strconv.Itoa(i + 1)
			fmt.Fprintf(e.Stderr, "  %d) %s\n", i+1, ledgerText(strings.Join([]string{c.RunID, c.Kind, c.Status, dash(c.InterruptedStage), age(c.LastUpdate, now)}, "  "), 0))
		}
		ans, err := e.ask("Resume which?", choices)
		if err != nil {
			return -1, err
		}
		n, _ := strconv.Atoi(ans)
		return n - 1, nil
	}
}

func printPlan(w io.Writer, p *ops.Plan, now time.Time, sp fault.Spelling) {
	status := p.Status
	if p.Reason != "" {
		status += " (" + p.Reason + ")"
	}
	fmt.Fprintf(w, "run        %s (%s), %s, epoch %d\n", p.RunID, p.Kind, ledgerText(status, cellMax), p.Epoch)
	if p.Live {
		fmt.Fprintf(w, "live       driver %s is working on it: it will not be reset\n", ledgerText(driverText(p.Driver), cellMax))
	}
	if p.PipelineMode != ops.ModeStandalone {
		fmt.Fprintf(w, "mode       %s\n", ledgerText(modeLine(p.PipelineMode, p.ManagedBy, p.ResumeWith, p.TakenOver), 0))
	}
	if p.OwnSession {
		fmt.Fprintf(w, "yours      your session drives this run: resume goes on with it at once\n")
	}
	fmt.Fprintf(w, "baseline   %s", short(p.Baseline.SHA))
	if !p.Baseline.Present {
		fmt.Fprint(w, " (MISSING)")
	}
	fmt.Fprintln(w)
	if !p.ConfigDrift.Match {
		fmt.Fprintf(w, "config     changed since the run started (the run keeps its frozen stages)\n")
	}
	if s := p.InterruptedStage; s != nil {
		verify := "none"
		if s.HasVerify {
			verify = fmt.Sprintf("%q", s.VerifyCommand)
			if !s.VerifySafe {
				verify += " (not safe: skipped)"
			}
			if !s.VerifyTrusted {
				verify += " (not trusted here: not run; `" + sp.Step(fault.Do("trust", "run", p.RunID)) + "`)"
			}
		}
		fmt.Fprintf(w, "stage      %s (%s), attempt %d, %d left, verify: %s\n", ledgerText(s.Name, cellMax), s.Status, s.Attempts, s.BudgetLeft, ledgerText(verify, cellMax))
		if a := s.Attempt; a != nil {
			line := fmt.Sprintf("attempt    #%d by %s, started %s", a.N, dash(a.Holder), age(a.StartedAt, now))
			if a.HeartbeatAt != "" {
				line += ", heartbeat " + age(a.HeartbeatAt, now)
			}
			if a.ThreadID != "" {
				line += ", thread " + a.ThreadID
			}
			if a.PID != 0 {
				line += fmt.Sprintf(", pid %d on %s", a.PID, dash(a.Host))
			}
			if s.WallLeft != "" {
				line += ", wall budget left " + s.WallLeft
			}
			if s.IdleLeft != "" {
				line += ", idle budget left " + s.IdleLeft
			}
			fmt.Fprintln(w, ledgerText(line, 0))
			if s.WallExceeded != "" {
				fmt.Fprintf(w, "           %s: heartbeats are refused\n", ledgerText(s.WallExceeded, 0))
			}
		}

		switch s.VerifyIn {
		case ops.VerifyInWorktree:
			fmt.Fprintf(w, "verify in  the stage's worktree %s\n", ledgerText(s.Worktree, cellMax))
		case ops.VerifyInCheckoutCopy:
			fmt.Fprintf(w, "verify in  a temporary worktree made from a read-only snapshot of your checkout (removed after; your checkout is not touched)\n")
		case ops.VerifyInNone:
			fmt.Fprintf(w, "verify in  nowhere: the stage's worktree is missing\n")
		}
	}
	if len(p.CompletedStages) > 0 {
		fmt.Fprintf(w, "completed  %s\n", ledgerText(strings.Join(p.CompletedStages, ", "), 0))
	}
	if len(p.RemainingStages) > 0 {
		fmt.Fprintf(w, "remaining  %s\n", ledgerText(strings.Join(p.RemainingStages, ", "), 0))
	}
	for i, cm := range p.Commands {
		label := ""
		if i == 0 {
			label = "commands"
		}
		fmt.Fprintf(w, "%-10s %-9s %s %s\n", label, map[bool]string{true: "trusted", false: "UNTRUSTED"}[cm.Trusted], ledgerText(cm.Where, 0), text.ShowCommand(cm.Command))
	}
	if f := p.Frontier; f != nil {
		fmt.Fprintf(w, "jobs       reset: %s; ready: %s; gas left %d\n", dash(ledgerText(strings.Join(f.ResetJobs, ","), 0)), dash(ledgerText(strings.Join(f.ReadyJobs, ","), 0)), f.GasRemaining)
		if len(f.VerifyOwed) > 0 {
			fmt.Fprintf(w, "owed       job verify of %s (resume runs it in the job's worktree)\n", ledgerText(strings.Join(f.VerifyOwed, ", "), 0))
		}
	}
	printVerdict(w, p.Verdict)
	if c := p.Checkout; c != nil {
		state := "clean"
		if c.Dirty {
			state = "DIRTY"
		}
		fmt.Fprintf(w, "checkout   the stage ran in your checkout %s (%s, HEAD %s, attempt baseline %s); it is never touched\n", ledgerText(c.Path, 0), state, short(c.Head), short(c.Baseline))
		if c.Replay != "" {
			fmt.Fprintf(w, "           replay its work from the attempt's baseline: $ %s\n", ledgerText(c.Replay, 0))
		}
	}
	if len(p.Worktrees) > 0 {
		t := newTable(w, "WORKTREE", "ACTION", "WHY", "PATH")
		for _, wt := range p.Worktrees {
			why := wt.Reason
			if wt.Setup != nil && wt.Setup.Outcome != ops.SetupOK {
				why = strings.TrimPrefix(why+"; not ready: setup "+wt.Setup.Outcome, "; ")
			}
			t.row(wt.Node, wt.Action, dash(why), wt.Path)
		}
		t.flush()
		for _, wt := range p.Worktrees {
			printIgnoredToDelete(w, wt.Node, wt.IgnoredToDelete)
		}
	}
	printNext(w, p.NextAction)
}

func printNext(w io.Writer, n ops.NextAction) {
	line := "next       " + n.Action
	if n.Stage != "" {
		line += " stage " + n.Stage
	}
	if len(n.Jobs) > 0 {
		line += " jobs " + strings.Join(n.Jobs, ",")
	}
	if n.Reason != "" {
		line += " (" + n.Reason + ")"
	}
	fmt.Fprintln(w, ledgerText(line, 0))
	if n.Command != "" {
		fmt.Fprintf(w, "           $ %s\n", ledgerText(n.Command, 0))
	}
}

func printResult(w io.Writer, r *ops.Result, sp fault.Spelling) {
	if !r.Resumed && r.NextAction.Action == ops.NextHandoff {
		fmt.Fprintf(w, "run %s is not git-atlas's to resume: nothing was changed\n", ledgerText(r.RunID, cellMax))
		printNext(w, r.NextAction)
		return
	}
	if r.Live && !r.Resumed {
		fmt.Fprintf(w, "run %s is live (driver %s): nothing was reset\n", ledgerText(r.RunID, cellMax), ledgerText(driverText(r.Driver), cellMax))
		printNext(w, r.NextAction)
		return
	}
	fmt.Fprintf(w, "resumed %s at epoch %d\n", r.RunID, r.Epoch)
	if len(r.ResetJobs) > 0 {
		fmt.Fprintf(w, "reset jobs        %s\n", strings.Join(r.ResetJobs, ", "))
	}
	for _, s := range r.Snapshots {
		fmt.Fprintf(w, "snapshot          %s (%s)\n", s, sp.Step(fault.Do("recovery show", "snapshot", s)))
	}
	if len(r.RecreatedWorktrees) > 0 {
		fmt.Fprintf(w, "recreated clean   %s\n", strings.Join(r.RecreatedWorktrees, ", "))
	}
	for _, e := range r.IgnoredDeleted {
		name := displayPath(e.String())
		if e.Dir {
			name += "/"
		}
		fmt.Fprintf(w, "deleted ignored   %s: %s, %d file(s), %d bytes (not in the snapshot)\n", e.Node, name, e.Files, e.Size)
	}
	for _, p := range r.SetAside {
		fmt.Fprintf(w, "set aside         %s (a checkout git could not read, kept whole: look inside, then delete it)\n", p)
	}
	if v := r.Verify; v != nil {
		limit, _ := time.ParseDuration(r.VerifyTimeout)
		result := ops.VerifyOutcome(v, limit)
		if !v.Passed {
			result = "FAILED: " + result
		}
		fmt.Fprintf(w, "verify            %s: %s\n", ledgerText(v.Command, cellMax), result)
	} else if r.VerifySkipped != "" {
		fmt.Fprintf(w, "verify skipped    %s\n", ledgerText(r.VerifySkipped, cellMax))
	}
	if r.Replay != "" {
		fmt.Fprintf(w, "replay branch     %s\n", r.Replay)
	}
	for _, v := range r.JobVerifies {
		fmt.Fprintf(w, "job verify        %s: %s -> %s\n", ledgerText(v.Job, cellMax), ops.VerifyOutcome(v.Verify, 0), v.To)
	}
	if len(r.UntrustedJobVerifies) > 0 {
		fmt.Fprintf(w, "job verify owed   %s: not trusted here, not run (read them, then `%s`)\n", ledgerText(strings.Join(r.UntrustedJobVerifies, ", "), cellMax), sp.Step(fault.Do("trust", "run", r.RunID)))
	}
	fmt.Fprintf(w, "status            %s\n", r.Status)
	printNext(w, r.NextAction)
}
