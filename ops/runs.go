package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/trust"
)

// RunView is the JSON of a run in start, finish, list and show (docs/contract.md §4.7).
type RunView struct {
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
	Driver    *ledger.Lease `json:"driver,omitempty"`
	CreatedAt string        `json:"created_at"`
	UpdatedAt string        `json:"updated_at"`
	Tip       string        `json:"tip"`
	// PipelineMode is who resumes the run (standalone, managed, dispatch-only);
	// ManagedBy its owner and ResumeWith the owner's resume command, as the run
	// carries it (text: a command only where trust says so, docs/contract.md §10).
	PipelineMode string `json:"pipeline_mode"`
	ManagedBy    string `json:"managed_by,omitempty"`
	ResumeWith   string `json:"resume_with,omitempty"`
	TakenOver    string `json:"taken_over,omitempty"`
	// TextWithheld: the run's free text was left out, for an agent, because the run
	// was neither started nor trusted here (agenttext.go).
	TextWithheld bool `json:"text_withheld,omitempty"`
}

// RunViewOf is r as seen at now (its driver is live or not then).
func RunViewOf(r *ledger.Run, now time.Time) RunView {
	v := RunView{
		RunID: r.Header.RunID, Kind: r.Header.Kind, Status: r.State.Status, Reason: r.State.Reason,
		Baseline: r.Header.Baseline.String(), Session: r.Header.Session, Intent: r.Header.Intent,
		Epoch: r.State.Epoch, Events: r.State.Seq, Live: r.Live(now), CreatedAt: r.Header.CreatedAt,
		UpdatedAt: r.State.UpdatedAt, Tip: r.Tip,
		PipelineMode: r.Header.Mode(), ManagedBy: r.Header.ManagedBy, ResumeWith: r.Header.ResumeWith, TakenOver: r.State.TakenOver,
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

// orZero is a ref's old value for a transaction: its id, or "must not exist".
func orZero(id string) string {
	if id == "" {
		return git.ZeroID
	}
	return id
}

// newRunID is time-sortable and collision-proof: UTC seconds and 48 random bits.
func newRunID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// StartRequest is `start`.
type StartRequest struct {
	// ID is the run's id ("": time-sortable and unique).
	ID       string   `json:"id,omitempty" help:"${start_id}"`
	Intent   string   `json:"intent,omitempty" help:"${start_intent}"`
	Criteria []string `json:"criterion,omitempty" help:"${start_criterion}"`
	// Verify is the verify command of every stage that names none.
	Verify     string `json:"verify,omitempty" help:"${start_verify}"`
	VerifySafe bool   `json:"verify_safe,omitempty" help:"${start_verify_safe}"`
	// Scope are the path globs the run may touch (canonicalised here).
	Scope []string `json:"scope,omitempty" help:"${start_scope}"`
	// Baseline is the commit the run starts from ("": HEAD).
	Baseline string `json:"baseline,omitempty" help:"${start_baseline}"`
	// Stages are the pipeline's stages, parsed (nil: those of Pipeline or StageList;
	// else a single run has one stage, main, and a graph run none).
	Stages []ledger.StageDef
	// Pipeline is a pipeline file, JSON or YAML (a front end resolves a relative
	// path): its stages and setup. StageList is stage names, comma-separated.
	Pipeline  string `json:"pipeline,omitempty" wire:"path" help:"${start_pipeline}"`
	StageList string `json:"stages,omitempty" help:"${start_stages}"`
	Graph     bool   `json:"graph,omitempty" help:"${start_graph}"`
	// Gas, MaxAttempts, MaxJobs and MaxDepth are a graph run's limits (0: the
	// defaults).
	Gas         int `json:"gas,omitempty" help:"${start_gas}"`
	MaxAttempts int `json:"max_attempts,omitempty" help:"${start_max_attempts}"`
	MaxJobs     int `json:"max_jobs,omitempty" help:"${start_max_jobs}"`
	MaxDepth    int `json:"max_depth,omitempty" help:"${start_max_depth}"`
	// ConfigFiles are files whose hash is frozen, for drift checks; each must exist.
	ConfigFiles []string `json:"config,omitempty" wire:"path" help:"${start_config}"`
	Driver      Driver   `wire:"inline"`
	// ManagedBy names the engine that owns the run's resumption (pipeline mode
	// managed), ResumeWith its resume command; DispatchOnly marks a run with no
	// pipeline to resume. resume hands such a run back (docs/contract.md §6).
	ManagedBy    string `json:"managed_by,omitempty" help:"${start_managed_by}"`
	ResumeWith   string `json:"resume_with,omitempty" help:"${start_resume_with}"`
	DispatchOnly bool   `json:"dispatch_only,omitempty" help:"${start_dispatch_only}"`
	// Setup runs in each new worktree of the run, within SetupTimeout (0: the
	// default); Ports gives each node a block of that many ports (docs/contract.md §15).
	Setup        string        `json:"setup,omitempty" help:"${start_setup}"`
	SetupTimeout time.Duration `json:"setup_timeout,omitempty" help:"${start_setup_timeout}"`
	Ports        int           `json:"ports,omitempty" help:"${start_ports}"`
}

// MaxPorts is the largest block of ports a node may be given.
const MaxPorts = 100

// StartResult is the run `start` made.
type StartResult struct {
	RunView
}

// Start makes a run: its frozen header (baseline pinned, config files hashed), its
// first state, the driver lease of Driver, and a run_started event. The commands it
// carries are trusted here: this repository wrote them.
func (o *Ops) Start(ctx context.Context, req StartRequest) (*StartResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	now := o.now()
	id := req.ID
	if id == "" {
		id = newRunID(now)
	}
	if err := ledger.ValidName("run", id); err != nil {
		return nil, err
	}
	if req.Driver.Session != "" {
		if err := ledger.ValidName("session", req.Driver.Session); err != nil {
			return nil, err
		}
	}
	defs := slices.Clone(req.Stages) // the defaults below are filled in a copy
	if req.Stages == nil && !req.Graph {
		defs = ledger.StagesFromList("main")
	}
	for i := range defs {
		if defs[i].Verify == "" && req.Verify != "" {
			defs[i].Verify, defs[i].VerifySafe = req.Verify, req.VerifySafe
		}
	}
	if err := ledger.CheckStages(defs); err != nil {
		return nil, err
	}
	scope, err := ledger.CanonicalScope(req.Scope)
	if err != nil {
		return nil, err
	}
	sha, err := baseline.Resolve(ctx, o.Repo, req.Baseline)
	if err != nil {
		return nil, err
	}
	configs, hash, err := configFiles(o.Repo.TopLevel, req.ConfigFiles)
	if err != nil {
		return nil, err
	}
	kind := ledger.KindSingle
	if req.Graph {
		kind = ledger.KindGraph
	}
	if defs == nil {
		defs = []ledger.StageDef{}
	}
	h := ledger.Header{
		RunID: id, Kind: kind, CreatedAt: ledger.Stamp(now), Intent: req.Intent, Criteria: req.Criteria,
		Verify: req.Verify, VerifySafe: req.VerifySafe, Scope: scope, Baseline: sha, Stages: defs,
		Session: req.Driver.Session, ConfigFiles: configs, ConfigHash: hash, Gas: req.Gas, MaxAttempts: req.MaxAttempts,
		MaxJobs: req.MaxJobs, MaxDepth: req.MaxDepth, Setup: req.Setup, Ports: req.Ports,
	}
	if req.SetupTimeout > 0 {
		h.SetupTimeout = req.SetupTimeout.String()
	}
	switch {
	case req.DispatchOnly && (req.ManagedBy != "" || req.ResumeWith != ""):
		return nil, fault.Named(fault.ErrUsage, "{dispatch_only} is a run with no pipeline to resume: it takes no {managed_by} or {resume_with}")
	case req.DispatchOnly:
		h.PipelineMode = ledger.ModeDispatchOnly
	case req.ManagedBy != "":
		h.PipelineMode, h.ManagedBy, h.ResumeWith = ledger.ModeManaged, req.ManagedBy, req.ResumeWith
	case req.ResumeWith != "":
		return nil, fault.Named(fault.ErrUsage, "{resume_with} needs {managed_by}: it is the owner's resume command")
	}
	if err := h.CheckMode(); err != nil {
		return nil, err
	}
	if req.Graph && h.MaxAttempts == 0 {
		// Written into the header, so that a later change of the default never changes
		// a run already started.
		h.MaxAttempts = ledger.DefaultMaxAttempts
	}
	st := ledger.State{RunID: id, Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	for _, d := range defs {
		st.Stages = append(st.Stages, ledger.StageState{Name: d.Name, Status: ledger.StagePending})
	}
	r := &ledger.Run{Header: h, State: st}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	w, err := store.Writing()
	if err != nil {
		return nil, err
	}
	// The session is kept as its keyed hash (docs/contract.md §5.1), in the header as in the lease.
	r.Header.Session = w.Key.Seal(req.Driver.Session)
	if _, err := ledger.ClaimDriver(r, w, now); err != nil {
		return nil, err
	}
	// This repository wrote the run's commands: they may run here (docs/contract.md §10). Their
	// trust is durable before the ledger commit that carries them (docs/contract.md §11 invariant
	// 12): no crash after the ref moved leaves the run's own verify untrusted. A crash
	// in between leaves trusted only what was typed here, for a run that does not exist.
	// The intent and the rest of the header were typed here too: they may reach an
	// agent's context here, as this clone writes them (docs/contract.md §6).
	var own []string
	for _, cm := range trust.Commands(r) {
		own = append(own, cm.Command)
	}
	added, err := trust.AddRun(ctx, o.Repo, &r.Header, own...)
	if err != nil {
		return nil, err
	}
	ev := ledger.RunStartedEvent(ledger.About{Holder: req.Driver.Holder}, ledger.RunStartedData{Baseline: sha})
	run, err := store.Create(ctx, r.Header, r.State, ev, baseline.Pin(id, "baseline", sha.String()))
	if err != nil {
		// Nothing was written: another run of that id (another clone's, perhaps) gets
		// no trust from this one.
		_ = trust.Forget(ctx, o.Repo, added)
		return nil, err
	}
	return &StartResult{RunViewOf(run, now)}, nil
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
		fh, _, err := confine.OpenRegular(abs, baseline.MaxConfigFile)
		if err != nil {
			return nil, "", fault.Usage("config file %s: %v", f, err)
		}
		fh.Close()
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

// TransitionRequest is `transition RUN STAGE STATUS`.
type TransitionRequest struct {
	Run    string `json:"run" help:"${transition_run}"`
	Stage  string `json:"stage" help:"${transition_stage}"`
	Status string `json:"status" enum:"pending,dispatched,verifying,passed,gated,completed,rejected,failed,rework,skipped" help:"${transition_status}"`
	Reason string `json:"reason,omitempty" help:"${transition_reason}"`
	// Lease is the stage token of the attempt being reported ("": none checked).
	Lease string `json:"lease,omitempty" help:"${transition_lease}"`
	// ThreadID and PID describe a new attempt (dispatched only): the agent runtime's
	// conversation id, and the agent's process id on this host.
	ThreadID string `json:"thread_id,omitempty" help:"${transition_thread_id}"`
	PID      int    `json:"pid,omitempty" help:"${transition_pid}"`
	// Agent names the agent whose conversation ThreadID is (claude, codex, kimi), so
	// next_action can give that agent's own command to continue it (docs/contract.md §15).
	Agent  string `json:"agent,omitempty" enum:"claude,codex,kimi" help:"${transition_agent}"`
	Driver Driver `wire:"inline"`
	// Person is who stands behind the request: passing or rejecting a human gate is
	// a person's step (StepHumanGate).
	Person Person
	// VerifyTimeout bounds the verify a passed report runs (zero: DefaultVerifyTimeout).
	VerifyTimeout time.Duration
	// AllowOutsideScope accepts a passed report whose work changed paths outside the
	// stage's scope: a person's step (StepOutsideScope), recorded.
	AllowOutsideScope bool
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// TransitionResult is a stage transition. Its fields are in the order of the JSON
// keys (sorted); Attempt and Lease are there only for a dispatch.
type TransitionResult struct {
	Attempt   *int            `json:"attempt,omitempty"`
	Lease     *string         `json:"lease,omitempty"`
	RunID     string          `json:"run_id"`
	RunStatus string          `json:"run_status"`
	Stage     TransitionStage `json:"stage"`
	// RunReason is the run's reason after the transition (a last stage completing
	// completes a single run).
	RunReason string `json:"-"`
}

// TransitionStage is the stage after a transition. Its fields are in the order of
// the JSON keys (sorted); Attempt, Baseline and Lease are there only for a dispatch.
type TransitionStage struct {
	Attempt  *int    `json:"attempt,omitempty"`
	Attempts int     `json:"attempts"`
	Baseline *string `json:"baseline,omitempty"`
	From     string  `json:"from"`
	Lease    *string `json:"lease,omitempty"`
	Name     string  `json:"name"`
	Status   string  `json:"status"`
	// Unverified, Verified and Verify: a passed report's verify (docs/contract.md §5.2).
	Unverified string               `json:"unverified,omitempty"`
	Verified   *bool                `json:"verified,omitempty"`
	Verify     *ledger.VerifyResult `json:"verify,omitempty"`
}

// Transition applies one stage transition checked against the stage machine. A
// dispatch opens an attempt whose baseline is the stage worktree's branch tip (else
// its recorded HEAD), or, with no worktree, the HEAD of the checkout this runs in,
// pinned in the same write; it prints the attempt's stage token. A report with a
// stale token is refused. A single run whose last stage ends completes itself in
// the same write.
func (o *Ops) Transition(ctx context.Context, req TransitionRequest) (*TransitionResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	w := req.Driver.Writer()
	w.Stage, w.Token, w.To = req.Stage, req.Lease, req.Status
	store := o.Store(w)
	sealed := ""
	if req.Driver.Session != "" {
		k, err := store.SessionKey()
		if err != nil {
			return nil, err
		}
		sealed = k.Seal(req.Driver.Session) // an attempt keeps the session's keyed hash too
	}
	// The HEAD of the checkout this runs in: a dispatched stage without a worktree
	// runs there, and its attempt's baseline is that HEAD (read once, not per try).
	checkoutHead := ""
	if req.Status == ledger.StageDispatched {
		if head, err := store.Repo.ResolveCommit(ctx, git.HeadRev()); err == nil {
			checkoutHead = head.String()
		}
	}
	host := ""
	if req.PID != 0 {
		host, _ = os.Hostname()
	}
	var vr *ledger.VerifyResult
	unverified := ""
	var outside []string
	outsideBy := ""
	if req.Status == ledger.StagePassed {
		var err error
		if outside, outsideBy, err = o.stageScope(ctx, store, req); err != nil {
			return nil, err // before a verify that may take minutes
		}
		if vr, unverified, err = o.verifyPass(ctx, store, req); err != nil {
			return nil, err
		}
	}
	var from string
	verifyFailed := false
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		def, st, ok := r.Stage(req.Stage)
		if !ok {
			return nil, fault.NotFound("run %s has no stage %q", req.Run, req.Stage)
		}
		approvedBy := ""
		if st.Status == ledger.StageGated && def.Gate == "human" && (req.Status == ledger.StageCompleted || req.Status == ledger.StageRejected) {
			by, err := req.Person.approve(StepHumanGate) // docs/contract.md §5.2: a person's step
			if err != nil {
				return nil, err
			}
			approvedBy = by
		}
		if err := ledger.CheckStageToken(r, req.Stage, req.Lease); err != nil {
			return nil, err
		}
		if cur := r.CurrentStage(); req.Status == ledger.StageDispatched && !req.Driver.TakeOver && cur != nil && cur.Name == req.Stage {
			// docs/contract.md §5.2: a re-dispatch never puts a second agent on an attempt whose agent
			// is live and not the caller's, unless --take-over.
			key, _ := store.SessionKey() // without one, only an earlier release's plain ids match
			asker := resume.Asker{Holder: req.Driver.Holder, Session: req.Driver.Session, Key: key}
			if a := resume.OthersLiveAttempt(r, o.now(), resume.Host{}, asker); a != nil {
				return nil, fault.Named(fault.ErrConflict, "attempt %d of stage %s is live (its agent's pid alive on its host, or a heartbeat inside its idle budget) and is not yours: nothing was written", a.N, req.Stage).
					WithHint("wait for it to report; if its agent is gone for good, pass {holder} NAME {take_over} to dispatch anyway (recorded)")
			}
		}
		from = st.Status
		base, inCheckout := r.Header.Baseline, false
		var refs []git.RefUpdate
		if req.Status == ledger.StageDispatched {
			if wt := r.State.Worktree(req.Stage); wt != nil {
				base = wt.Head
				if tip, err := store.Repo.ReadRef(ctx, "refs/heads/"+wt.Branch); err == nil && tip != "" {
					if base, err = git.ParseOID(tip); err != nil {
						return nil, err
					}
				}
			} else if checkoutHead != "" {
				id, err := git.ParseOID(checkoutHead)
				if err != nil {
					return nil, err
				}
				base, inCheckout = id, true
			}
		}
		to, reason := req.Status, req.Reason
		verifyFailed = false
		if vr != nil && !vr.Passed && (from == ledger.StageDispatched || from == ledger.StageVerifying) {
			// docs/contract.md §5.2: a passed report whose verify fails records failed, with the tail.
			to, reason, verifyFailed = ledger.StageFailed, "verify failed: "+resume.Outcome(vr, req.verifyTimeout()), true
		}
		if err := ledger.ApplyStageTransition(r, req.Stage, to, reason, base, ledger.Stamp(o.now()), store.Nonce()); err != nil {
			return nil, err
		}
		data := ledger.StageTransitionData{From: from, To: to, Reason: reason}
		if req.Status == ledger.StagePassed {
			if vr != nil {
				st.Verify, data.Verify = vr, vr
			}
			if !verifyFailed {
				verified := vr != nil
				st.Verified, st.Unverified = &verified, unverified
				data.Verified = &verified
				data.Unverified = unverified
			}
		}
		data.ApprovedBy = approvedBy
		if len(outside) > 0 {
			data.AllowedOutsideScope, data.ApprovedBy = outside, outsideBy
		}
		if req.Status == ledger.StageDispatched {
			a := &st.Attempts[len(st.Attempts)-1]
			a.Holder, a.Session, a.ThreadID, a.PID, a.Host, a.InCheckout = req.Driver.Holder, sealed, req.ThreadID, req.PID, host, inCheckout
			a.Agent = req.Agent
			pin := gitstate.PinRef(req.Run, ledger.BaselinePinName(req.Stage, a.N))
			old, err := store.Repo.ReadRef(ctx, pin)
			if err != nil {
				return nil, err
			}
			refs = append(refs, git.RefUpdate{Name: pin, New: a.Baseline.String(), Old: orZero(old)})
			data.Attempt, data.Lease, data.Baseline = a.N, a.Lease, a.Baseline
			data.ThreadID, data.Agent = req.ThreadID, req.Agent
			if req.PID != 0 {
				data.PID, data.Host = req.PID, host
			}
		}
		if r.State.Status == ledger.RunCompleted {
			data.RunEnded = &ledger.RunEnded{RunStatus: r.State.Status, RunReason: r.State.Reason}
		}
		return &gitstate.Change{Event: ledger.StageTransitionEvent(ledger.About{Stage: req.Stage, Holder: req.Driver.Holder}, data), Refs: refs}, nil
	})
	if err != nil {
		return nil, err
	}
	_, st, _ := r.Stage(req.Stage)
	res := &TransitionResult{RunID: req.Run, RunStatus: r.State.Status, RunReason: r.State.Reason,
		Stage: TransitionStage{Attempts: len(st.Attempts), From: from, Name: st.Name, Status: st.Status}}
	if req.Status == ledger.StagePassed {
		res.Stage.Verify = vr
		if !verifyFailed {
			res.Stage.Verified, res.Stage.Unverified = st.Verified, st.Unverified
		}
	}
	if req.ForAgent {
		o.agentText().transition(ctx, r, res)
	}
	if verifyFailed {
		return res, &fault.Error{Kind: fault.ErrVerifyFailed, Msg: "verify of stage " + req.Stage + " " + resume.Outcome(vr, req.verifyTimeout()) + ": the stage is failed, not passed"}
	}
	if req.Status == ledger.StageDispatched && len(st.Attempts) > 0 {
		a := st.Attempts[len(st.Attempts)-1]
		res.Attempt, res.Lease = &a.N, &a.Lease
		base := a.Baseline.String()
		res.Stage.Attempt, res.Stage.Lease, res.Stage.Baseline = &a.N, &a.Lease, &base
	}
	return res, nil
}

// HeartbeatRequest is `heartbeat RUN --holder H [--stage S]`.
type HeartbeatRequest struct {
	Run string `json:"run" help:"${heartbeat_run}"`
	// Stage, when set, also beats for the stage's open attempt (its idle budget
	// starts again); Lease is that attempt's stage token.
	Stage  string `json:"stage,omitempty" help:"${heartbeat_stage}"`
	Lease  string `json:"lease,omitempty" help:"${heartbeat_lease}"`
	Driver Driver `wire:"inline"`
}

// HeartbeatResult is the driver lease after a heartbeat. Its fields are in the
// order of the JSON keys (sorted); Stage and HeartbeatAt are null without a stage.
type HeartbeatResult struct {
	Attempt     *int          `json:"attempt,omitempty"`
	Driver      *ledger.Lease `json:"driver"`
	HeartbeatAt *string       `json:"heartbeat_at"`
	RunID       string        `json:"run_id"`
	Stage       *string       `json:"stage"`
}

// Heartbeat renews the driver lease and, with a stage, records its open attempt's
// heartbeat, in one write. It needs a named driver, and a finished run has nothing
// to drive.
func (o *Ops) Heartbeat(ctx context.Context, req HeartbeatRequest) (*HeartbeatResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	w := req.Driver.Writer()
	w.Stage, w.Token = req.Stage, req.Lease
	r, err := o.Store(w).Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if ledger.RunTerminal(r.State.Status) {
			return nil, fault.Refused("run %s is %s: there is nothing to drive", req.Run, r.State.Status)
		}
		var data ledger.HeartbeatData
		if d := r.State.Driver; d != nil {
			data.ExpiresAt = d.ExpiresAt
		}
		if req.Stage != "" {
			if err := ledger.Heartbeat(r, req.Stage, req.Lease, req.Driver.Holder, o.now()); err != nil {
				return nil, err
			}
			_, st, _ := r.Stage(req.Stage)
			data.Attempt = len(st.Attempts)
		}
		return &gitstate.Change{Event: ledger.HeartbeatEvent(ledger.About{Stage: req.Stage, Holder: req.Driver.Holder}, data)}, nil
	})
	if err != nil {
		return nil, err
	}
	d := r.State.Driver
	if d == nil {
		d = &ledger.Lease{}
	}
	res := &HeartbeatResult{Driver: d, RunID: req.Run}
	if req.Stage != "" {
		_, st, _ := r.Stage(req.Stage)
		a := st.Attempts[len(st.Attempts)-1]
		stage := req.Stage
		res.Stage, res.Attempt, res.HeartbeatAt = &stage, &a.N, &a.HeartbeatAt
	}
	return res, nil
}

// EventRequest is `event RUN TYPE`.
type EventRequest struct {
	Run string `json:"run" help:"${event_run}"`
	// Type is any valid name but the types git-atlas writes itself.
	Type string `json:"type" help:"${event_type}"`
	// Stage is the stage it is about ("": none).
	Stage string `json:"stage,omitempty" help:"${event_stage}"`
	// Data is a JSON object of details (empty: none).
	Data   json.RawMessage `json:"data,omitempty" wire:"object" help:"${event_data}"`
	Driver Driver          `wire:"inline"`
}

// EventResult is the event appended. Its fields are in the order of the JSON keys
// (sorted).
type EventResult struct {
	RunID string `json:"run_id"`
	Seq   int    `json:"seq"`
	Tip   string `json:"tip"`
	Type  string `json:"type"`
}

// Event appends a user's event (a note, progress). A type git-atlas writes itself
// is refused: appending one by hand would make the ledger say something its state
// does not.
func (o *Ops) Event(ctx context.Context, req EventRequest) (*EventResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	typ, data := ledger.EventType(req.Type), req.Data
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		if req.Stage != "" {
			if _, _, ok := r.Stage(req.Stage); !ok {
				return nil, fault.NotFound("run %s has no stage %q", req.Run, req.Stage)
			}
		}
		return &gitstate.Change{Event: ledger.UserEvent(ledger.About{Stage: req.Stage, Holder: req.Driver.Holder}, typ, data)}, nil
	})
	if err != nil {
		return nil, err
	}
	return &EventResult{RunID: req.Run, Seq: r.State.Seq, Tip: r.Tip, Type: req.Type}, nil
}

