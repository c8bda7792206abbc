package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ops"
)

// DriverFlags name who makes a run write (SPEC §5.1): --holder takes a free driver
// lease or renews its own (same holder, or same --session), another live driver's
// run is refused (exit 3) unless --take-over. The rule itself is gitstate.ClaimDriver,
// applied by the store on every compare-and-swap try; these are only its flags.
type DriverFlags struct {
	Holder   string        `help:"Who drives the run: takes a free driver lease, or renews your own; another live driver's run is refused (exit 3)." placeholder:"NAME"`
	Session  string        `env:"ATLAS_SESSION" help:"Your agent session (default $ATLAS_SESSION): a session takes its own run back at once, whatever the holder name." placeholder:"ID"`
	TakeOver bool          `name:"take-over" help:"Replace the live driver you found (recorded as driver_taken_over); loses (exit 3) if another writer replaced it first."`
	TTL      time.Duration `name:"ttl" default:"10m" positive:"" help:"How long the driver lease lasts."`
}

// ops is the driver the flags name, for an operation's request.
func (d DriverFlags) ops() ops.Driver {
	return ops.Driver{Holder: d.Holder, Session: d.Session, TakeOver: d.TakeOver, TTL: d.TTL}
}

// store is the ledger, writing as the flags' driver.
func (d DriverFlags) store(env *Env) (*gitstate.Store, error) {
	if err := d.ops().Check(); err != nil {
		return nil, err
	}
	s, err := env.Store()
	if err != nil {
		return nil, err
	}
	s.Writer = d.ops().Writer()
	return s, nil
}

// WorkerFlags name a worker holding job leases: its writes never touch the run's
// driver lease (SPEC §5.1).
type WorkerFlags struct {
	Holder string        `help:"The worker holding the job's lease (recorded; never the run's driver)." placeholder:"NAME"`
	TTL    time.Duration `name:"ttl" default:"10m" positive:"" help:"How long the job lease lasts."`
}

// ops is the worker the flags name, for an operation's request.
func (f WorkerFlags) ops() ops.Worker { return ops.Worker{Holder: f.Holder, TTL: f.TTL} }

// StartCmd is `git atlas start`.
type StartCmd struct {
	ID          string   `name:"id" help:"Run id (default: time-sortable and unique)." placeholder:"ID"`
	Intent      string   `help:"What the run is for; frozen." placeholder:"TEXT"`
	Criterion   []string `sep:"none" help:"A success criterion (repeatable); frozen." placeholder:"TEXT"`
	Verify      string   `help:"Verify command of every stage that names none." placeholder:"CMD"`
	VerifySafe  bool     `help:"The verify command is safe to run unattended (resume runs it)."`
	Scope       []string `sep:"none" help:"A path glob the run may touch (repeatable; never split on commas: a comma belongs inside braces, src/{a,b}/**)." placeholder:"GLOB"`
	Baseline    string   `default:"HEAD" help:"The commit the run starts from." placeholder:"REV"`
	Stages      string   `help:"Stage names, comma-separated (short form of --pipeline)." placeholder:"a,b,c"`
	Pipeline    string   `help:"Pipeline file, JSON or YAML, with per-stage settings." placeholder:"FILE"`
	Graph       bool     `help:"A graph run: a DAG of jobs (see git atlas job)."`
	Gas         int      `positive:"" help:"Graph runs: total claims allowed (default jobs x max-attempts + jobs, fixed at the first claim)."`
	MaxAttempts int      `name:"max-attempts" positive:"" help:"Graph runs: attempts per job before it fails (default 2)."`
	MaxJobs     int      `name:"max-jobs" positive:"" help:"Graph runs: most jobs the run may hold, added or by expansion (default 200)."`
	MaxDepth    int      `name:"max-depth" positive:"" help:"Graph runs: longest chain of job-done --children expansions (default 8)."`
	Config      []string `sep:"none" help:"A config file whose hash is frozen, for drift checks (repeatable)." placeholder:"FILE"`
	DriverFlags
}

