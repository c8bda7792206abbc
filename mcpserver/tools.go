package mcpserver

import "github.com/google/jsonschema-go/jsonschema"

// The tools, one per user operation. Adding one is one line here and, when it takes
// arguments, one input struct below: a field's JSON name is the CLI flag with - as _
// (`atlas:"arg"` marks a positional argument, `atlas:"path"` a file path relative to
// the repository, `atlas:"path,abs"` one that must be absolute), its jsonschema tag the description an agent reads, omitempty makes
// it optional, and `enum:"a,b"` lists its values. (A function, not a variable: every
// git-atlas command links this package, and only `git atlas mcp` needs the table.)
func tools() []spec {
	return []spec{
		tool[StartInput]("start", "Start a run (single: stages; graph: a DAG of jobs): pin its baseline and freeze its header.", w("start"), runSchema()),
		tool[ListInput]("list", "List runs (default: not finished) with status, driver and liveness.", w("list"), object([]string{"runs"}, props{"runs": array(runRow())})),
		tool[ShowInput]("show", "Show a run's header, state and stages (or its state right after event `at`).", w("show"), showSchema()),
		tool[LogInput]("log", "Show a run's events, oldest first, optionally filtered by type or stage.", w("log"), object([]string{"run_id", "events"}, props{"run_id": str(), "events": array(object([]string{"seq", "type"}, props{"seq": integer(), "type": str()}))})),
		tool[TransitionInput]("transition", "Move a stage of a single run to a new status (dispatched opens an attempt).", w("transition"), object([]string{"run_id", "stage"}, props{"run_id": str(), "stage": object([]string{"name", "status"}, props{"name": str(), "status": str()})})),
		tool[HeartbeatInput]("heartbeat", "Renew your driver lease and, with a stage, its open attempt's heartbeat, in one write.", w("heartbeat"), object([]string{"run_id", "driver"}, props{"run_id": str(), "driver": anything()})),
		tool[EventInput]("event", "Append an event (a note, a stage_resumed, ...) with optional data to a run.", w("event"), object([]string{"run_id", "seq", "type"}, props{"run_id": str(), "seq": integer(), "type": str(), "tip": str()})),
		tool[FinishInput]("finish", "Finish a run: completed, stopped or failed.", w("finish"), runSchema()),
		tool[JobAddInput]("job_add", "Add a job (with dependencies, scope, verify) to a graph run.", w("job", "add"), object([]string{"run_id", "job"}, props{"run_id": str(), "job": jobSchema()})),
		tool[JobClaimInput]("job_claim", "Claim the next ready job of a graph run (or a named one) and get its lease token.", w("job", "claim"), claimSchema()),
		tool[JobRenewInput]("job_renew", "Extend a claimed job's lease; the token must be the current one.", w("job", "renew"), object([]string{"run_id", "job", "lease", "expires_at"}, props{"run_id": str(), "job": jobSchema(), "lease": str(), "expires_at": str()})),
		tool[JobDoneInput]("job_done", "Report a claimed job's receipt (ok, timeout or failed) with its lease token.", w("job", "done"), object([]string{"run_id", "job", "status", "from", "to"}, props{"run_id": str(), "job": jobSchema(), "status": str(), "from": str(), "to": str()})),
		tool[JobListInput]("job_list", "List a graph run's jobs, the ready ones and the gas left.", w("job", "list"), object([]string{"run_id", "jobs"}, props{"run_id": str(), "jobs": array(jobSchema()), "ready": nullable(array(str())), "gas_remaining": integer()})),
		tool[ReapInput]("reap", "Return a graph run's expired job leases (each takes the timeout transition).", w("reap"), object([]string{"run_id", "reaped"}, props{"run_id": str(), "reaped": array(anything())})),
		tool[WorktreeAddInput]("worktree_add", "Give a stage or job its managed worktree (locked, on its own branch); returns its path.", w("worktree", "add"), worktreeSchema()),
		tool[WorktreeListInput]("worktree_list", "List managed worktrees: branch, HEAD, commits ahead, dirty or missing.", w("worktree", "list"), object([]string{"worktrees"}, props{"worktrees": array(worktreeRow())})),
		tool[WorktreeRemoveInput]("worktree_remove", "Remove a managed worktree, snapshotting it first when anything could be lost.", w("worktree", "remove"), object([]string{"run_id", "node", "removed"}, props{"run_id": str(), "node": str(), "removed": boolean(), "snapshot": nullable(anything())})),
		tool[UnionInput]("union", "Build a run's union of its nodes' branches in its own worktree (optionally verify it).", w("union"), object([]string{"run_id", "head", "branch", "path", "integrated"}, props{"run_id": str(), "head": str(), "branch": str(), "path": str(), "integrated": array(str())})),
		tool[ResumeDetectInput]("resume_detect", "List interrupted runs that could be resumed; changes nothing.", w("resume", "--detect"), object([]string{"resumable_runs"}, props{"resumable_runs": array(object([]string{"run_id"}, props{"run_id": str()}))})),
		tool[ResumePlanInput]("resume_plan", "Print a run's resume plan and next_action; changes nothing.", w("resume", "--plan"), planSchema(false)),
		tool[ResumeInput]("resume", "Resume an interrupted run: snapshot and reset, verify first, and return next_action.", w("resume"), planSchema(true)),
		tool[RecoverInput]("recover", "Preserve a stage's work in a snapshot and branch a replay at its baseline.", w("recover"), object([]string{"run_id", "stage", "snapshot"}, props{"run_id": str(), "stage": str(), "snapshot": anything()})),
		tool[RecoveryListInput]("recovery_list", "List recovery snapshots (all, or one run's).", w("recovery", "list"), object([]string{"snapshots"}, props{"snapshots": array(snapshotRow())})),
		tool[RecoveryShowInput]("recovery_show", "Show what a recovery snapshot holds: files changed, staged, unstaged, ignored.", w("recovery", "show"), object([]string{"id", "run_id", "ref"}, props{"id": str(), "run_id": str(), "ref": str(), "changes": nullable(array(anything()))})),
		tool[RecoveryRestoreInput]("recovery_restore", "Restore a recovery snapshot into a new directory or worktree.", w("recovery", "restore"), object([]string{"snapshot", "run_id", "path"}, props{"snapshot": str(), "run_id": str(), "path": str(), "worktree": boolean()})),
		tool[AuditInput]("audit", "Classify every worktree, atlas branch and ref; attention is true when something needs it.", w("audit"), object([]string{"attention", "worktrees", "refs"}, props{"attention": boolean(), "worktrees": array(anything()), "refs": array(anything())}), 10),
	}
}

