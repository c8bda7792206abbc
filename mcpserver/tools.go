package mcpserver

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// The tools, one per user operation. Adding one is one line here and, when it takes
// arguments, one input struct below and its request: a field's JSON name is the
// request's field as errors name it (the CLI flag with - as _), its jsonschema tag the
// description an agent reads, omitempty makes it optional, and `enum:"a,b"` lists its
// values. Each tool decodes its input, builds the operation's request and calls it
// (the request's Check fills the defaults and refuses what the operation cannot do);
// its output schema is generated from the operation's result type. (A function, not a
// variable: every git-atlas command links this package, and only `git atlas mcp`
// needs the table.)
func tools() []spec {
	return []spec{
		tool("start", "Start a run (single: stages; graph: a DAG of jobs): pin its baseline and freeze its header.", func(c *call, in *StartInput) (*ops.StartResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			setupTimeout, err := c.duration("setup_timeout", in.SetupTimeout)
			if err != nil {
				return nil, err
			}
			if in.Session != "" {
				d.Session = in.Session
			}
			return c.ops.Start(c.ctx, ops.StartRequest{ID: in.ID, Intent: in.Intent, Criteria: in.Criterion, Verify: in.Verify, VerifySafe: in.VerifySafe,
				Scope: in.Scope, Baseline: in.Baseline, Pipeline: c.path(in.Pipeline), StageList: in.Stages, Graph: in.Graph, Gas: in.Gas,
				MaxAttempts: in.MaxAttempts, MaxJobs: in.MaxJobs, MaxDepth: in.MaxDepth, ConfigFiles: c.paths(in.Config), Driver: d,
				ManagedBy: in.ManagedBy, ResumeWith: in.ResumeWith, DispatchOnly: in.DispatchOnly,
				Setup: in.Setup, SetupTimeout: setupTimeout, Ports: in.Ports})
		}),
		tool("list", "List runs (default: not finished) with status, driver and liveness.", func(c *call, in *ListInput) (*ops.ListResult, error) {
			return c.ops.List(c.ctx, ops.ListRequest{All: in.All, ForAgent: true})
		}),
		tool("show", "Show a run's header, state and stages (or its state right after event `at`).", func(c *call, in *ShowInput) (*ops.ShowResult, error) {
			return c.ops.Show(c.ctx, ops.ShowRequest{Run: in.Run, At: in.At, ForAgent: true})
		}),
		tool("log", "Show a run's events, oldest first, optionally filtered by type or stage.", func(c *call, in *LogInput) (*ops.LogResult, error) {
			return c.ops.Log(c.ctx, ops.LogRequest{Run: in.Run, Type: in.Type, Stage: in.Stage, Last: in.Last, ForAgent: true})
		}),
		tool("transition", "Move a stage of a single run to a new status (dispatched opens an attempt).", func(c *call, in *TransitionInput) (*ops.TransitionResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			return c.ops.Transition(c.ctx, ops.TransitionRequest{Run: in.Run, Stage: in.Stage, Status: in.Status, Reason: in.Reason, Lease: in.Lease,
				ThreadID: in.ThreadID, Agent: in.Agent, PID: in.PID, Driver: d, Person: c.person(), ForAgent: true})
		}),
		tool("heartbeat", "Renew your driver lease and, with a stage, its open attempt's heartbeat, in one write.", func(c *call, in *HeartbeatInput) (*ops.HeartbeatResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			return c.ops.Heartbeat(c.ctx, ops.HeartbeatRequest{Run: in.Run, Stage: in.Stage, Lease: in.Lease, Driver: d})
		}),
		tool("event", "Append an event (a note, a stage_resumed, ...) with optional data to a run.", func(c *call, in *EventInput) (*ops.EventResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			data, err := jsonOf("data", in.Data)
			if err != nil {
				return nil, err
			}
			return c.ops.Event(c.ctx, ops.EventRequest{Run: in.Run, Type: in.Type, Stage: in.Stage, Data: data, Driver: d})
		}),
		tool("finish", "Finish a run: completed, stopped or failed.", func(c *call, in *FinishInput) (*ops.FinishResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			return c.ops.Finish(c.ctx, ops.FinishRequest{Run: in.Run, Status: in.Status, Reason: in.Reason, Force: in.Force, Driver: d, Person: c.person()})
		}),
		tool("job_add", "Add a job (with dependencies, scope, verify) to a graph run.", func(c *call, in *JobAddInput) (*ops.JobAddResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			return c.ops.JobAdd(c.ctx, ops.JobAddRequest{Run: in.Run, Job: in.Job, Needs: in.Needs, Scope: in.Scope, Verify: in.Verify, Kind: in.Kind,
				Criteria: in.Criterion, AllowOverlap: in.AllowOverlap, Driver: d})
		}),
		tool("job_claim", "Claim the next ready job of a graph run (or a named one) and get its lease token.", func(c *call, in *JobClaimInput) (*ops.JobClaimResult, error) {
			w, err := c.worker(in.WorkerInput)
			if err != nil {
				return nil, err
			}
			return c.ops.JobClaim(c.ctx, ops.JobClaimRequest{Run: in.Run, Job: in.Job, Worker: w, Agent: in.Agent, ThreadID: in.ThreadID, ForAgent: true})
		}),
		tool("job_renew", "Extend a claimed job's lease; the token must be the current one.", func(c *call, in *JobRenewInput) (*ops.JobRenewResult, error) {
			w, err := c.worker(in.WorkerInput)
			if err != nil {
				return nil, err
			}
			return c.ops.JobRenew(c.ctx, ops.JobRenewRequest{Run: in.Run, Job: in.Job, Lease: in.Lease, Worker: w})
		}),
		tool("job_done", "Report a claimed job's receipt (ok, timeout or failed) with its lease token.", func(c *call, in *JobDoneInput) (*ops.JobDoneResult, error) {
			w, err := c.worker(in.WorkerInput)
			if err != nil {
				return nil, err
			}
			timeout, err := c.duration("verify_timeout", in.VerifyTimeout)
			if err != nil {
				return nil, err
			}
			data, err := jsonOf("data", in.Data)
			if err != nil {
				return nil, err
			}
			req := ops.JobDoneRequest{Run: in.Run, Job: in.Job, Lease: in.Lease, Status: in.Status, Data: data, VerifyTimeout: timeout, Worker: w, ForAgent: true}
			if in.Children != nil {
				b, err := jsonOf("children", in.Children)
				if err != nil {
					return nil, err
				}
				if req.Children, err = ops.ParseChildren(b); err != nil {
					return nil, err
				}
			}
			return c.ops.JobDone(c.ctx, req)
		}),
		tool("job_list", "List a graph run's jobs, the ready ones and the gas left.", func(c *call, in *JobListInput) (*ops.JobListResult, error) {
			return c.ops.JobList(c.ctx, ops.JobListRequest{Run: in.Run, Ready: in.Ready, ForAgent: true})
		}),
		tool("reap", "Return a graph run's expired job leases (each takes the timeout transition).", func(c *call, in *ReapInput) (*ops.ReapResult, error) {
			return c.ops.Reap(c.ctx, ops.ReapRequest{Run: in.Run, Holder: in.Holder})
		}),
		tool("worktree_add", "Give a stage or job its managed worktree (locked, on its own branch); returns its path.", func(c *call, in *WorktreeAddInput) (*ops.WorktreeAddResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			return c.ops.WorktreeAdd(c.ctx, ops.WorktreeAddRequest{Run: in.Run, Node: in.Node, Baseline: in.Baseline, Lease: in.Lease, Driver: d})
		}),
		tool("worktree_list", "List managed worktrees: branch, HEAD, commits ahead, dirty or missing.", func(c *call, in *WorktreeListInput) (*ops.WorktreeListResult, error) {
			return c.ops.WorktreeList(c.ctx, ops.WorktreeListRequest{Run: in.Run, ForAgent: true})
		}),
		tool("worktree_remove", "Remove a managed worktree, snapshotting it first when anything could be lost.", func(c *call, in *WorktreeRemoveInput) (*ops.WorktreeRemoveResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			snap, err := c.snapshot(in.SnapshotInput)
			if err != nil {
				return nil, err
			}
			return c.ops.WorktreeRemove(c.ctx, ops.WorktreeRemoveRequest{Run: in.Run, Node: in.Node, Snapshot: snap, Driver: d})
		}),
		tool("union", "Build a run's union of its nodes' branches in its own worktree (optionally verify it).", func(c *call, in *UnionInput) (*ops.UnionResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			timeout, err := c.duration("verify_timeout", in.VerifyTimeout)
			if err != nil {
				return nil, err
			}
			return c.ops.Union(c.ctx, ops.UnionRequest{Run: in.Run, Nodes: in.Nodes, Force: in.Force, Verify: in.Verify, VerifyTimeout: timeout,
				Driver: d, Person: c.person(), ForAgent: true})
		}),
		tool("resume_detect", "List interrupted runs that could be resumed; changes nothing.", func(c *call, in *ResumeDetectInput) (*ops.ResumeDetectResult, error) {
			return c.ops.ResumeDetect(c.ctx, ops.ResumeDetectRequest{Session: c.session(in.Session)})
		}),
		tool("resume_plan", "Print a run's resume plan and next_action; changes nothing.", func(c *call, in *ResumePlanInput) (*ops.Plan, error) {
			snap, err := c.snapshot(in.SnapshotInput)
			if err != nil {
				return nil, err
			}
			return c.ops.ResumePlan(c.ctx, ops.ResumeRequest{RunID: in.Run, Session: c.session(in.Session), Snapshot: snap, ForAgent: true})
		}),
		tool("resume", "Resume an interrupted run: snapshot and reset, verify first, and return next_action.", func(c *call, in *ResumeInput) (*ops.Result, error) {
			snap, err := c.snapshot(in.SnapshotInput)
			if err != nil {
				return nil, err
			}
			ttl, err := c.duration("ttl", in.TTL)
			if err != nil {
				return nil, err
			}
			timeout, err := c.duration("verify_timeout", in.VerifyTimeout)
			if err != nil {
				return nil, err
			}
			return c.ops.Resume(c.ctx, ops.ResumeRequest{RunID: in.Run, Session: c.session(in.Session), TakeOver: in.TakeOver, Holder: in.Holder, TTL: ttl,
				NoVerify: in.NoVerify, VerifyTimeout: timeout, OnVerifyFail: in.OnVerifyFail, Snapshot: snap, ForAgent: true})
		}),
		tool("recover", "Preserve a stage's work in a snapshot and branch a replay at its baseline.", func(c *call, in *RecoverInput) (*ops.RecoverResult, error) {
			d, err := c.driver(in.DriverInput)
			if err != nil {
				return nil, err
			}
			snap, err := c.snapshot(in.SnapshotInput)
			if err != nil {
				return nil, err
			}
			return c.ops.Recover(c.ctx, ops.RecoverRequest{Run: in.Run, Stage: in.Stage, Node: in.Node, Worktree: in.Worktree, Apply: in.Apply,
				PatchOut: in.PatchOut, Force: in.Force, Snapshot: snap, Driver: d})
		}),
		tool("recovery_list", "List recovery snapshots (all, or one run's).", func(c *call, in *RecoveryListInput) (*ops.RecoveryListResult, error) {
			return c.ops.RecoveryList(c.ctx, ops.RecoveryListRequest{Run: in.Run, ForAgent: true})
		}),
		tool("recovery_show", "Show what a recovery snapshot holds: files changed, staged, unstaged, ignored.", func(c *call, in *RecoveryShowInput) (*ops.RecoveryShowResult, error) {
			return c.ops.RecoveryShow(c.ctx, ops.RecoveryShowRequest{Snapshot: in.Snapshot, ForAgent: true})
		}),
		tool("recovery_restore", "Restore a recovery snapshot into a new directory or worktree.", func(c *call, in *RecoveryRestoreInput) (*ops.RecoveryRestoreResult, error) {
			return c.ops.RecoveryRestore(c.ctx, ops.RecoveryRestoreRequest{Snapshot: in.Snapshot, To: in.To, Worktree: in.Worktree})
		}),
		tool("audit", "Classify every worktree, atlas branch and ref; attention is true when something needs it.", func(c *call, in *AuditInput) (*ops.AuditResult, error) {
			return c.ops.Audit(c.ctx, ops.AuditRequest{Size: in.Size, ForAgent: true})
		}, 10),
	}
}