// NewRunID is time-sortable and collision-proof: UTC seconds and 48 random bits.
func NewRunID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Run starts the run.
func (c *StartCmd) Run(env *Env) error {
	now := gitstate.Now()
	id := c.ID
	if id == "" {
		id = NewRunID(now)
	}
	if err := gitstate.ValidName("run", id); err != nil {
		return err
	}
	if c.Session != "" {
		if err := gitstate.ValidName("session", c.Session); err != nil {
			return err
		}
	}
	if c.Gas < 0 || c.MaxAttempts < 0 || c.MaxJobs < 0 || c.MaxDepth < 0 {
		return fault.Usage("--gas, --max-attempts, --max-jobs and --max-depth must not be negative")
	}
	if (c.Gas > 0 || c.MaxAttempts > 0 || c.MaxJobs > 0 || c.MaxDepth > 0) && !c.Graph {
		return fault.Usage("--gas, --max-attempts, --max-jobs and --max-depth are for graph runs").WithHint("add --graph")
	}
	var defs []gitstate.StageDef
	switch {
	case c.Pipeline != "" && c.Stages != "":
		return fault.Usage("give --stages or --pipeline, not both")
	case c.Pipeline != "":
		data, err := os.ReadFile(env.path(c.Pipeline))
		if err != nil {
			return fault.Usage("read pipeline: %v", err)
		}
		if defs, err = gitstate.ParsePipeline(c.Pipeline, data); err != nil {
			return err
		}
	case c.Stages != "":
		defs = gitstate.StagesFromList(c.Stages)
	case !c.Graph:
		defs = gitstate.StagesFromList("main")
	}
	for i := range defs {
		if defs[i].Verify == "" && c.Verify != "" {
			defs[i].Verify, defs[i].VerifySafe = c.Verify, c.VerifySafe
		}
	}
	if err := gitstate.CheckStages(defs); err != nil {
		return err
	}
	scope, err := gitstate.CanonicalScope(c.Scope)
	if err != nil {
		return err
	}
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	sha, err := baseline.Resolve(env.Ctx, repo, c.Baseline)
	if err != nil {
		return err
	}
	files := make([]string, len(c.Config))
	for i, f := range c.Config {
		files[i] = env.path(f)
	}
	configs, hash, err := configFiles(repo.TopLevel, files)
	if err != nil {
		return err
	}
	kind := gitstate.KindSingle
	if c.Graph {
		kind = gitstate.KindGraph
	}
	if defs == nil {
		defs = []gitstate.StageDef{}
	}
	h := gitstate.Header{
		RunID: id, Kind: kind, CreatedAt: gitstate.Stamp(now), Intent: c.Intent, Criteria: c.Criterion,
		Verify: c.Verify, VerifySafe: c.VerifySafe, Scope: scope, Baseline: sha, Stages: defs,
		Session: c.Session, ConfigFiles: configs, ConfigHash: hash, Gas: c.Gas, MaxAttempts: c.MaxAttempts,
		MaxJobs: c.MaxJobs, MaxDepth: c.MaxDepth,
	}
	if c.Graph && h.MaxAttempts == 0 {
		h.MaxAttempts = 2
	}
	st := gitstate.State{RunID: id, Status: gitstate.RunRunning, Stages: []gitstate.StageState{}}
	for _, d := range defs {
		st.Stages = append(st.Stages, gitstate.StageState{Name: d.Name, Status: gitstate.StagePending})
	}
	r := &gitstate.Run{Header: h, State: st}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	if _, err := gitstate.ClaimDriver(r, store.Writer, now); err != nil {
		return err
	}
	data, _ := json.Marshal(map[string]any{"baseline": sha})
	run, err := store.Create(env.Ctx, r.Header, r.State, gitstate.Event{Type: gitstate.EventRunStarted, Holder: c.Holder, Data: data}, baseline.Pin(id, "baseline", sha))
	if err != nil {
		return err
	}
	// This repository wrote the run's commands: they may run here (SPEC §10). A crash
	// before this line leaves them untrusted, which is safe: `git atlas trust` mends it.
	if err := trustOwn(env, run); err != nil {
		return err
	}
	return env.out(runJSON(run, now), func(w io.Writer) { fmt.Fprintln(w, id) })
}