// reservedEvent refuses an event type git-atlas writes itself (gitstate's catalogue):
// a bad argument, exit 2, like any other name `event` cannot take. The message names
// what writes it and what `event` accepts instead.
func reservedEvent(t ledger.EventType) error {
	if !t.Reserved() {
		return nil
	}
	info, _ := t.Info()
	var hint fault.Text
	switch writer := writerOf(info.Command); {
	case info.By&ledger.ByCommand != 0:
		hint = fault.Textf("use %s", writer)
	case info.By&ledger.ByResume != 0:
		hint = fault.Textf("`%s` writes it when it resumes the run", fault.Do("resume"))
	case info.By&ledger.ByHook != 0:
		hint = fault.Textf("the post-checkout hook (`%s`) writes it", fault.Do("hooks install"))
	default:
		hint = fault.Textf("%s writes it", writer)
	}
	return fault.Usage("event type %q is written by git-atlas itself; git atlas event accepts %s, or any other name but %s",
		t, ledger.JoinEvents(ledger.UserEvents()), ledger.JoinEvents(ledger.ReservedEvents())).WithHint("%s", hint)
}

// writerOf is the command a catalogue entry names as writing an event (its words,
// and a switch it sets as {field}: "union {verify}"), as a step for each front end
// to spell; a description ("any run write with {take_over}") stays words.
func writerOf(command string) fault.Text {
	words, field, switched := strings.Cut(command, " {")
	if strings.HasPrefix(command, "any ") || strings.Contains(field, " ") {
		return fault.Text{Format: escape(command)}
	}
	s := fault.Do(words)
	if switched {
		s = s.With(strings.TrimSuffix(field, "}"), true)
	}
	return fault.Textf("`%s`", s)
}