// driver is the driver the input names, its session the server's when it names none.
func (c *call) driver(in DriverInput) (ops.Driver, error) {
	ttl, err := c.duration("ttl", in.TTL)
	return ops.Driver{Holder: in.Holder, Session: c.session(in.Session), TakeOver: in.TakeOver, TTL: ttl}, err
}

// worker is the job-lease worker the input names.
func (c *call) worker(in WorkerInput) (ops.Worker, error) {
	ttl, err := c.duration("ttl", in.TTL)
	return ops.Worker{Holder: in.Holder, TTL: ttl}, err
}

// snapshot is the snapshot options the input names.
func (c *call) snapshot(in SnapshotInput) (ops.SnapshotOptions, error) {
	opt := ops.SnapshotOptions{IncludeIgnored: in.IncludeIgnored}
	if in.IgnoredCap != "" {
		n, err := ops.ParseSize(in.IgnoredCap)
		if err != nil || n <= 0 {
			return opt, fault.Named(fault.ErrUsage, "{ignored_cap} must be a positive size such as 500KiB or 100MiB (got %q)", in.IgnoredCap)
		}
		opt.IgnoredCap = n
	}
	return opt, nil
}

// session is s, else the server's own session (ATLAS_SESSION), as the command line
// defaults it.
func (c *call) session(s string) string {
	if s != "" {
		return s
	}
	return c.defaultSession
}