// configFiles records config paths relative to the top level (so a clone elsewhere
// hashes the same files) and hashes them; each must exist when the run starts.
func configFiles(top string, files []string) ([]string, string, error) {
	if len(files) == 0 {
		return nil, "", nil
	}
	var rel []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, "", fault.Usage("config file %s: %v", f, err)
		}
		if top != "" {
			if r, err := filepath.Rel(top, abs); err == nil && !strings.HasPrefix(r, "..") {
				abs = filepath.ToSlash(r)
			}
		}
		rel = append(rel, abs)
	}
	hash, err := baseline.ConfigHash(top, rel)
	return rel, hash, err
}

// runView is the JSON of a run in start, list and show (SPEC §4.7).
type runView struct {
	RunID        string `json:"run_id"`
	Kind         string `json:"kind"`
	Status       string `json:"status"`
	Reason       string `json:"reason,omitempty"`
	CurrentStage string `json:"current_stage,omitempty"`
	Baseline     string `json:"baseline"`
	Session      string `json:"session,omitempty"`
	Intent       string `json:"intent,omitempty"`
	Epoch        int    `json:"epoch"`
	Events       int    `json:"events"`
	Live         bool   `json:"live"`
	Holder       string `json:"holder,omitempty"`
	// Driver is the live driver lease: holder, session, expires_at.
	Driver    *gitstate.Lease `json:"driver,omitempty"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
	Tip       string          `json:"tip"`
}

func runJSON(r *gitstate.Run, now time.Time) runView {
	v := runView{
		RunID: r.Header.RunID, Kind: r.Header.Kind, Status: r.State.Status, Reason: r.State.Reason,
		Baseline: r.Header.Baseline, Session: r.Header.Session, Intent: r.Header.Intent,
		Epoch: r.State.Epoch, Events: r.State.Seq, Live: r.Live(now), CreatedAt: r.Header.CreatedAt,
		UpdatedAt: r.State.UpdatedAt, Tip: r.Tip,
	}
	if s := r.CurrentStage(); s != nil {
		v.CurrentStage = s.Name
	}
	if v.Live {
		v.Holder = r.State.Driver.Holder
		d := *r.State.Driver
		d.Extra = nil
		v.Driver = &d
	}
	return v
}

// ListCmd is `git atlas list`.
type ListCmd struct {
	All bool `help:"Include finished runs (completed and failed)."`
}

type listItem struct {
	runView
	Unreadable bool   `json:"unreadable,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Run lists runs; an unreadable run is listed as such and never hides the others.
func (c *ListCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	entries, err := store.ListSummaries(env.Ctx) // a row needs a summary, no more
	if err != nil {
		return err
	}
	now := gitstate.Now()
	items := []listItem{}
	for _, e := range entries {
		if e.Err != nil {
			items = append(items, listItem{runView: runView{RunID: e.ID, Status: "unreadable"}, Unreadable: true, Error: e.Err.Error()})
			continue
		}
		if !c.All && gitstate.RunTerminal(e.Run.State.Status) {
			continue
		}
		items = append(items, listItem{runView: runJSON(e.Run, now)})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].CreatedAt > items[j].CreatedAt })
	for _, it := range items {
		if it.Unreadable {
			env.warn("%s", it.Error)
		}
	}
	return env.out(map[string]any{"runs": items}, func(w io.Writer) {
		if len(items) == 0 {
			fmt.Fprintln(w, "no runs")
			return
		}
		t := newTable(w, "RUN", "KIND", "STATUS", "STAGE", "LIVE", "UPDATED", "BASELINE")
		for _, it := range items {
			live := "-"
			if it.Live {
				live = it.Holder
			}
			t.row(it.RunID, dash(it.Kind), it.Status, dash(it.CurrentStage), live, dash(ageOrEmpty(it.UpdatedAt, now)), dash(short(it.Baseline)))
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
	RunID string `arg:"" name:"run" help:"The run."`
	At    *int   `help:"The state right after event SEQ (see git atlas log)." placeholder:"SEQ"`
}

// Run shows header and state.
func (c *ShowCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	r, err := loadAt(env, store, c.RunID, c.At)
	if err != nil {
		return err
	}
	now := gitstate.Now()
	hdr, err := gitstate.MarshalHeader(&r.Header)
	if err != nil {
		return err
	}
	st, err := gitstate.MarshalState(&r.State)
	if err != nil {
		return err
	}
	verdict := gitstate.RunVerdict(&r.Header, &r.State)
	view := struct {
		runView
		Stages  []stageView       `json:"stages"`
		Header  json.RawMessage   `json:"header"`
		State   json.RawMessage   `json:"state"`
		Verdict *gitstate.Verdict `json:"verdict,omitempty"`
	}{runJSON(r, now), stageViews(r, now), hdr, st, verdict}
	return env.out(view, func(w io.Writer) {
		if c.At != nil {
			fmt.Fprintf(w, "as of     event %d (%s)\n", r.State.Seq, r.Tip)
		}
		printRun(w, r, now)
		printVerdict(w, verdict)
	})
}

// stageView is a stage as show reports it: its status beside its definition's gate
// ("none" when it has none), verify and budget.
type stageView struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Gate       string `json:"gate"`
	Attempts   int    `json:"attempts"`
	BudgetLeft int    `json:"budget_left"`
	Verify     string `json:"verify,omitempty"`
	VerifySafe bool   `json:"verify_safe"`
	// The open attempt's liveness (SPEC §5.2): its last heartbeat, and what is left
	// of its stage's wall and idle budgets (Go durations; "0s" when spent).
	WallBudget  string `json:"wall_budget,omitempty"`
	IdleBudget  string `json:"idle_budget,omitempty"`
	HeartbeatAt string `json:"heartbeat_at,omitempty"`
	WallLeft    string `json:"wall_left,omitempty"`
	IdleLeft    string `json:"idle_left,omitempty"`
	ThreadID    string `json:"thread_id,omitempty"`
	Lease       string `json:"lease,omitempty"`
}

func stageViews(r *gitstate.Run, now time.Time) []stageView {
	out := []stageView{}
	for i := range r.State.Stages {
		def, st, ok := r.Stage(r.State.Stages[i].Name)
		if !ok {
			continue
		}
		v := stageView{Name: st.Name, Status: st.Status, Gate: gateName(def.Gate), Attempts: len(st.Attempts),
			BudgetLeft: gitstate.BudgetLeft(def, st), Verify: def.Verify, VerifySafe: def.VerifySafe,
			WallBudget: def.WallBudget, IdleBudget: def.IdleBudget}
		if a := gitstate.OpenAttempt(st); a != nil {
			v.HeartbeatAt, v.ThreadID, v.Lease = a.HeartbeatAt, a.ThreadID, a.Lease
			v.WallLeft, v.IdleLeft = gitstate.TimeLeft(def, a, now)
		}
		out = append(out, v)
	}
	return out
}

func gateName(g string) string {
	if g == "" {
		return "none"
	}
	return g
}

func printRun(w io.Writer, r *gitstate.Run, now time.Time) {
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
	fmt.Fprintf(w, "baseline  %s\n", ledgerText(h.Baseline, cellMax))
	fmt.Fprintf(w, "epoch     %d, %d events, updated %s\n", s.Epoch, s.Seq, age(s.UpdatedAt, now))
	if h.Intent != "" {
		fmt.Fprintf(w, "intent    %s\n", ledgerText(h.Intent, cellMax))
	}
	for _, c := range h.Criteria {
		fmt.Fprintf(w, "criterion %s\n", ledgerText(c, cellMax))
	}
	if h.Session != "" {
		fmt.Fprintf(w, "session   %s\n", ledgerText(h.Session, cellMax))
	}
	if len(s.Stages) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "STAGE", "STATUS", "GATE", "ATTEMPTS", "BUDGET", "VERIFY")
		views := stageViews(r, now)
		for _, v := range views {
			verify := v.Verify
			if verify != "" && v.VerifySafe {
				verify += " (safe)"
			}
			t.row(v.Name, v.Status, v.Gate, fmt.Sprint(v.Attempts), fmt.Sprint(v.BudgetLeft), dash(verify))
		}
		t.flush()
		for _, v := range views {
			def, st, _ := r.Stage(v.Name)
			a := gitstate.OpenAttempt(st)
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
	RunID string `arg:"" name:"run" help:"The run."`
	Type  string `help:"Only events of this type." placeholder:"TYPE"`
	Stage string `help:"Only events about this stage." placeholder:"STAGE"`
	Last  int    `positive:"" help:"Only the last N events (N >= 1)." placeholder:"N"`
	// Heartbeats are many and say little: left out unless asked.
	Heartbeats bool `help:"Include heartbeat events (left out by default; --type heartbeat shows only them)."`
	// Diverged reads a chain kept by pull or a --remote write (refs/atlas/diverged/<run>/<n>).
	Diverged int `positive:"" help:"Read the run's N-th kept diverged chain (refs/atlas/diverged/RUN/N, kept when the remote's chain won) instead of its ledger." placeholder:"N"`
}

// Run prints the events.
func (c *LogCmd) Run(env *Env) error {
	if c.Last < 0 {
		return fault.Usage("--last must not be negative")
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	if c.Stage != "" { // a filter naming no stage of the run is a mistake, as in `event`
		r, err := store.Load(env.Ctx, c.RunID)
		if err != nil {
			return err
		}
		if _, _, ok := r.Stage(c.Stage); !ok {
			return fault.NotFound("run %s has no stage %q", c.RunID, c.Stage)
		}
	}
	var events []gitstate.Event
	if c.Diverged > 0 {
		events, err = store.LogDiverged(env.Ctx, c.RunID, c.Diverged)
	} else {
		events, err = store.Log(env.Ctx, c.RunID)
	}
	if err != nil {
		return err
	}
	kept := []gitstate.Event{}
	for _, e := range events {
		if e.Type == gitstate.EventHeartbeat && !c.Heartbeats && c.Type != string(gitstate.EventHeartbeat) {
			continue
		}
		if (c.Type == "" || e.Type == gitstate.EventType(c.Type)) && (c.Stage == "" || e.Stage == c.Stage) {
			kept = append(kept, e)
		}
	}
	if c.Last > 0 && len(kept) > c.Last {
		kept = kept[len(kept)-c.Last:]
	}
	docs := make([]json.RawMessage, 0, len(kept))
	for i := range kept {
		d, err := gitstate.MarshalEvent(&kept[i])
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	return env.out(map[string]any{"run_id": c.RunID, "events": docs}, func(w io.Writer) {
		t := newTable(w, "SEQ", "TIME", "EPOCH", "TYPE", "STAGE/JOB", "DATA")
		for _, e := range kept {
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
	RunID    string `arg:"" name:"run" help:"The run."`
	Stage    string `arg:"" help:"The stage."`
	Status   string `arg:"" help:"The new status: pending, dispatched, verifying, passed, gated, completed, rejected, failed, rework, skipped."`
	Reason   string `help:"Why." placeholder:"TEXT"`
	Lease    string `help:"The stage token the dispatch printed: a report with a token that is not the stage's current one is refused (exit 3) and changes nothing." placeholder:"TOKEN"`
	ThreadID string `name:"thread-id" help:"With dispatched: the agent runtime's conversation id of the attempt (e.g. for codex exec resume), so a resume can continue it." placeholder:"ID"`
	PID      int    `name:"pid" help:"With dispatched: the attempt's agent process id (recorded with this host's name): while it lives here, resume never starts a second agent." placeholder:"PID"`
	DriverFlags
}

// Help is the command's long help.
func (c *TransitionCmd) Help() string {
	return `Checked against the stage machine (SPEC §5.2); a refused move names the valid targets
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
	if err := gitstate.ValidName("stage", c.Stage); err != nil {
		return err
	}
	if (c.ThreadID != "" || c.PID != 0) && c.Status != gitstate.StageDispatched {
		return fault.Usage("--thread-id and --pid describe a new attempt: they go with dispatched")
	}
	if c.PID < 0 {
		return fault.Usage("--pid must be a process id")
	}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	store.Writer.Stage, store.Writer.Token, store.Writer.To = c.Stage, c.Lease, c.Status
	// The HEAD of the checkout this runs in: a dispatched stage without a worktree
	// runs there, and its attempt's baseline is that HEAD (read once, not per try).
	checkoutHead := ""
	if c.Status == gitstate.StageDispatched {
		checkoutHead, _ = store.Repo.ResolveCommit(env.Ctx, "HEAD")
	}
	host := ""
	if c.PID != 0 {
		host, _ = os.Hostname()
	}
	var from string
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		now := gitstate.Now()
		_, st, ok := r.Stage(c.Stage)
		if !ok {
			return nil, fault.NotFound("run %s has no stage %q", c.RunID, c.Stage)
		}
		if err := gitstate.CheckStageToken(r, c.Stage, c.Lease); err != nil {
			return nil, err
		}
		from = st.Status
		base, inCheckout := r.Header.Baseline, false
		var refs []git.RefUpdate
		if c.Status == gitstate.StageDispatched {
			if wt := r.State.Worktree(c.Stage); wt != nil {
				base = wt.Head
				if tip, err := store.Repo.ReadRef(env.Ctx, "refs/heads/"+wt.Branch); err == nil && tip != "" {
					base = tip
				}
			} else if checkoutHead != "" {
				base, inCheckout = checkoutHead, true
			}
		}
		if err := gitstate.ApplyStageTransition(r, c.Stage, c.Status, c.Reason, base, gitstate.Stamp(now)); err != nil {
			return nil, err
		}
		data := map[string]any{"from": from, "to": c.Status, "reason": c.Reason}
		if c.Status == gitstate.StageDispatched {
			a := &st.Attempts[len(st.Attempts)-1]
			a.Holder, a.Session, a.ThreadID, a.PID, a.Host, a.InCheckout = c.Holder, c.Session, c.ThreadID, c.PID, host, inCheckout
			pin := gitstate.PinRef(c.RunID, gitstate.BaselinePinName(c.Stage, a.N))
			old, err := store.Repo.ReadRef(env.Ctx, pin)
			if err != nil {
				return nil, err
			}
			refs = append(refs, git.RefUpdate{Name: pin, New: a.Baseline, Old: orZero(old)})
			data["attempt"], data["lease"], data["baseline"] = a.N, a.Lease, a.Baseline
			if c.ThreadID != "" {
				data["thread_id"] = c.ThreadID
			}
			if c.PID != 0 {
				data["pid"], data["host"] = c.PID, host
			}
		}
		if r.State.Status == gitstate.RunCompleted {
			data["run_status"] = r.State.Status
			data["run_reason"] = r.State.Reason
		}
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventStageTransition, Stage: c.Stage, Holder: c.Holder, Data: eventData(data)}, Refs: refs}, nil
	})
	if err != nil {
		return err
	}
	_, st, _ := r.Stage(c.Stage)
	view := map[string]any{"name": st.Name, "status": st.Status, "from": from, "attempts": len(st.Attempts)}
	out := map[string]any{"run_id": c.RunID, "stage": view, "run_status": r.State.Status}
	var lease string
	if c.Status == gitstate.StageDispatched && len(st.Attempts) > 0 {
		a := st.Attempts[len(st.Attempts)-1]
		lease = a.Lease
		view["attempt"], view["lease"], view["baseline"] = a.N, a.Lease, a.Baseline
		out["lease"], out["attempt"] = a.Lease, a.N
	}
	return env.out(out, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s -> %s\n", c.Stage, from, st.Status)
		if lease != "" {
			fmt.Fprintf(w, "lease %s\n", lease)
		}
		if r.State.Status == gitstate.RunCompleted && r.State.Reason == gitstate.ReasonAllStagesCompleted {
			fmt.Fprintf(w, "run %s completed: every stage is completed or skipped\n", c.RunID)
		}
	})
}

// orZero is a ref's old value for a transaction: its id, or "must not exist".
func orZero(id string) string {
	if id == "" {
		return git.ZeroID
	}
	return id
}

// HeartbeatCmd is `git atlas heartbeat RUN --holder H [--stage S]`.
type HeartbeatCmd struct {
	RunID string `arg:"" name:"run" help:"The run."`
	Stage string `help:"Also the heartbeat of this stage's open attempt (its idle budget starts again)." placeholder:"STAGE"`
	Lease string `help:"The attempt's stage token: a stale one is refused (exit 3) and changes nothing." placeholder:"TOKEN"`
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
	if c.Holder == "" {
		return fault.Usage("heartbeat needs --holder: the driver whose lease it renews").WithHint("git atlas heartbeat %s --holder NAME", c.RunID)
	}
	if c.Stage != "" {
		if err := gitstate.ValidName("stage", c.Stage); err != nil {
			return err
		}
	} else if c.Lease != "" {
		return fault.Usage("--lease is a stage token: it goes with --stage")
	}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	store.Writer.Stage, store.Writer.Token = c.Stage, c.Lease
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if gitstate.RunTerminal(r.State.Status) {
			return nil, fault.Refused("run %s is %s: there is nothing to drive", c.RunID, r.State.Status)
		}
		data := map[string]any{}
		if d := r.State.Driver; d != nil {
			data["expires_at"] = d.ExpiresAt
		}
		if c.Stage != "" {
			if err := gitstate.Heartbeat(r, c.Stage, c.Lease, gitstate.Now()); err != nil {
				return nil, err
			}
			_, st, _ := r.Stage(c.Stage)
			data["attempt"] = len(st.Attempts)
		}
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventHeartbeat, Stage: c.Stage, Holder: c.Holder, Data: eventData(data)}}, nil
	})
	if err != nil {
		return err
	}
	d := r.State.Driver
	if d == nil {
		d = &gitstate.Lease{}
	}
	view := map[string]any{"run_id": c.RunID, "driver": d, "stage": nil, "heartbeat_at": nil}
	if c.Stage != "" {
		_, st, _ := r.Stage(c.Stage)
		a := st.Attempts[len(st.Attempts)-1]
		view["stage"], view["attempt"], view["heartbeat_at"] = c.Stage, a.N, a.HeartbeatAt
	}
	return env.out(view, func(w io.Writer) {
		fmt.Fprintf(w, "%s: driver %s until %s\n", c.RunID, ledgerText(d.Holder, cellMax), d.ExpiresAt)
	})
}

// EventCmd is `git atlas event RUN TYPE`.
type EventCmd struct {
	RunID string `arg:"" name:"run" help:"The run."`
	Type  string `arg:"" help:"The event type (e.g. note, progress; never one git-atlas writes itself)."`
	Stage string `help:"The stage it is about." placeholder:"STAGE"`
	Data  string `help:"A JSON object of details." placeholder:"JSON"`
	DriverFlags
}

// Help is the command's long help.
func (c *EventCmd) Help() string {
	return "TYPE is any valid name but the types git-atlas writes itself (appending one of\n" +
		"those by hand would make the ledger say something its state does not): " +
		gitstate.JoinEvents(gitstate.ReservedEvents()) + "."
}

// Run appends the event.
func (c *EventCmd) Run(env *Env) error {
	if err := gitstate.ValidName("event type", c.Type); err != nil {
		return err
	}
	if err := reservedEvent(gitstate.EventType(c.Type)); err != nil {
		return err
	}
	var data json.RawMessage
	if c.Data != "" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.Data), &obj); err != nil || obj == nil {
			return fault.Usage("--data must be a JSON object: %s", strings.TrimSpace(c.Data))
		}
		data = json.RawMessage(c.Data)
		compact, err := json.Marshal(obj)
		if err == nil {
			data = compact
		}
	}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if c.Stage != "" {
			if _, _, ok := r.Stage(c.Stage); !ok {
				return nil, fault.NotFound("run %s has no stage %q", c.RunID, c.Stage)
			}
		}
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventType(c.Type), Stage: c.Stage, Holder: c.Holder, Data: data}}, nil
	})
	if err != nil {
		return err
	}
	return env.out(map[string]any{"run_id": c.RunID, "seq": r.State.Seq, "type": c.Type, "tip": r.Tip},
		func(w io.Writer) { fmt.Fprintf(w, "%s #%d %s\n", c.RunID, r.State.Seq, c.Type) })
}

// FinishCmd is `git atlas finish RUN --status S`.
type FinishCmd struct {
	RunID  string `arg:"" name:"run" help:"The run."`
	Status string `required:"" enum:"completed,stopped,failed" help:"completed, stopped or failed."`
	Reason string `help:"Why." placeholder:"TEXT"`
	Force  bool   `help:"Reap the run's running jobs first (each takes the timeout transition, recorded as job_reaped)."`
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
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	var reaped []reapedView
	if c.Force && gitstate.RunTerminal(c.Status) {
		_, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
			if err := gitstate.CheckRunTransition(r.State.Status, c.Status); err != nil {
				return nil, err
			}
			reaped = reapViews(gitstate.ReapRunning(&r.Header, &r.State))
			if len(reaped) == 0 {
				return nil, nil
			}
			data := eventData(map[string]any{"jobs": reaped, "reason": "finish --force"})
			return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventJobReaped, Data: data}}, nil
		})
		if err != nil {
			return err
		}
	}
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		from := r.State.Status
		if err := gitstate.Finish(r, c.Status, c.Reason); errors.Is(err, gitstate.ErrAlreadyFinished) {
			return nil, nil // a single run that completed itself: finish agrees, writes nothing
		} else if err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]any{"from": from, "status": c.Status, "reason": c.Reason})
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventRunFinished, Data: data}}, nil
	})
	if err != nil {
		return err
	}
	if reaped == nil {
		reaped = []reapedView{}
	}
	view := struct {
		runView
		Reaped []reapedView `json:"reaped"`
	}{runJSON(r, gitstate.Now()), reaped}
	return env.out(view, func(w io.Writer) {
		for _, o := range reaped {
			fmt.Fprintf(w, "%s: lease %s reaped -> %s\n", o.ID, o.Lease, o.To)
		}
		fmt.Fprintf(w, "%s %s\n", c.RunID, c.Status)
	})
}

// reservedEvent refuses an event type git-atlas writes itself (gitstate's catalogue):
// a bad argument, exit 2, like any other name `event` cannot take. The message names
// what writes it and what `event` accepts instead.
func reservedEvent(t gitstate.EventType) error {
	if !t.Reserved() {
		return nil
	}
	info, _ := t.Info()
	var hint string
	switch {
	case info.By&gitstate.ByCommand != 0:
		hint = fmt.Sprintf("use `git atlas %s`", info.Command)
	case info.By&gitstate.ByResume != 0:
		hint = "`git atlas resume` writes it when it resumes the run"
	case info.By&gitstate.ByHook != 0:
		hint = "the post-checkout hook (`git atlas hooks install`) writes it"
	default:
		hint = fmt.Sprintf("`git atlas %s` writes it", info.Command)
	}
	return fault.Usage("event type %q is written by git-atlas itself; git atlas event accepts %s, or any other name but %s",
		t, gitstate.JoinEvents(gitstate.UserEvents()), gitstate.JoinEvents(gitstate.ReservedEvents())).WithHint("%s", hint)
}

// driverName is a lease's holder and session for people.
func driverName(d *gitstate.Lease) string {
	if d.Session == "" {
		return d.Holder
	}
	return d.Holder + " (session " + d.Session + ")"
}

// driverText is a driver lease for people: "holder (session S) until T".
func driverText(d *gitstate.Lease) string {
	if d == nil {
		return "none"
	}
	s := d.Holder
	if d.Session != "" {
		s += " (session " + d.Session + ")"
	}
	return s + " until " + d.ExpiresAt
}