// FinishRequest is `finish RUN --status S`.
type FinishRequest struct {
	Run string `json:"run" help:"${finish_run}"`
	// Status is ledger.RunCompleted, RunStopped or RunFailed.
	Status string `json:"status" enum:"completed,stopped,failed" help:"${finish_status}"`
	Reason string `json:"reason,omitempty" help:"${finish_reason}"`
	// Force reaps the run's RUNNING jobs first (a completed or failed finish), in its
	// own recorded event.
	Force  bool   `json:"force,omitempty" help:"${finish_force}"`
	Driver Driver `wire:"inline"`
	// AcceptUnresolved finishes a graph run completed although its verdict is
	// unresolved: a person's step (StepAcceptUnresolved), recorded.
	AcceptUnresolved bool
	Person           Person
}

// FinishResult is the finished run and the jobs Force reaped.
type FinishResult struct {
	RunView
	Reaped []ReapedJob `json:"reaped"`
	// Verdict is a graph run's verdict on its criteria (none without criteria): the
	// final report says unverified or unresolved where it is.
	Verdict *ledger.Verdict `json:"verdict,omitempty"`
	// OutsideScope are the jobs the last union left out for changes outside their
	// scope, with the paths (docs/contract.md §5.3): the final report says so.
	OutsideScope map[string][]string `json:"outside_scope,omitempty"`
}