// person is who stands behind a call through MCP: nobody a person's step could name
// (ops.PersonOnlySteps are refused).
func (c *call) person() ops.Person { return ops.Person{Via: ops.ViaMCP} }

// duration reads a duration field ("" is the request's default); given, it must be
// positive, as on the command line.
func (c *call) duration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fault.Named(fault.ErrUsage, "{"+field+"} must be a duration such as 10m or 90s (got %q)", s)
	}
	if d <= 0 {
		return 0, fault.Named(fault.ErrUsage, "{"+field+"} must be a positive duration (got %s)", d)
	}
	return d, nil
}

// path is a file path of the input: a relative one is relative to the repository.
func (c *call) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

func (c *call) paths(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = c.path(p)
	}
	return out
}

// jsonOf is a JSON value of the input as the request carries it (nil: none).
func jsonOf(field string, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fault.Named(fault.ErrUsage, "{"+field+"}: %s", strings.TrimSpace(err.Error()))
	}
	if string(b) == "null" {
		return nil, nil
	}
	return b, nil
}

// DriverInput are the driver-lease arguments of run writes (docs/contract.md §5.1).
// Its descriptions, as those of WorkerInput and SnapshotInput, are the command line's
// help of the same fields (help:"key": ops.FieldHelp).
type DriverInput struct {
	Holder   string `json:"holder,omitempty" help:"driver_holder"`
	Session  string `json:"session,omitempty" help:"driver_session"`
	TakeOver bool   `json:"take_over,omitempty" help:"driver_take_over"`
	TTL      string `json:"ttl,omitempty" help:"driver_ttl"`
}

