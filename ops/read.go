package ops

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/views"
)

// The reads: list, show, log and graph. They change nothing and never fetch more
// than the listing depth they need.

// ListRequest is `list [--all]`.
type ListRequest struct {
	// All includes finished runs (completed and failed).
	All bool `json:"all,omitempty" help:"${list_all}"`
	// Now is the time liveness is judged at (zero: Ops.Clock).
	Now time.Time
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// ListItem is one run of `list`: its summary, or (Unreadable) the error that kept it
// from being read.
type ListItem struct {
	RunView
	Unreadable bool   `json:"unreadable,omitempty"`
	Error      string `json:"error,omitempty"`
	// Jobs counts a graph run's jobs by state, and Verdict is its verdict on its
	// criteria (none without criteria): where a graph run stands, as CurrentStage says
	// it of a single run.
	Jobs    *JobCounts      `json:"jobs,omitempty"`
	Verdict *ledger.Verdict `json:"verdict,omitempty"`
	// Run is the summary read (for a front end's own columns: interrupted or not).
	Run *ledger.Run `json:"-"`
	// header is a graph run's whole header, whose criteria Verdict quotes.
	header *ledger.Header
	// err is what made the run unreadable (Error, as a person reads it).
	err error
}

// unreadableItem is the row of a run that could not be read.
func unreadableItem(id string, err error) ListItem {
	return ListItem{RunView: RunView{RunID: id, Status: "unreadable"}, Unreadable: true, Error: err.Error(), err: err}
}

// JobCounts are a graph run's jobs, in all and by state.
type JobCounts struct {
	Total   int `json:"total"`
	Pending int `json:"pending"`
	Running int `json:"running"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
}

// jobCounts counts r's jobs by state.
func jobCounts(r *ledger.Run) *JobCounts {
	c := &JobCounts{Total: len(r.State.Jobs)}
	for _, j := range r.State.Jobs {
		switch j.State {
		case ledger.JobPending:
			c.Pending++
		case ledger.JobRunning:
			c.Running++
		case ledger.JobDone:
			c.Done++
		case ledger.JobFailed:
			c.Failed++
		}
	}
	return c
}

// ListResult is `list --json`: newest first by creation, unreadable runs among them.
type ListResult struct {
	Runs []ListItem `json:"runs"`
	Now  time.Time  `json:"-"`
}

// List lists the runs from their summaries (the summary cache, else the tips' summary
// lines): a row needs no more. An unreadable run is listed as such and never hides
// the others.
func (o *Ops) List(ctx context.Context, req ListRequest) (*ListResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	entries, err := o.Reader().List(ctx, gitstate.ListOptions{Depth: gitstate.ListSummaries})
	if err != nil {
		return nil, err
	}
	now := o.orNow(req.Now)
	items := []ListItem{}
	for _, e := range entries {
		if e.Err != nil {
			items = append(items, unreadableItem(e.ID, e.Err))
			continue
		}
		if !req.All && ledger.RunTerminal(e.Run.State.Status) {
			continue
		}
		items = append(items, ListItem{RunView: RunViewOf(e.Run, now), Run: e.Run})
	}
	if err := o.graphRows(ctx, items); err != nil {
		return nil, err
	}
	if req.ForAgent {
		at := o.agentText()
		for i := range items {
			at.row(ctx, &items[i])
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].CreatedAt > items[j].CreatedAt })
	return &ListResult{Runs: items, Now: now}, nil
}

// graphRows fills in the jobs and verdict of the graph runs among items, which their
// summaries do not hold: their documents are read at the tips listed, all at once. A
// run that cannot be read so is listed as unreadable.
func (o *Ops) graphRows(ctx context.Context, items []ListItem) error {
	var ids, tips []string
	var which []int
	for i, it := range items {
		if it.Run != nil && it.Kind == ledger.KindGraph {
			which, ids, tips = append(which, i), append(ids, it.RunID), append(tips, it.Tip)
		}
	}
	if len(which) == 0 {
		return nil
	}
	runs, errs, err := o.Reader().LoadTips(ctx, ids, tips)
	if err != nil {
		return err
	}
	for k, i := range which {
		if errs[k] != nil {
			items[i] = unreadableItem(ids[k], errs[k])
			continue
		}
		items[i].Jobs = jobCounts(runs[k])
		items[i].Verdict = ledger.RunVerdict(&runs[k].Header, &runs[k].State)
		items[i].header = &runs[k].Header
	}
	return nil
}

// ShowRequest is `show RUN [--at SEQ]` (and `graph`'s run).
type ShowRequest struct {
	Run string `json:"run" help:"${show_run}"`
	// At, when set, is the event the run is shown right after.
	At *int `json:"at,omitempty" help:"${show_at}"`
	// Now is the time liveness and budgets are judged at (zero: Ops.Clock).
	Now time.Time
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// StageView is a stage as show reports it: its status beside its definition's gate
// ("none" when it has none), verify and budget.
type StageView struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Gate       string `json:"gate"`
	Attempts   int    `json:"attempts"`
	BudgetLeft int    `json:"budget_left"`
	Verify     string `json:"verify,omitempty"`
	VerifySafe bool   `json:"verify_safe"`
	// The open attempt's liveness (docs/contract.md §5.2): its last heartbeat, and what is left
	// of its stage's wall and idle budgets (Go durations; "0s" when spent).
	WallBudget  string `json:"wall_budget,omitempty"`
	IdleBudget  string `json:"idle_budget,omitempty"`
	HeartbeatAt string `json:"heartbeat_at,omitempty"`
	WallLeft    string `json:"wall_left,omitempty"`
	IdleLeft    string `json:"idle_left,omitempty"`
	ThreadID    string `json:"thread_id,omitempty"`
	Lease       string `json:"lease,omitempty"`
	// Verified: once passed, whether git-atlas ran its verify; Unverified why not
	// (no_verify, not_safe, untrusted; docs/contract.md §5.2).
	Verified   *bool  `json:"verified,omitempty"`
	Unverified string `json:"unverified,omitempty"`
}

// ShowResult is `show --json`: the run's summary, its stages, and its header and
// state documents as the ledger holds them.
type ShowResult struct {
	RunView
	Stages  []StageView     `json:"stages"`
	Header  json.RawMessage `json:"header"`
	State   json.RawMessage `json:"state"`
	Verdict *ledger.Verdict `json:"verdict,omitempty"`
	// Run is the run read (for a front end's own rendering); Now the time it was
	// judged at.
	Run *ledger.Run `json:"-"`
	Now time.Time   `json:"-"`
}

// load reads run id as it is, or with at as it was right after event *at.
func (o *Ops) load(ctx context.Context, id string, at *int) (*ledger.Run, error) {
	if at != nil {
		return o.Reader().LoadAt(ctx, id, *at)
	}
	return o.Reader().Load(ctx, id)
}

// Show reads one run, as it is or as it was.
func (o *Ops) Show(ctx context.Context, req ShowRequest) (*ShowResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	r, err := o.load(ctx, req.Run, req.At)
	if err != nil {
		return nil, err
	}
	now := o.orNow(req.Now)
	hdr, err := gitstate.MarshalHeader(&r.Header)
	if err != nil {
		return nil, err
	}
	st, err := gitstate.MarshalState(&r.State)
	if err != nil {
		return nil, err
	}
	res := &ShowResult{RunView: RunViewOf(r, now), Stages: StageViews(r, now), Header: hdr, State: st,
		Verdict: ledger.RunVerdict(&r.Header, &r.State), Run: r, Now: now}
	if req.ForAgent {
		if err := o.agentText().show(ctx, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// StageViews are the run's stages as show reports them, in the state's order.
func StageViews(r *ledger.Run, now time.Time) []StageView {
	out := []StageView{}
	for i := range r.State.Stages {
		def, st, ok := r.Stage(r.State.Stages[i].Name)
		if !ok {
			continue
		}
		v := StageView{Name: st.Name, Status: st.Status, Gate: gateName(def.Gate), Attempts: len(st.Attempts),
			BudgetLeft: ledger.BudgetLeft(def, st), Verify: def.Verify, VerifySafe: def.VerifySafe,
			WallBudget: def.WallBudget, IdleBudget: def.IdleBudget, Verified: st.Verified, Unverified: st.Unverified}
		if a := ledger.OpenAttempt(st); a != nil {
			v.HeartbeatAt, v.ThreadID, v.Lease = a.HeartbeatAt, a.ThreadID, a.Lease
			v.WallLeft, v.IdleLeft = ledger.TimeLeft(def, a, now)
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

// LogRequest is `log RUN`.
type LogRequest struct {
	Run string `json:"run" help:"${log_run}"`
	// Type and Stage keep only the events of that type, about that stage (a stage the
	// run does not have is not found).
	Type  string `json:"type,omitempty" help:"${log_type}"`
	Stage string `json:"stage,omitempty" help:"${log_stage}"`
	// Last keeps only the last N events (0: all; negative is refused).
	Last int `json:"last,omitempty" help:"${log_last}"`
	// Heartbeats includes heartbeat events (left out unless asked, or Type names them).
	Heartbeats bool
	// Diverged reads the run's N-th kept diverged chain instead of its ledger.
	Diverged int
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// LogResult is `log --json`: the events, oldest first, each as the ledger holds it.
// (Members in this order: the JSON contract had them sorted.)
type LogResult struct {
	Events []json.RawMessage `json:"events"`
	RunID  string            `json:"run_id"`
	// Kept are the same events, decoded (for a front end's table).
	Kept []ledger.Event `json:"-"`
}

// Log reads a run's events.
func (o *Ops) Log(ctx context.Context, req LogRequest) (*LogResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store := o.Reader()
	var run *ledger.Run
	if req.Stage != "" || req.ForAgent { // a filter naming no stage of the run is a mistake, as in `event`
		r, err := store.Load(ctx, req.Run)
		if err != nil {
			return nil, err
		}
		run = r
		if _, _, ok := r.Stage(req.Stage); req.Stage != "" && !ok {
			return nil, fault.NotFound("run %s has no stage %q", req.Run, req.Stage)
		}
	}
	var events []ledger.Event
	var err error
	if req.Diverged > 0 {
		events, err = store.LogDiverged(ctx, req.Run, req.Diverged)
	} else {
		events, err = store.Log(ctx, req.Run)
	}
	if err != nil {
		return nil, err
	}
	kept := []ledger.Event{}
	for _, e := range events {
		if e.Type == ledger.EventHeartbeat && !req.Heartbeats && req.Type != string(ledger.EventHeartbeat) {
			continue
		}
		if (req.Type == "" || string(e.Type) == req.Type) && (req.Stage == "" || e.Stage == req.Stage) {
			kept = append(kept, e)
		}
	}
	if req.Last > 0 && len(kept) > req.Last {
		kept = kept[len(kept)-req.Last:]
	}
	docs := make([]json.RawMessage, 0, len(kept))
	for i := range kept {
		d, err := gitstate.MarshalEvent(&kept[i])
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	res := &LogResult{Events: docs, RunID: req.Run, Kept: kept}
	if req.ForAgent {
		if err := o.agentText().log(ctx, run, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Graph is a run's DAG (a graph run's jobs, or a single run's stages) as the views
// draw it (docs/contract.md §14), as it is or as it was.
func (o *Ops) Graph(ctx context.Context, req ShowRequest) (*views.Graph, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	r, err := o.load(ctx, req.Run, req.At)
	if err != nil {
		return nil, err
	}
	return views.Build(r), nil
}
