package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
)

// DriverFlags name the run's driver lease (SPEC §5.1): a write with --holder makes that
// holder the live driver until now + --ttl.
type DriverFlags struct {
	Holder string        `help:"Who is driving the run; renews the run's driver lease." placeholder:"NAME"`
	TTL    time.Duration `name:"ttl" default:"10m" positive:"" help:"How long the lease lasts."`
}

// apply sets the driver lease on r when a holder is named.
func (d DriverFlags) apply(r *gitstate.Run, now time.Time) error {
	if d.Holder == "" {
		return nil
	}
	if d.TTL <= 0 {
		return fault.Usage("--ttl must be positive")
	}
	r.State.Driver = &gitstate.Lease{Holder: d.Holder, ExpiresAt: gitstate.Stamp(now.Add(d.TTL))}
	return nil
}

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
	Session     string   `env:"ATLAS_SESSION" help:"The agent session that owns the run (resume prefers it)." placeholder:"ID"`
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
	if err := c.DriverFlags.apply(r, now); err != nil {
		return err
	}
	data, _ := json.Marshal(map[string]any{"baseline": sha})
	store, err := env.Store()
	if err != nil {
		return err
	}
	run, err := store.Create(env.Ctx, r.Header, r.State, gitstate.Event{Type: "run_started", Holder: c.Holder, Data: data}, baseline.Pin(id, "baseline", sha))
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
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	Tip          string `json:"tip"`
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
	}{runJSON(r, now), stageViews(r), hdr, st, verdict}
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
}

func stageViews(r *gitstate.Run) []stageView {
	out := []stageView{}
	for i := range r.State.Stages {
		def, st, ok := r.Stage(r.State.Stages[i].Name)
		if !ok {
			continue
		}
		out = append(out, stageView{Name: st.Name, Status: st.Status, Gate: gateName(def.Gate), Attempts: len(st.Attempts),
			BudgetLeft: gitstate.BudgetLeft(def, st), Verify: def.Verify, VerifySafe: def.VerifySafe})
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
		fmt.Fprintf(w, "driver    %s, live until %s\n", ledgerText(s.Driver.Holder, cellMax), ledgerText(s.Driver.ExpiresAt, cellMax))
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
		for _, v := range stageViews(r) {
			verify := v.Verify
			if verify != "" && v.VerifySafe {
				verify += " (safe)"
			}
			t.row(v.Name, v.Status, v.Gate, fmt.Sprint(v.Attempts), fmt.Sprint(v.BudgetLeft), dash(verify))
		}
		t.flush()
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
		if (c.Type == "" || e.Type == c.Type) && (c.Stage == "" || e.Stage == c.Stage) {
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
			t.row(fmt.Sprint(e.Seq), e.Time, fmt.Sprint(e.Epoch), e.Type, dash(subject), dash(string(e.Data)))
		}
		t.flush()
	})
}

// TransitionCmd is `git atlas transition RUN STAGE STATUS`.
type TransitionCmd struct {
	RunID  string `arg:"" name:"run" help:"The run."`
	Stage  string `arg:"" help:"The stage."`
	Status string `arg:"" help:"The new status: pending, dispatched, verifying, passed, gated, completed, rejected, failed, rework, skipped."`
	Reason string `help:"Why." placeholder:"TEXT"`
	DriverFlags
}

// Run applies one checked stage transition.
func (c *TransitionCmd) Run(env *Env) error {
	if err := gitstate.ValidName("stage", c.Stage); err != nil {
		return err
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	var from string
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		now := gitstate.Now()
		_, st, ok := r.Stage(c.Stage)
		if !ok {
			return nil, fault.NotFound("run %s has no stage %q", c.RunID, c.Stage)
		}
		from = st.Status
		base := r.Header.Baseline
		if wt := r.State.Worktree(c.Stage); wt != nil && wt.Head != "" {
			base = wt.Head
		}
		if err := gitstate.ApplyStageTransition(r, c.Stage, c.Status, c.Reason, base, gitstate.Stamp(now)); err != nil {
			return nil, err
		}
		if err := c.DriverFlags.apply(r, now); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]any{"from": from, "to": c.Status, "reason": c.Reason})
		return &gitstate.Change{Event: gitstate.Event{Type: "stage_transition", Stage: c.Stage, Holder: c.Holder, Data: data}}, nil
	})
	if err != nil {
		return err
	}
	_, st, _ := r.Stage(c.Stage)
	return env.out(map[string]any{"run_id": c.RunID, "stage": map[string]any{"name": st.Name, "status": st.Status, "from": from, "attempts": len(st.Attempts)}},
		func(w io.Writer) { fmt.Fprintf(w, "%s: %s -> %s\n", c.Stage, from, st.Status) })
}

// reservedEvents are written by git-atlas's own commands; appending one by hand would
// make the ledger say something its state does not.
var reservedEvents = map[string]string{
	"run_started": "start", "run_finished": "finish", "stage_transition": "transition", "resumed": "resume",
	"job_added": "job add", "job_claimed": "job claim", "job_renewed": "job renew", "job_done": "job done",
	"job_reaped": "reap", "worktree_added": "worktree add", "worktree_removed": "worktree remove",
	"snapshot": "recover", "stage_recovered": "recover", "union_built": "union",
	"job_verified": "job done", "union_verified": "union --verify", "undone": "undo",
}

// EventCmd is `git atlas event RUN TYPE`.
type EventCmd struct {
	RunID string `arg:"" name:"run" help:"The run."`
	Type  string `arg:"" help:"The event type (e.g. stage_resumed, note)."`
	Stage string `help:"The stage it is about." placeholder:"STAGE"`
	Data  string `help:"A JSON object of details." placeholder:"JSON"`
	DriverFlags
}

// Run appends the event.
func (c *EventCmd) Run(env *Env) error {
	if err := gitstate.ValidName("event type", c.Type); err != nil {
		return err
	}
	if cmd, ok := reservedEvents[c.Type]; ok {
		return fault.Usage("event type %q is written by git-atlas itself", c.Type).WithHint("use `git atlas %s`", cmd)
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
	store, err := env.Store()
	if err != nil {
		return err
	}
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if c.Stage != "" {
			if _, _, ok := r.Stage(c.Stage); !ok {
				return nil, fault.NotFound("run %s has no stage %q", c.RunID, c.Stage)
			}
		}
		if err := c.DriverFlags.apply(r, gitstate.Now()); err != nil {
			return nil, err
		}
		return &gitstate.Change{Event: gitstate.Event{Type: c.Type, Stage: c.Stage, Holder: c.Holder, Data: data}}, nil
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
	store, err := env.Store()
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
			return &gitstate.Change{Event: gitstate.Event{Type: "job_reaped", Data: data}}, nil
		})
		if err != nil {
			return err
		}
	}
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		from := r.State.Status
		if err := gitstate.Finish(r, c.Status, c.Reason); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]any{"from": from, "status": c.Status, "reason": c.Reason})
		return &gitstate.Change{Event: gitstate.Event{Type: "run_finished", Data: data}}, nil
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