// WorkerInput are a worker's job-lease arguments: they never touch the driver lease.
type WorkerInput struct {
	Holder string `json:"holder,omitempty" help:"worker_holder"`
	TTL    string `json:"ttl,omitempty" help:"worker_ttl"`
}

// SnapshotInput are the snapshot arguments of commands that preserve a worktree.
type SnapshotInput struct {
	IncludeIgnored bool   `json:"include_ignored,omitempty" help:"snapshot_include_ignored"`
	IgnoredCap     string `json:"ignored_cap,omitempty" help:"snapshot_ignored_cap"`
}

// StartInput is start's input.
type StartInput struct {
	ID          string   `json:"id,omitempty" jsonschema:"the run id (default: time-sortable and unique)"`
	Intent      string   `json:"intent,omitempty" jsonschema:"what the run is for; frozen"`
	Criterion   []string `json:"criterion,omitempty" jsonschema:"success criteria; frozen"`
	Verify      string   `json:"verify,omitempty" jsonschema:"verify command of every stage that names none"`
	VerifySafe  bool     `json:"verify_safe,omitempty" jsonschema:"the verify command is safe to run unattended (resume runs it)"`
	Scope       []string `json:"scope,omitempty" jsonschema:"path globs the run may touch"`
	Baseline    string   `json:"baseline,omitempty" jsonschema:"the commit the run starts from (default HEAD)"`
	Stages      string   `json:"stages,omitempty" jsonschema:"stage names, comma-separated (single runs)"`
	Pipeline    string   `json:"pipeline,omitempty" atlas:"path" jsonschema:"pipeline file, JSON or YAML, relative to the repository"`
	Graph       bool     `json:"graph,omitempty" jsonschema:"a graph run: a DAG of jobs"`
	Gas         int      `json:"gas,omitempty" jsonschema:"graph runs: total claims allowed"`
	MaxAttempts int      `json:"max_attempts,omitempty" jsonschema:"graph runs: attempts per job before it fails (default 2)"`
	MaxJobs     int      `json:"max_jobs,omitempty" jsonschema:"graph runs: most jobs the run may hold (default 200)"`
	MaxDepth    int      `json:"max_depth,omitempty" jsonschema:"graph runs: longest chain of job_done children expansions (default 8)"`
	Session     string   `json:"session,omitempty" jsonschema:"the agent session that owns the run (resume prefers it); always pass it"`
	Config      []string `json:"config,omitempty" atlas:"path" jsonschema:"config files whose hashes are frozen for drift checks, relative to the repository"`
	// docs/contract.md §5.4: a run another engine owns, as start's flags make it.
	ManagedBy    string `json:"managed_by,omitempty" jsonschema:"another engine owns this run's resumption: resume hands it back to this name (pipeline mode managed)"`
	ResumeWith   string `json:"resume_with,omitempty" jsonschema:"with managed_by: the owner's resume command, shown as a command only where it is trusted"`
	DispatchOnly bool   `json:"dispatch_only,omitempty" jsonschema:"the run has no pipeline to resume: resume says so and changes nothing (pipeline mode dispatch-only)"`
	// docs/contract.md §15: worktree life.
	Setup        string `json:"setup,omitempty" jsonschema:"a command run in each new worktree of the run (with ATLAS_RUN, ATLAS_NODE, ATLAS_WORKTREE, ATLAS_PORT, ATLAS_PORTS), trusted like verify"`
	SetupTimeout string `json:"setup_timeout,omitempty" jsonschema:"time limit of setup, e.g. 10m (the default)"`
	Ports        int    `json:"ports,omitempty" jsonschema:"give every node a block of this many ports from atlas.portRange, unique among live nodes"`
	DriverInput
}