// Finish ends a run as the run machine allows. A graph run with RUNNING jobs is not
// finished completed or failed (their receipts would be refused forever) unless
// Force, which first gives each the timeout transition, recorded as job_reaped. A
// single run that completed itself is finished completed without a write.
func (o *Ops) Finish(ctx context.Context, req FinishRequest) (*FinishResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	reaped := []ReapedJob{}
	if req.Force && ledger.RunTerminal(req.Status) {
		_, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
			if err := ledger.CheckRunTransition(r.State.Status, req.Status); err != nil {
				return nil, err
			}
			if err := req.checkVerdict(r, &ledger.RunFinishedData{}); err != nil {
				return nil, err // before any job is reaped
			}
			reaped = ledger.ReapedJobs(ledger.ReapRunning(&r.Header, &r.State))
			if len(reaped) == 0 {
				return nil, nil
			}
			data := ledger.JobReapedData{Jobs: reaped, Reason: "forced finish"}
			return &gitstate.Change{Event: ledger.JobReapedEvent(ledger.About{}, data)}, nil
		})
		if err != nil {
			return nil, err
		}
	}
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		from := r.State.Status
		ev := ledger.RunFinishedData{From: from, Status: req.Status, Reason: req.Reason}
		if err := req.checkVerdict(r, &ev); err != nil {
			return nil, err
		}
		// docs/contract.md §5.3: the run_finished event keeps the verdict it finished with,
		// and the jobs its union left out for their scope.
		if v := ledger.RunVerdict(&r.Header, &r.State); v != nil && r.Header.Kind == ledger.KindGraph {
			ev.Verdict = v
		}
		if u := r.State.Union; u != nil && len(u.OutsideScope) > 0 {
			ev.OutsideScope = u.OutsideScope
		}
		if err := ledger.Finish(r, req.Status, req.Reason); errors.Is(err, ledger.ErrAlreadyFinished) {
			return nil, nil // a single run that completed itself: finish agrees, writes nothing
		} else if err != nil {
			return nil, err
		}
		return &gitstate.Change{Event: ledger.RunFinishedEvent(ledger.About{}, ev)}, nil
	})
	if err != nil {
		return nil, err
	}
	res := &FinishResult{RunView: RunViewOf(r, o.now()), Reaped: reaped}
	if r.Header.Kind == ledger.KindGraph {
		res.Verdict = ledger.RunVerdict(&r.Header, &r.State)
	}
	if u := r.State.Union; u != nil && len(u.OutsideScope) > 0 {
		res.OutsideScope = u.OutsideScope
	}
	if req.Person.Via != ViaCommandLine { // an agent's context (agenttext.go)
		o.agentText().finish(ctx, r, res)
	}
	return res, nil
}