func w(words ...string) []string { return words }

// DriverInput are the driver-lease arguments of run writes (docs/contract.md §5.1).
type DriverInput struct {
	Holder   string `json:"holder,omitempty" jsonschema:"who is driving the run (takes or renews the run's driver lease); always pass it"`
	Session  string `json:"session,omitempty" jsonschema:"your agent session id: a restarted or compacted session with the same id takes its run back at once"`
	TakeOver bool   `json:"take_over,omitempty" jsonschema:"replace another live driver (recorded as driver_taken_over)"`
	TTL      string `json:"ttl,omitempty" jsonschema:"how long the driver lease lasts, a duration such as 10m or 90s (default 10m)"`
}

// WorkerInput are a worker's job-lease arguments: they never touch the driver lease.
type WorkerInput struct {
	Holder string `json:"holder,omitempty" jsonschema:"the worker holding the job's lease (recorded)"`
	TTL    string `json:"ttl,omitempty" jsonschema:"how long the job lease lasts, a duration such as 10m or 90s (default 10m)"`
}

// SnapshotInput are the snapshot arguments of commands that preserve a worktree.
type SnapshotInput struct {
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"copy ignored files into the snapshot, up to ignored_cap in total"`
	IgnoredCap     string `json:"ignored_cap,omitempty" jsonschema:"size cap of the ignored files copied, e.g. 500KiB, 100MiB (default 100MiB)"`
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

// Output schemas: the members docs/contract.md §4.7 names, typed; further members are allowed
// (the JSON contract adds fields, never renames them).

type props = map[string]*jsonschema.Schema

func object(required []string, p props) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Required: required, Properties: p}
}
func str() *jsonschema.Schema      { return &jsonschema.Schema{Type: "string"} }
func integer() *jsonschema.Schema  { return &jsonschema.Schema{Type: "integer"} }
func boolean() *jsonschema.Schema  { return &jsonschema.Schema{Type: "boolean"} }
func anything() *jsonschema.Schema { return &jsonschema.Schema{Description: anyValue} }
func array(items *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: items}
}

// nullable is s or null.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
}

func runProps() props {
	return props{"run_id": str(), "kind": str(), "status": str(), "baseline": str(), "epoch": integer(),
		"events": integer(), "live": boolean(), "created_at": str(), "updated_at": str(), "tip": str()}
}

func runSchema() *jsonschema.Schema {
	return object([]string{"run_id", "kind", "status", "baseline", "epoch"}, runProps())
}

func runRow() *jsonschema.Schema { return object([]string{"run_id"}, props{"run_id": str()}) }

func showSchema() *jsonschema.Schema {
	p := runProps()
	p["header"] = object(nil, nil)
	p["state"] = object(nil, nil)
	return object([]string{"run_id", "kind", "status", "header", "state"}, p)
}

func jobSchema() *jsonschema.Schema {
	return object([]string{"id", "state"}, props{"id": str(), "state": str(), "attempts": integer(), "needs": nullable(array(str()))})
}

func claimSchema() *jsonschema.Schema {
	return object([]string{"run_id", "job", "lease", "attempt", "epoch", "expires_at", "reason"}, props{
		"run_id": str(), "job": nullable(jobSchema()), "lease": nullable(str()), "attempt": nullable(integer()),
		"epoch": integer(), "expires_at": nullable(str()), "reason": nullable(str()), "gas_remaining": integer()})
}

func worktreeSchema() *jsonschema.Schema {
	return object([]string{"run_id", "node", "path", "branch", "baseline", "head"}, props{
		"run_id": str(), "node": str(), "path": str(), "branch": str(), "baseline": str(), "head": str(), "created": boolean()})
}

func worktreeRow() *jsonschema.Schema {
	return object([]string{"run_id", "node", "path", "branch", "head", "baseline", "ahead", "dirty", "missing", "locked"}, props{
		"run_id": str(), "node": str(), "path": str(), "branch": str(), "head": str(), "baseline": str(),
		"ahead": integer(), "dirty": boolean(), "missing": boolean(), "locked": boolean()})
}

func snapshotRow() *jsonschema.Schema {
	return object([]string{"id", "run_id", "ref", "created_at"}, props{"id": str(), "run_id": str(), "node": str(),
		"stage": str(), "ref": str(), "patch": str(), "created_at": str()})
}

// planSchema is resume --plan's document (docs/contract.md §6.3), and with applied resume's
// (what was done as well).
func planSchema(applied bool) *jsonschema.Schema {
	p := props{"run_id": str(), "kind": str(), "status": str(), "live": boolean(),
		"next_action": object([]string{"action"}, props{"action": str()}),
		"worktrees":   nullable(array(object([]string{"node"}, props{"node": str(), "path": str(), "exists": boolean(), "dirty": boolean()}))),
	}
	req := []string{"run_id", "kind", "status", "next_action"}
	if applied {
		p["snapshots"] = nullable(array(anything()))
		p["reset_jobs"] = nullable(array(anything()))
		p["recreated_worktrees"] = nullable(array(anything()))
	}
	return object(req, p)
}
