package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// graphRun refuses job operations on single runs, and writes on finished runs.
func graphRun(r *ledger.Run, write bool) error {
	if r.Header.Kind != ledger.KindGraph {
		return fault.Usage("run %s is a %s run: jobs belong to graph runs", r.Header.RunID, r.Header.Kind).WithHint("start a graph run with `%s`", fault.Do("start", "graph", true))
	}
	if write && ledger.RunTerminal(r.State.Status) {
		return fault.Refused("run %s is %s: its jobs can no longer change", r.Header.RunID, r.State.Status)
	}
	return nil
}

// jsonObject checks that data (a request's field) is one JSON object and returns it
// compacted; empty is none.
func jsonObject(field string, data json.RawMessage) (json.RawMessage, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(data) > MaxEventData {
		return nil, fault.Named(fault.ErrUsage, "{"+field+"} is %d bytes, over the %d KiB an event's data may hold", len(data), MaxEventData>>10).
			WithHint("keep a large result in a file of the node's worktree or branch, and its path in the data")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, fault.Named(fault.ErrUsage, "{"+field+"} must be a JSON object: %s", gitid.Clip(strings.TrimSpace(string(data))))
	}
	return json.Marshal(obj)
}

// MaxEventData bounds the data an event or a job's receipt carries (docs/contract.md
// §4.1): every event is a ledger commit every clone fetches, and a job's result is
// kept in every state after it; a page shows each whole.
const MaxEventData = 64 << 10

// JobAddRequest is `job add RUN JOB`.
type JobAddRequest struct {
	Run string `json:"run" help:"${job_add_run}"`
	Job string `json:"job" help:"${job_add_job}"`
	// Needs are the jobs that must be DONE first.
	Needs []string `json:"needs,omitempty" help:"${job_add_needs}"`
	// Scope are the path globs the job may touch (canonicalised here).
	Scope  []string `json:"scope,omitempty" help:"${job_add_scope}"`
	Verify string   `json:"verify,omitempty" help:"${job_add_verify}"`
	Kind   string   `json:"kind,omitempty" help:"${job_add_kind}"`
	// Criteria are run criteria (start's) this job meets.
	Criteria []string `json:"criterion,omitempty" help:"${job_add_criterion}"`
	// AllowOverlap accepts a scope that matches files another job's scope matches.
	AllowOverlap bool   `json:"allow_overlap,omitempty" help:"${job_add_allow_overlap}"`
	Driver       Driver `wire:"inline"`
}

// JobAddResult is the job `job add` added.
type JobAddResult struct {
	Job   *ledger.Job `json:"job"`
	RunID string      `json:"run_id"`
}

// JobAdd adds a job to a graph run: refused on a cycle, an unknown need or
// criterion, a duplicate, a dependency that FAILED, the run's job cap, or (unless
// AllowOverlap) a scope matching a baseline file another job's scope matches. A
// verify command added here is trusted here: this repository wrote it.
func (o *Ops) JobAdd(ctx context.Context, req JobAddRequest) (*JobAddResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	scope := req.Scope
	spec := ledger.JobSpec{ID: req.Job, Needs: req.Needs, Scope: scope, Verify: req.Verify, Kind: req.Kind, Criteria: req.Criteria}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	// The baseline is frozen in the header: list its files once, outside the retry loop.
	var files []string
	if len(scope) > 0 && !req.AllowOverlap {
		r, err := store.Load(ctx, req.Run)
		if err != nil {
			return nil, err
		}
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		if r.Header.Baseline.IsZero() {
			return nil, fmt.Errorf("run %s records no baseline", req.Run)
		}
		if files, err = store.Repo.TreeFiles(ctx, r.Header.Baseline); err != nil {
			return nil, err
		}
	}
	// Written here, it may run here (docs/contract.md §10): trusted durably before the ledger
	// commit that carries it, so no crash after the ref moved leaves it untrusted.
	var added trust.Added
	if req.Verify != "" {
		if added, err = trust.Add(ctx, store.Repo, req.Run, "", req.Verify); err != nil {
			return nil, err
		}
	}
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		if files != nil {
			if err := ledger.CheckOverlap(&r.State, spec, files); err != nil {
				return nil, err
			}
		}
		if err := ledger.CheckCriteria(&r.Header, []ledger.JobSpec{spec}); err != nil {
			return nil, err
		}
		if err := ledger.CheckJobCap(&r.Header, &r.State, 1); err != nil {
			return nil, err
		}
		if err := ledger.AddJobs(&r.State, []ledger.JobSpec{spec}); err != nil {
			return nil, err
		}
		signJobs(store, r, req.Job)
		data := ledger.JobAddedData{Needs: r.State.Job(req.Job).Needs, Scope: scope, Verify: req.Verify, Kind: req.Kind,
			AllowOverlap: req.AllowOverlap, Criteria: req.Criteria}
		return &gitstate.Change{Event: ledger.JobAddedEvent(ledger.About{Job: req.Job, Holder: req.Driver.Holder}, data)}, nil
	})
	if err != nil {
		_ = trust.Forget(ctx, store.Repo, added) // the job was not added
		return nil, err
	}
	return &JobAddResult{Job: r.State.Job(req.Job), RunID: req.Run}, nil
}