// UndoRequest is `undo RUN --to SEQ`.
type UndoRequest struct {
	Run string
	// To is the event whose state to go back to.
	To     int
	Driver Driver
}

// UndoResult is what `undo` did.
type UndoResult struct {
	RunID string `json:"run_id"`
	*ledger.UndoResult
	Seq    int    `json:"seq"`
	Status string `json:"status"`
	Tip    string `json:"tip"`
}

// Undo appends one event whose state is event To's, made honest (ledger.Undo):
// epoch raised, nothing refunded. It needs a named driver.
func (o *Ops) Undo(ctx context.Context, req UndoRequest) (*UndoResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	past, err := store.LoadAt(ctx, req.Run, req.To)
	if err != nil {
		return nil, err
	}
	present := func(ref string) bool {
		sha, err := store.Repo.ReadRef(ctx, ref)
		return err == nil && sha != ""
	}
	var res *ledger.UndoResult
	r, err := store.Update(ctx, req.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		var err error
		if res, err = ledger.Undo(r, past, present); err != nil {
			return nil, err
		}
		return &gitstate.Change{Event: ledger.UndoneEvent(ledger.About{Holder: req.Driver.Holder}, res)}, nil
	})
	if err != nil {
		return nil, err
	}
	return &UndoResult{RunID: req.Run, UndoResult: res, Seq: r.State.Seq, Status: r.State.Status, Tip: r.Tip}, nil
}