// ListInput is list's input.
type ListInput struct {
	All bool `json:"all,omitempty" jsonschema:"include finished runs"`
}

// ShowInput is show's input.
type ShowInput struct {
	Run string `json:"run" atlas:"arg" jsonschema:"the run id"`
	At  *int   `json:"at,omitempty" jsonschema:"the state right after this event seq (see log)"`
}

// LogInput is log's input.
type LogInput struct {
	Run   string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Type  string `json:"type,omitempty" jsonschema:"only events of this type"`
	Stage string `json:"stage,omitempty" jsonschema:"only events about this stage"`
	Last  int    `json:"last,omitempty" jsonschema:"only the last N events"`
}

// TransitionInput is transition's input.
type TransitionInput struct {
	Run      string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Stage    string `json:"stage" atlas:"arg" jsonschema:"the stage"`
	Status   string `json:"status" atlas:"arg" enum:"pending,dispatched,verifying,passed,gated,completed,rejected,failed,rework,skipped" jsonschema:"the new status"`
	Reason   string `json:"reason,omitempty" jsonschema:"why"`
	Lease    string `json:"lease,omitempty" jsonschema:"the stage token the dispatch returned: a stale one is refused (conflict) and changes nothing"`
	ThreadID string `json:"thread_id,omitempty" jsonschema:"with dispatched: the agent runtime's conversation id, so resume can continue it"`
	Agent    string `json:"agent,omitempty" enum:"claude,codex,kimi" jsonschema:"with dispatched: the agent whose conversation thread_id is, so next_action gives its own command to continue it"`
	PID      int    `json:"pid,omitempty" jsonschema:"with dispatched: the pid of the agent working the attempt (resume waits while it lives)"`
	DriverInput
}

// HeartbeatInput is heartbeat's input.
type HeartbeatInput struct {
	Run   string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Stage string `json:"stage,omitempty" jsonschema:"also the heartbeat of this stage's open attempt"`
	Lease string `json:"lease,omitempty" jsonschema:"with stage: the attempt's stage token"`
	DriverInput
}

// EventInput is event's input.
type EventInput struct {
	Run   string         `json:"run" atlas:"arg" jsonschema:"the run id"`
	Type  string         `json:"type" atlas:"arg" jsonschema:"the event type, e.g. note or stage_resumed"`
	Stage string         `json:"stage,omitempty" jsonschema:"the stage it is about"`
	Data  map[string]any `json:"data,omitempty" jsonschema:"details, a JSON object"`
	DriverInput
}