// JobClaimRequest is `job claim RUN [--job J]`.
type JobClaimRequest struct {
	Run string `json:"run" help:"${job_claim_run}"`
	// Job is the job to claim ("": the first ready one, in the order jobs were added).
	Job    string `json:"job,omitempty" help:"${job_claim_job}"`
	Worker Worker `wire:"inline"`
	// Agent and ThreadID name the agent working the job and its own session or
	// thread id, recorded on the job (docs/contract.md §15).
	Agent    string `json:"agent,omitempty" enum:"claude,codex,kimi" help:"${job_claim_agent}"`
	ThreadID string `json:"thread_id,omitempty" help:"${job_claim_thread_id}"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// JobClaimResult is a claim (docs/contract.md §4.7); the pointers are null when nothing was
// granted, and Reason then says why.
type JobClaimResult struct {
	RunID        string      `json:"run_id"`
	Job          *ledger.Job `json:"job"`
	Lease        *string     `json:"lease"`
	Attempt      *int        `json:"attempt"`
	Epoch        int         `json:"epoch"`
	ExpiresAt    *string     `json:"expires_at"`
	Reason       *string     `json:"reason"`
	GasRemaining int         `json:"gas_remaining"`
	// Running are the jobs a waiting claim waits on.
	Running []string `json:"-"`
}

// JobClaim takes the named job, or the next ready one: PENDING -> RUNNING, one gas
// charged, a lease token valid for Worker.TTL, recorded as job_claimed. A claim that
// grants nothing writes nothing: waiting comes back as a result; a reason to stop
// claiming (finished, halted, gas exhausted) comes back as the result together with
// a refusal. A stopped run refuses every claim.
func (o *Ops) JobClaim(ctx context.Context, req JobClaimRequest) (*JobClaimResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store := o.workerStore(req.Worker)
	var g ledger.Grant
	var running []string
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := graphRun(r, false); err != nil {
			return nil, err
		}
		if ledger.RunTerminal(r.State.Status) {
			// A finished run has nothing to claim: said as a reason, like a graph whose
			// jobs all ended, not as a stuck run.
			g = ledger.Grant{Epoch: r.State.Epoch, Reason: ledger.ReasonFinished}
			return nil, nil
		}
		if r.State.Status == ledger.RunStopped {
			return nil, fault.Refused("run %s is stopped: nothing can be claimed", req.Run).WithHint("`%s` first", as(fault.Do("resume", "run", req.Run), req.Worker.Holder))
		}
		var err error
		if g, err = ledger.Claim(&r.Header, &r.State, req.Job, req.Worker.Holder, o.now(), req.Worker.TTL, store.Nonce()); err != nil {
			return nil, err
		}
		if g.Job == nil {
			running = ledger.Running(&r.State)
			return nil, nil // nothing granted: nothing to write
		}
		g.Job.Agent, g.Job.ThreadID = req.Agent, req.ThreadID
		data := ledger.JobClaimedData{Lease: g.Lease, Attempt: g.Attempt, ExpiresAt: g.ExpiresAt,
			GasSpent: r.State.GasSpent, GasLimit: ledger.GasLimit(&r.Header, &r.State), Agent: req.Agent, ThreadID: req.ThreadID}
		return &gitstate.Change{Event: ledger.JobClaimedEvent(ledger.About{Job: g.Job.ID, Holder: req.Worker.Holder}, data)}, nil
	})
	if err != nil {
		return nil, err
	}
	res := &JobClaimResult{RunID: req.Run, Epoch: g.Epoch, GasRemaining: ledger.GasRemaining(&r.Header, &r.State)}
	if g.Job == nil {
		res.Reason, res.Running = &g.Reason, running
		return res, claimStop(r, g.Reason, req.Worker.Holder)
	}
	res.Job, res.Lease, res.Attempt, res.ExpiresAt = g.Job, &g.Lease, &g.Attempt, &g.ExpiresAt
	if req.ForAgent {
		j := *g.Job
		res.Job = &j
		o.agentText().jobs(ctx, r, []*ledger.Job{res.Job})
	}
	return res, nil
}

// finishedStatus is the status a graph whose every job ended finishes with: completed
// when every job is DONE, else the reader's choice.
func finishedStatus(count map[string]int) any {
	if count[ledger.JobFailed] == 0 {
		return ledger.RunCompleted
	}
	return fault.Placeholder("completed|failed")
}

// as is s run by holder (a run write carries the asker's holder, docs/contract.md
// §11.13); s itself when the asker named none.
func as(s fault.Step, holder string) fault.Step {
	if holder == "" {
		return s
	}
	return s.With("holder", holder)
}

// claimStop is the error of a claim that will never be granted again (exit 5), or nil
// for waiting; its steps carry the claiming worker's holder.
func claimStop(r *ledger.Run, reason, holder string) error {
	count := map[string]int{}
	for _, j := range r.State.Jobs {
		count[j.State]++
	}
	switch reason {
	case ledger.ReasonFinished:
		if ledger.RunTerminal(r.State.Status) {
			return fault.Refused("run %s is %s: nothing is left to claim", r.Header.RunID, r.State.Status)
		}
		return fault.Refused("run %s's graph is finished: every job ended (%d done, %d failed); nothing is left to claim",
			r.Header.RunID, count[ledger.JobDone], count[ledger.JobFailed]).
			WithHint("integrate with `%s`, then `%s`", as(unionStep(r), holder), as(fault.Do("finish", "run", r.Header.RunID, "status", finishedStatus(count)), holder))
	case ledger.ReasonHalted:
		return fault.Refused("run %s has halted: no job is ready and none is running (%d done, %d failed, %d pending)",
			r.Header.RunID, count[ledger.JobDone], count[ledger.JobFailed], count[ledger.JobPending]).
			WithHint("finish it with `%s`, or add jobs", as(fault.Do("finish", "run", r.Header.RunID, "status", fault.Placeholder("completed|failed")), holder))
	case ledger.ReasonGasExhausted:
		return fault.Refused("run %s has no gas left: %d of %d spent", r.Header.RunID, r.State.GasSpent, ledger.GasLimit(&r.Header, &r.State)).
			WithHint("a job is ready but cannot be charged; gas is never refunded")
	}
	return nil
}

// JobRenewRequest is `job renew RUN JOB --lease TOKEN`.
type JobRenewRequest struct {
	Run string `json:"run" help:"${job_renew_run}"`
	Job string `json:"job" help:"${job_renew_job}"`
	// Lease is the job's current lease token.
	Lease  string `json:"lease" help:"${job_renew_lease}"`
	Worker Worker `wire:"inline"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// JobRenewResult is the renewed lease. Its fields are in the order of the JSON keys
// (sorted).
type JobRenewResult struct {
	ExpiresAt string      `json:"expires_at"`
	Job       *ledger.Job `json:"job"`
	Lease     string      `json:"lease"`
	RunID     string      `json:"run_id"`
}

// JobRenew extends a job's lease to now + Worker.TTL, recorded as job_renewed. A
// token that is not the job's current one is refused and changes nothing.
func (o *Ops) JobRenew(ctx context.Context, req JobRenewRequest) (*JobRenewResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	var j *ledger.Job
	r, err := o.workerStore(req.Worker).Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		if err := ledger.Renew(&r.State, req.Job, req.Lease, o.now(), req.Worker.TTL); err != nil {
			return nil, err
		}
		j = r.State.Job(req.Job)
		data := ledger.JobRenewedData{Lease: j.Lease, ExpiresAt: j.ExpiresAt}
		return &gitstate.Change{Event: ledger.JobRenewedEvent(ledger.About{Job: req.Job, Holder: req.Worker.Holder}, data)}, nil
	})
	if err != nil {
		return nil, err
	}
	res := &JobRenewResult{ExpiresAt: j.ExpiresAt, Job: j, Lease: j.Lease, RunID: req.Run}
	if req.ForAgent { // the job's text, as job_claim gives it
		c := *j
		res.Job = &c
		o.agentText().jobs(ctx, r, []*ledger.Job{res.Job})
	}
	return res, nil
}