// checkVerdict refuses to finish a graph run completed while its verdict is
// unresolved (docs/contract.md §5.3: a criterion no DONE job meets), unless a person accepts it
// (--accept-unresolved, StepAcceptUnresolved), which goes into the event ev.
func (req *FinishRequest) checkVerdict(r *ledger.Run, ev *ledger.RunFinishedData) error {
	v := ledger.RunVerdict(&r.Header, &r.State)
	if r.Header.Kind != ledger.KindGraph || req.Status != ledger.RunCompleted || ledger.RunTerminal(r.State.Status) || v == nil || v.Verdict != ledger.VerdictUnresolved {
		return nil
	}
	if !req.AcceptUnresolved {
		return fault.Refused("run %s's verdict is unresolved: no DONE job meets %s; nothing was written", req.Run, quoted(v.Unresolved)).
			WithHint("finish it failed, or a person accepts it: `%s` on a terminal or with {approved_by} NAME", fault.Do("finish", "run", req.Run, "status", ledger.RunCompleted, "accept_unresolved", true))
	}
	by, err := req.Person.approve(StepAcceptUnresolved)
	if err != nil {
		return err
	}
	ev.AcceptedUnresolved, ev.ApprovedBy = v.Unresolved, by
	return nil
}

// quoted is a list of criteria for a message, each in quotes.
func quoted(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func (req *TransitionRequest) verifyTimeout() time.Duration {
	if req.VerifyTimeout > 0 {
		return req.VerifyTimeout
	}
	return DefaultVerifyTimeout
}

// verifyPass runs the verify of a stage reported passed (docs/contract.md §5.2), once the report
// would be accepted (its token, the driver rule, an attempt under way), and outside
// the write: it may take minutes. nil with why when it is not run.
func (o *Ops) verifyPass(ctx context.Context, store *gitstate.Store, req TransitionRequest) (*ledger.VerifyResult, string, error) {
	r, err := store.Load(ctx, req.Run)
	if err != nil {
		return nil, "", err
	}
	_, st, ok := r.Stage(req.Stage)
	if !ok || ledger.OpenAttempt(st) == nil {
		return nil, "", nil // the write refuses it, with the valid targets
	}
	if err := ledger.CheckStageToken(r, req.Stage, req.Lease); err != nil {
		return nil, "", err
	}
	if _, err := ledger.ClaimDriver(r, store.Writer.SawDriver(r, store.Now()), store.Now()); err != nil {
		return nil, "", err
	}
	return resume.VerifyForPass(ctx, o.Repo, r, req.Stage, req.verifyTimeout(), o.resumeOps(ctx, store, SnapshotOptions{}), o.now())
}