// FinishInput is finish's input.
type FinishInput struct {
	Run    string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Status string `json:"status" enum:"completed,stopped,failed" jsonschema:"completed, stopped or failed"`
	Reason string `json:"reason,omitempty" jsonschema:"why"`
	Force  bool   `json:"force,omitempty" jsonschema:"reap the run's running jobs first"`
	DriverInput
}

// JobAddInput is job_add's input.
type JobAddInput struct {
	Run          string   `json:"run" atlas:"arg" jsonschema:"the graph run id"`
	Job          string   `json:"job" atlas:"arg" jsonschema:"the job id (unique in the run)"`
	Needs        []string `json:"needs,omitempty" jsonschema:"jobs that must be DONE first"`
	Scope        []string `json:"scope,omitempty" jsonschema:"path globs the job may touch"`
	Verify       string   `json:"verify,omitempty" jsonschema:"the job's verify command"`
	Kind         string   `json:"kind,omitempty" jsonschema:"a label for the kind of work, e.g. code or review"`
	Criterion    []string `json:"criterion,omitempty" jsonschema:"run criteria this job meets"`
	AllowOverlap bool     `json:"allow_overlap,omitempty" jsonschema:"accept a scope that overlaps another job's"`
	DriverInput
}

// JobClaimInput is job_claim's input.
type JobClaimInput struct {
	Run      string `json:"run" atlas:"arg" jsonschema:"the graph run id"`
	Job      string `json:"job,omitempty" jsonschema:"claim this job rather than the next ready one"`
	Agent    string `json:"agent,omitempty" enum:"claude,codex,kimi" jsonschema:"the agent working the job, recorded on it"`
	ThreadID string `json:"thread_id,omitempty" jsonschema:"the agent's own session or thread id for the job, recorded on it"`
	WorkerInput
}

// JobRenewInput is job_renew's input.
type JobRenewInput struct {
	Run   string `json:"run" atlas:"arg" jsonschema:"the graph run id"`
	Job   string `json:"job" atlas:"arg" jsonschema:"the job"`
	Lease string `json:"lease" jsonschema:"the job's current lease token"`
	WorkerInput
}

// JobDoneInput is job_done's input.
type JobDoneInput struct {
	Run           string           `json:"run" atlas:"arg" jsonschema:"the graph run id"`
	Job           string           `json:"job" atlas:"arg" jsonschema:"the job"`
	Lease         string           `json:"lease" jsonschema:"the lease token the claim returned"`
	Status        string           `json:"status" enum:"ok,timeout,failed" jsonschema:"ok, timeout or failed"`
	Data          map[string]any   `json:"data,omitempty" jsonschema:"a JSON object kept as the job's result"`
	Children      []map[string]any `json:"children,omitempty" atlas:"file" jsonschema:"with status ok: child jobs (job_add's shape: id, needs, scope, verify, criterion, kind) added in the same write"`
	VerifyTimeout string           `json:"verify_timeout,omitempty" jsonschema:"time limit of the job's verify, a duration (default 10m)"`
	WorkerInput
}

// JobListInput is job_list's input.
type JobListInput struct {
	Run   string `json:"run" atlas:"arg" jsonschema:"the graph run id"`
	Ready bool   `json:"ready,omitempty" jsonschema:"only the jobs a claim could take now"`
}

// ReapInput is reap's input.
type ReapInput struct {
	Run    string `json:"run" atlas:"arg" jsonschema:"the graph run id"`
	Holder string `json:"holder,omitempty" jsonschema:"who reaps (recorded); reaping never takes the driver lease"`
}

// WorktreeAddInput is worktree_add's input.
type WorktreeAddInput struct {
	Run      string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Node     string `json:"node" atlas:"arg" jsonschema:"the node: a stage or job name (union is reserved)"`
	Baseline string `json:"baseline,omitempty" jsonschema:"the commit the node starts from (default: the run's baseline)"`
	Lease    string `json:"lease,omitempty" jsonschema:"graph runs: your lease token on the node's job"`
	DriverInput
}

// WorktreeListInput is worktree_list's input.
type WorktreeListInput struct {
	Run string `json:"run,omitempty" atlas:"arg" jsonschema:"only this run's worktrees"`
}

// WorktreeRemoveInput is worktree_remove's input.
type WorktreeRemoveInput struct {
	Run  string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Node string `json:"node" atlas:"arg" jsonschema:"the node whose worktree to remove"`
	SnapshotInput
	DriverInput
}