// JobDoneRequest is `job done RUN JOB --lease TOKEN --status S`.
type JobDoneRequest struct {
	Run   string `json:"run" help:"${job_done_run}"`
	Job   string `json:"job" help:"${job_done_job}"`
	Lease string `json:"lease" help:"${job_done_lease}"`
	// Status is ledger.ReceiptOK, ReceiptTimeout or ReceiptFailed.
	Status string `json:"status" enum:"ok,timeout,failed" help:"${job_done_status}"`
	// Data is a JSON object kept as the job's result (empty: none).
	Data json.RawMessage `json:"data,omitempty" wire:"object" help:"${job_done_data}"`
	// Children are jobs added in the receipt's own write, one expansion level below
	// this job; their names and scopes are checked here. Non-nil (even empty) with a
	// receipt other than ok is refused: only a finished job expands.
	Children []ledger.JobSpec
	// ChildrenJSON are the children as a JSON list in job add's shape (parseChildren),
	// read into Children by Check when Children is nil.
	ChildrenJSON json.RawMessage `json:"children,omitempty" wire:"objects" help:"${job_done_children}"`
	// VerifyTimeout bounds the job's verify on an ok receipt.
	VerifyTimeout time.Duration `json:"verify_timeout,omitempty" help:"${job_done_verify_timeout}"`
	Worker        Worker        `wire:"inline"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// JobDoneResult is what a receipt did. Its fields are in the order of the JSON keys
// (sorted).
type JobDoneResult struct {
	// Cascaded are the PENDING jobs that failed with this one.
	Cascaded []string `json:"cascaded"`
	// Children are the jobs the receipt added.
	Children []ledger.Job `json:"children"`
	From     string       `json:"from"`
	Job      *ledger.Job  `json:"job"`
	RunID    string       `json:"run_id"`
	Status   string       `json:"status"`
	To       string       `json:"to"`
	// Verify is the job's verify, when an ok receipt owed one.
	Verify *ledger.VerifyResult `json:"verify"`
	// Attempts are the job's attempts after the receipt.
	Attempts int `json:"-"`
}

// JobDone applies a worker's receipt, recorded as job_done: ok RUNNING -> DONE,
// timeout back to PENDING (or FAILED at the attempt limit), failed -> FAILED, which
// fails the PENDING jobs that need it. A token that is not the job's current one is
// refused and changes nothing. An ok receipt of a job with a verify is recorded with
// the verify owed, then the verify runs in the job's worktree and is recorded in a
// second write; one that fails comes back as the result together with an
// ErrVerifyFailed error.
func (o *Ops) JobDone(ctx context.Context, req JobDoneRequest) (*JobDoneResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	data, err := jsonObject("data", req.Data)
	if err != nil {
		return nil, err
	}
	if req.Children != nil && req.Status != ledger.ReceiptOK {
		return nil, fault.Named(fault.ErrUsage, "{children} needs {status} ok: only a finished job expands")
	}
	children := make([]ledger.JobSpec, 0, len(req.Children))
	for _, ch := range req.Children {
		if err := ledger.ValidName("job", ch.ID); err != nil {
			return nil, err
		}
		if ch.Kind != "" {
			if err := ledger.ValidName("kind", ch.Kind); err != nil {
				return nil, err
			}
		}
		scope, err := ledger.CanonicalScope(ch.Scope)
		if err != nil {
			return nil, err
		}
		ch.Scope = scope
		children = append(children, ch)
	}
	store := o.workerStore(req.Worker)
	if req.Status == ledger.ReceiptOK {
		if err := checkScope(ctx, store, req); err != nil {
			return nil, err
		}
	}
	var oc ledger.Outcome
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		var err error
		own := ownJob(store, r, req.Job) // its result is this clone's too only if the rest is
		if oc, err = ledger.Done(&r.Header, &r.State, req.Job, req.Lease, req.Status, data); err != nil {
			return nil, err
		}
		if err := ledger.Expand(&r.Header, &r.State, req.Job, children); err != nil {
			return nil, err
		}
		for _, ch := range children {
			signJobs(store, r, ch.ID)
		}
		if own {
			signJobs(store, r, req.Job)
		}
		ev := ledger.JobDoneData{Lease: oc.Lease, Status: req.Status, From: oc.From, To: oc.To, Attempts: oc.Attempts, Cascaded: oc.Cascaded, Data: data}
		if len(children) > 0 {
			ids := make([]string, len(children))
			for i, ch := range children {
				ids[i] = ch.ID
			}
			ev.Children = ids
		}
		// In the receipt's own write: resume finds it if the verify dies.
		ev.VerifyOwed = r.State.Job(req.Job).VerifyOwed
		return &gitstate.Change{Event: ledger.JobDoneEvent(ledger.About{Job: req.Job, Holder: req.Worker.Holder}, ev)}, nil
	})
	if err != nil {
		return nil, err
	}
	var vr *ledger.VerifyResult
	if j := r.State.Job(req.Job); j != nil && j.VerifyOwed {
		var v resume.JobVerified
		if r, v, err = resume.SettleJobVerify(ctx, store, req.Run, req.Job, req.VerifyTimeout); err != nil {
			return nil, err
		}
		vr, oc.To, oc.Attempts = v.Verify, v.To, v.Attempts
		oc.Cascaded = append(oc.Cascaded, v.Cascaded...)
	}
	res := &JobDoneResult{Cascaded: nonNil(oc.Cascaded), Children: []ledger.Job{}, From: oc.From, Job: r.State.Job(req.Job),
		RunID: req.Run, Status: req.Status, To: oc.To, Verify: vr, Attempts: oc.Attempts}
	for _, ch := range children {
		if j := r.State.Job(ch.ID); j != nil {
			res.Children = append(res.Children, *j)
		}
	}
	if req.ForAgent {
		o.agentText().jobDone(ctx, r, res)
	}
	if vr != nil && !vr.Passed {
		return res, &fault.Error{Kind: fault.ErrVerifyFailed, Msg: fmt.Sprintf("verify of job %s %s: the job is %s with %d attempt(s)",
			req.Job, resume.Outcome(vr, req.VerifyTimeout), oc.To, oc.Attempts)}
	}
	return res, nil
}

// JobListRequest is `job list RUN`.
type JobListRequest struct {
	Run string `json:"run" help:"${job_list_run}"`
	// Ready lists only the jobs a claim could take now.
	Ready bool `json:"ready,omitempty" help:"${job_list_ready}"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// JobListResult is a graph run's jobs, the ready ones, and its gas. Its fields are in
// the order of the JSON keys (sorted).
type JobListResult struct {
	Epoch        int          `json:"epoch"`
	GasLimit     int          `json:"gas_limit"`
	GasRemaining int          `json:"gas_remaining"`
	GasSpent     int          `json:"gas_spent"`
	Jobs         []ledger.Job `json:"jobs"`
	// Ready are the jobs a claim could take now, in the order they were added.
	Ready []string `json:"ready"`
	// Reason is "" when a job is ready, else why nothing can be claimed.
	Reason string `json:"reason"`
	RunID  string `json:"run_id"`
}

// JobList reads a graph run's jobs.
func (o *Ops) JobList(ctx context.Context, req JobListRequest) (*JobListResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	r, err := o.Reader().Load(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	if err := graphRun(r, false); err != nil {
		return nil, err
	}
	f := ledger.JobFrontier(&r.Header, &r.State)
	ready := map[string]bool{}
	for _, id := range f.Ready {
		ready[id] = true
	}
	res := &JobListResult{Epoch: r.State.Epoch, GasLimit: f.GasLimit, GasRemaining: f.GasRemaining, GasSpent: f.GasSpent,
		Jobs: []ledger.Job{}, Ready: append([]string{}, f.Ready...), Reason: f.Reason, RunID: req.Run}
	for _, j := range r.State.Jobs {
		if !req.Ready || ready[j.ID] {
			res.Jobs = append(res.Jobs, j)
		}
	}
	if req.ForAgent {
		o.agentText().jobs(ctx, r, pointers(res.Jobs))
	}
	return res, nil
}

// ReapRequest is `reap RUN`.
type ReapRequest struct {
	Run string `json:"run" help:"${reap_run}"`
	// Holder is who reaps (recorded in the event; never the run's driver).
	Holder string `json:"holder,omitempty" help:"${reap_holder}"`
}

// ReapResult is the jobs a reap timed out. Its fields are in the order of the JSON
// keys (sorted).
type ReapResult struct {
	Reaped []ReapedJob `json:"reaped"`
	RunID  string      `json:"run_id"`
}

// ReapedJob is one job whose lease a reap (or finish --force) ended: as job_reaped
// records it.
type ReapedJob = ledger.ReapedJob

// Reap gives every RUNNING job whose lease has expired the timeout transition,
// recorded as job_reaped. It is a job write, like a claim: it never takes or renews
// the driver lease, and a live driver does not refuse it. With nothing expired,
// nothing is written.
func (o *Ops) Reap(ctx context.Context, req ReapRequest) (*ReapResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	var reaped []ReapedJob
	_, err := o.workerStore(Worker{Holder: req.Holder}).Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		reaped = ledger.ReapedJobs(ledger.Reap(&r.Header, &r.State, o.now()))
		if len(reaped) == 0 {
			return nil, nil
		}
		return &gitstate.Change{Event: ledger.JobReapedEvent(ledger.About{Holder: req.Holder}, ledger.JobReapedData{Jobs: reaped})}, nil
	})
	if err != nil {
		return nil, err
	}
	return &ReapResult{Reaped: reaped, RunID: req.Run}, nil
}