// UnionInput is union's input.
type UnionInput struct {
	Run           string   `json:"run" atlas:"arg" jsonschema:"the run id"`
	Nodes         []string `json:"nodes,omitempty" jsonschema:"integrate these nodes, in this order (default: the done nodes in dependency order)"`
	Force         bool     `json:"force,omitempty" jsonschema:"move the union branch even if someone committed on it (that commit is kept under a recovery ref, named in the result's kept)"`
	Verify        bool     `json:"verify,omitempty" jsonschema:"run the run's verify command in the union worktree"`
	VerifyTimeout string   `json:"verify_timeout,omitempty" jsonschema:"time limit of verify, a duration (default 10m)"`
	DriverInput
}

// ResumeDetectInput is resume_detect's input.
type ResumeDetectInput struct {
	Session string `json:"session,omitempty" jsonschema:"prefer this session's run"`
}

// ResumePlanInput is resume_plan's input.
type ResumePlanInput struct {
	Run     string `json:"run,omitempty" atlas:"arg" jsonschema:"the run (default: this session's, else the newest interrupted)"`
	Session string `json:"session,omitempty" jsonschema:"prefer this session's run"`
	SnapshotInput
}

// ResumeInput is resume's input.
type ResumeInput struct {
	Run           string `json:"run,omitempty" atlas:"arg" jsonschema:"the run (default: this session's, else the newest interrupted)"`
	Session       string `json:"session,omitempty" jsonschema:"prefer this session's run"`
	NoVerify      bool   `json:"no_verify,omitempty" jsonschema:"do not run the interrupted stage's verify command"`
	VerifyTimeout string `json:"verify_timeout,omitempty" jsonschema:"kill the verify command after this long, a duration (default 10m)"`
	OnVerifyFail  string `json:"on_verify_fail,omitempty" enum:"fail,redispatch,replay,stop" jsonschema:"what to do when verify fails (default fail)"`
	TakeOver      bool   `json:"take_over,omitempty" jsonschema:"resume a run another live driver holds, taking its driver lease (needs holder)"`
	Holder        string `json:"holder,omitempty" jsonschema:"with take_over: the new driver"`
	TTL           string `json:"ttl,omitempty" jsonschema:"with take_over: how long the new driver lease lasts (default 10m)"`
	SnapshotInput
}

// RecoverInput is recover's input.
type RecoverInput struct {
	Run      string `json:"run" atlas:"arg" jsonschema:"the run id"`
	Stage    string `json:"stage" jsonschema:"the stage to preserve and replay"`
	Node     string `json:"node,omitempty" jsonschema:"the worktree's node (default: the stage's name)"`
	Worktree bool   `json:"worktree,omitempty" jsonschema:"make a managed worktree on the replay branch"`
	Apply    bool   `json:"apply,omitempty" jsonschema:"put the snapshot into the replay worktree (implies worktree)"`
	PatchOut string `json:"patch_out,omitempty" atlas:"path,abs" jsonschema:"write the patch to this absolute path, outside every working tree (not over an existing file unless force)"`
	Force    bool   `json:"force,omitempty" jsonschema:"let patch_out replace an existing file"`
	SnapshotInput
	DriverInput
}

// RecoveryListInput is recovery_list's input.
type RecoveryListInput struct {
	Run string `json:"run,omitempty" atlas:"arg" jsonschema:"only this run's snapshots"`
}

// RecoveryShowInput is recovery_show's input.
type RecoveryShowInput struct {
	Snapshot string `json:"snapshot" atlas:"arg" jsonschema:"the snapshot: <id> or <run>/<id>"`
}

// RecoveryRestoreInput is recovery_restore's input.
type RecoveryRestoreInput struct {
	Snapshot string `json:"snapshot" atlas:"arg" jsonschema:"the snapshot: <id> or <run>/<id>"`
	To       string `json:"to" atlas:"path,abs" jsonschema:"a new (or empty) directory to restore into: an absolute path, outside every working tree of the repository"`
	Worktree bool   `json:"worktree,omitempty" jsonschema:"make it a git worktree detached at the snapshot's HEAD"`
}

// AuditInput is audit's input.
type AuditInput struct {
	Size bool `json:"size,omitempty" jsonschema:"measure each recovery snapshot's disk usage"`
}