// checkScope refuses an ok receipt whose node changed paths outside the job's scope
// (docs/contract.md §5.3: a scope is a contract), committed or not, against the node's baseline:
// exit 5 with the paths, nothing written, the lease kept so the worker can fix it. A
// receipt the write will refuse anyway (another lease) is left to it.
func checkScope(ctx context.Context, store *gitstate.Store, req JobDoneRequest) error {
	r, err := store.Load(ctx, req.Run)
	if err != nil {
		return err
	}
	j := r.State.Job(req.Job)
	if j == nil || j.Lease != req.Lease || len(j.Scope) == 0 {
		return nil
	}
	rec := r.State.Worktree(req.Job)
	if rec == nil {
		return nil
	}
	base := rec.Baseline
	if base.IsZero() {
		base = r.Header.Baseline
	}
	outside, err := worktrees.OutsideScope(ctx, store.Repo, req.Run, rec, base, j.Scope)
	if err != nil || len(outside) == 0 {
		return err
	}
	return fault.Refused("job %s changed %d path(s) outside its scope (%s): %s; nothing was written, the lease is kept",
		req.Job, len(outside), strings.Join(j.Scope, ", "), strings.Join(outside, ", ")).
		WithHint("take those changes out of the node's worktree and report again").WithField("paths", outside)
}

// signJobs marks the text of r's jobs ids as written by this clone (docs/contract.md
// §6, gitstate's textmac.go); without a key they stay unmarked (written elsewhere).
func signJobs(store *gitstate.Store, r *ledger.Run, ids ...string) {
	k, err := store.SessionKey()
	if err != nil {
		return
	}
	for _, id := range ids {
		if j := r.State.Job(id); j != nil {
			j.MAC = k.JobMAC(r.Header.RunID, j)
		}
	}
}

// ownJob reports whether the text of r's job id is as this clone wrote it.
func ownJob(store *gitstate.Store, r *ledger.Run, id string) bool {
	k, err := store.SessionKey()
	j := r.State.Job(id)
	return err == nil && j != nil && k.OwnJob(r.Header.RunID, j)
}
