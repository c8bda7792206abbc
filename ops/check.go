package ops

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/importer"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/resume"
)

// Requests are the contract of the operations (docs/contract.md §4.6): each request's
// Check fills its defaults and refuses what the operation could not do, naming the
// request's fields ({ttl}, {verify_timeout}: fault.Named), and every operation calls it
// first. A front end only parses its own input into the request and renders the
// fields an error names in its own words; any other caller (bench/claims, tests) gets
// the same defaults and checks.

// checkTimeout fills a verify time limit's default and refuses a negative one.
func checkTimeout(field string, d *time.Duration) error {
	if *d < 0 {
		return fault.Named(fault.ErrUsage, "{"+field+"} must be a positive duration (got %s)", *d)
	}
	if *d == 0 {
		*d = DefaultVerifyTimeout
	}
	return nil
}

// Check fills the ignored files' default cap and refuses a negative one.
func (s *SnapshotOptions) Check() error {
	if s.IgnoredCap < 0 {
		return fault.Named(fault.ErrUsage, "{ignored_cap} must not be negative")
	}
	if s.IgnoredCap == 0 {
		s.IgnoredCap = recovery.DefaultIgnoredCap
	}
	return nil
}

// maxPipelineFile bounds a pipeline file start reads (a few stages of YAML): the path
// may come over the MCP wire, and /dev/zero or a FIFO is refused, never read.
const maxPipelineFile = 1 << 20

// Check fills start's defaults (baseline HEAD, the stages of Pipeline or StageList)
// and refuses limits that do not fit the run.
func (req *StartRequest) Check() error {
	if req.Baseline == "" {
		req.Baseline = "HEAD"
	}
	switch {
	case req.Pipeline != "" && req.StageList != "":
		return fault.Named(fault.ErrUsage, "give {stages} or {pipeline}, not both")
	case req.Pipeline != "" && req.Stages == nil:
		data, err := confine.ReadRegular(req.Pipeline, maxPipelineFile)
		if err != nil {
			return fault.Usage("read pipeline: %v", err)
		}
		p, err := ledger.ParsePipelineFile(req.Pipeline, data)
		if err != nil {
			return err
		}
		req.Stages = p.Stages
		if req.Setup == "" {
			req.Setup = p.Setup
		}
	case req.StageList != "" && req.Stages == nil:
		req.Stages = ledger.StagesFromList(req.StageList)
	}
	if req.Gas < 0 || req.MaxAttempts < 0 || req.MaxJobs < 0 || req.MaxDepth < 0 {
		return fault.Named(fault.ErrUsage, "{gas}, {max_attempts}, {max_jobs} and {max_depth} must not be negative")
	}
	if (req.Gas > 0 || req.MaxAttempts > 0 || req.MaxJobs > 0 || req.MaxDepth > 0) && !req.Graph {
		return fault.Named(fault.ErrUsage, "{gas}, {max_attempts}, {max_jobs} and {max_depth} are for graph runs").WithHint("add {graph}")
	}
	if req.Ports < 0 || req.Ports > MaxPorts {
		return fault.Named(fault.ErrUsage, "{ports} must be from 0 to %d", MaxPorts)
	}
	if req.SetupTimeout < 0 || req.SetupTimeout > 0 && req.Setup == "" {
		return fault.Named(fault.ErrUsage, "{setup_timeout} is a positive duration, for a run with {setup}")
	}
	if req.SetupTimeout > resume.MaxSetupTimeout {
		return fault.Named(fault.ErrUsage, "{setup_timeout} is at most %s", resume.MaxSetupTimeout)
	}
	return req.Driver.Check()
}

// Check fills the verify time limit a passed report runs under and the driver's
// lease, and refuses a stage name the ledger could not hold and what describes a new
// attempt (thread, agent, pid) on any other move.
func (req *TransitionRequest) Check() error {
	if err := checkTimeout("verify_timeout", &req.VerifyTimeout); err != nil {
		return err
	}
	if err := req.Driver.Check(); err != nil {
		return err
	}
	if err := ledger.ValidName("stage", req.Stage); err != nil {
		return err
	}
	if (req.ThreadID != "" || req.PID != 0 || req.Agent != "") && req.Status != ledger.StageDispatched {
		return fault.Named(fault.ErrUsage, "{thread_id}, {agent} and {pid} describe a new attempt: they go with dispatched")
	}
	if err := checkAgent(req.Agent, req.ThreadID); err != nil {
		return err
	}
	if req.PID < 0 {
		return fault.Named(fault.ErrUsage, "{pid} must be a process id")
	}
	return nil
}

// Check reads the receipt's children given as JSON and fills its verify time limit
// and the worker's lease.
func (req *JobDoneRequest) Check() error {
	if req.ChildrenJSON != nil && req.Children == nil {
		children, err := parseChildren(req.ChildrenJSON)
		if err != nil {
			return err
		}
		req.Children = children
	}
	if err := checkTimeout("verify_timeout", &req.VerifyTimeout); err != nil {
		return err
	}
	return req.Worker.Check()
}

// Check fills the union's verify time limit.
func (req *UnionRequest) Check() error {
	if err := checkTimeout("verify_timeout", &req.VerifyTimeout); err != nil {
		return err
	}
	return req.Driver.Check()
}

// Check fills the snapshot options of the removal.
func (req *WorktreeRemoveRequest) Check() error {
	if err := req.Snapshot.Check(); err != nil {
		return err
	}
	return req.Driver.Check()
}

// Check fills the snapshot options of the recovery and refuses a relative patch
// path (absolutePath).
func (req *RecoverRequest) Check() error {
	if err := absolutePath("patch_out", req.PatchOut); err != nil {
		return err
	}
	if err := req.Snapshot.Check(); err != nil {
		return err
	}
	return req.Driver.Check()
}

// childSpec is one child job of a receipt, in job add's shape.
type childSpec struct {
	ID        string   `json:"id"`
	Needs     []string `json:"needs"`
	Scope     []string `json:"scope"`
	Verify    string   `json:"verify"`
	Criterion []string `json:"criterion"`
	Kind      string   `json:"kind"`
}

// parseChildren reads a receipt's children (JobDoneRequest.Children): a JSON list of
// jobs in job add's shape (id, needs, scope, verify, criterion, kind), nothing else.
func parseChildren(data []byte) ([]ledger.JobSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var list []childSpec
	if err := dec.Decode(&list); err != nil || list == nil {
		why := "null"
		if err != nil {
			why = err.Error()
		}
		return nil, fault.Named(fault.ErrUsage, "{children} must be a JSON list of jobs (id, needs, scope, verify, criterion, kind): %s", why)
	}
	specs := make([]ledger.JobSpec, 0, len(list))
	for _, ch := range list {
		specs = append(specs, ledger.JobSpec{ID: ch.ID, Needs: ch.Needs, Scope: ch.Scope, Verify: ch.Verify, Kind: ch.Kind, Criteria: ch.Criterion})
	}
	return specs, nil
}

// checkRun refuses a run id the ledger could not hold ("" is none, where a request
// takes every run).
func checkRun(run string) error {
	if run == "" {
		return nil
	}
	return ledger.ValidName("run", run)
}

// Check has nothing to fill or refuse: every list request is one the ledger answers.
func (req *ListRequest) Check() error { return nil }

// Check refuses a run id the ledger could not hold.
func (req *ShowRequest) Check() error { return ledger.ValidName("run", req.Run) }

// Check refuses a negative count of events.
func (req *LogRequest) Check() error {
	if req.Last < 0 {
		return fault.Named(fault.ErrUsage, "{last} must not be negative")
	}
	if req.Diverged < 0 {
		return fault.Named(fault.ErrUsage, "{diverged} must not be negative")
	}
	return ledger.ValidName("run", req.Run)
}

// Check refuses a heartbeat of no named driver, a stage the ledger could not hold,
// or a stage token without its stage, and fills the driver's lease.
func (req *HeartbeatRequest) Check() error {
	if req.Driver.Holder == "" {
		return fault.Named(fault.ErrUsage, "heartbeat needs {holder}: the driver whose lease it renews").WithHint("%s", fault.Do("heartbeat", "run", req.Run, "holder", fault.Placeholder("NAME")))
	}
	if req.Stage != "" {
		if err := ledger.ValidName("stage", req.Stage); err != nil {
			return err
		}
	} else if req.Lease != "" {
		return fault.Named(fault.ErrUsage, "{lease} is a stage token: it goes with {stage}")
	}
	return req.Driver.Check()
}

// Check refuses an event type git-atlas writes itself or data that is no JSON
// object (Data is then the object, compact), and fills the driver's lease.
func (req *EventRequest) Check() error {
	if err := ledger.ValidName("event type", req.Type); err != nil {
		return err
	}
	if err := reservedEvent(ledger.EventType(req.Type)); err != nil {
		return err
	}
	data, err := jsonObject("data", req.Data)
	if err != nil {
		return err
	}
	req.Data = data
	return req.Driver.Check()
}

// Check fills the driver's lease; the status is the run machine's to judge.
func (req *FinishRequest) Check() error { return req.Driver.Check() }

// Check refuses an undo of no named driver and fills the driver's lease.
func (req *UndoRequest) Check() error {
	if req.Driver.Holder == "" {
		return fault.Named(fault.ErrUsage, "undo needs {holder}: who is steering the run back").WithHint("%s", fault.Do("undo", "run", req.Run, "to", req.To, "holder", fault.Placeholder("NAME")))
	}
	return req.Driver.Check()
}

// Check refuses a job or kind name the ledger could not hold, canonicalises the
// scope and fills the driver's lease.
func (req *JobAddRequest) Check() error {
	if err := ledger.CheckNodeName("job", req.Job); err != nil {
		return err
	}
	if req.Kind != "" {
		if err := ledger.ValidName("kind", req.Kind); err != nil {
			return err
		}
	}
	scope, err := ledger.CanonicalScope(req.Scope)
	if err != nil {
		return err
	}
	req.Scope = scope
	return req.Driver.Check()
}

// Check fills the worker's lease and refuses an agent, thread or job name the ledger
// could not hold.
func (req *JobClaimRequest) Check() error {
	if err := req.Worker.Check(); err != nil {
		return err
	}
	if err := checkAgent(req.Agent, req.ThreadID); err != nil {
		return err
	}
	if req.Job != "" {
		return ledger.ValidName("job", req.Job)
	}
	return nil
}

// Check fills the worker's lease.
func (req *JobRenewRequest) Check() error { return req.Worker.Check() }

// Check refuses a run id the ledger could not hold.
func (req *JobListRequest) Check() error { return ledger.ValidName("run", req.Run) }

// Check refuses a run id the ledger could not hold.
func (req *ReapRequest) Check() error { return ledger.ValidName("run", req.Run) }

// Check fills the driver's lease (a worker's lease token writes as the worker).
func (req *WorktreeAddRequest) Check() error { return req.Driver.Check() }

// Check fills the driver's lease (a worker's lease token writes as the worker).
func (req *WorktreeSetupRequest) Check() error { return req.Driver.Check() }

// Check refuses a run id the ledger could not hold ("": every run's worktrees).
func (req *WorktreeListRequest) Check() error { return checkRun(req.Run) }

// Check has nothing to refuse: a session that owns no run prefers none, and the
// session start's brief never fails for what it was given.
func (req *ResumeDetectRequest) Check() error { return nil }

// Check refuses a run id the ledger could not hold ("": every run's snapshots).
func (req *RecoveryListRequest) Check() error { return checkRun(req.Run) }

// Check refuses a request that names no snapshot.
func (req *RecoveryShowRequest) Check() error {
	if req.Snapshot == "" {
		return fault.Named(fault.ErrUsage, "{snapshot} names no snapshot: give <id> or <run>/<id>")
	}
	return nil
}

// Check refuses a request that names no snapshot, and a destination that is not an
// absolute path: an operation has no working directory of the caller's, and the
// repository is the one place a relative path may never go.
func (req *RecoveryRestoreRequest) Check() error {
	if req.Snapshot == "" {
		return fault.Named(fault.ErrUsage, "{snapshot} names no snapshot: give <id> or <run>/<id>")
	}
	return absolutePath("to", req.To)
}

// absolutePath refuses a relative path where an operation writes.
func absolutePath(field, p string) error {
	if p != "" && !filepath.IsAbs(p) {
		return fault.Named(fault.ErrUsage, "{"+field+"} %q is a relative path: give an absolute one, outside the repository's working trees", p)
	}
	return nil
}

// Check has nothing to fill or refuse: Size is a choice, Now zero is the clock.
func (req *AuditRequest) Check() error { return nil }

// Check refuses negative limits and fills the snapshot options of the removals.
func (req *GCRequest) Check() error {
	if req.Before != nil && *req.Before < 0 {
		return fault.Named(fault.ErrUsage, "{before} must not be negative")
	}
	if req.KeepLast != nil && *req.KeepLast < 0 {
		return fault.Named(fault.ErrUsage, "{keep_last} must not be negative")
	}
	if req.MaxSize < 0 {
		return fault.Named(fault.ErrUsage, "{max_size} must be positive")
	}
	if req.MaxSize > 0 && !req.Recoveries {
		return fault.Named(fault.ErrUsage, "{max_size} needs {recoveries}: it is a budget for recovery snapshots")
	}
	return req.Snapshot.Check()
}

// Check refuses a run id the ledger could not hold ("": every run).
func (req *DuRequest) Check() error { return checkRun(req.Run) }

// Check refuses a run id the ledger could not hold.
func (req *PathRequest) Check() error { return ledger.ValidName("run", req.Run) }

// Check refuses a request that names no run.
func (req *TrustRequest) Check() error { return trustRun(req.Run) }

// Check refuses a request that names no run.
func (req *TrustRevokeRequest) Check() error { return trustRun(req.Run) }

// Check refuses a run id the ledger could not hold ("": every run's commands).
func (req *TrustListRequest) Check() error { return checkRun(req.Run) }

// Check refuses a system import does not read.
func (req *ImportRequest) Check() error {
	if _, ok := importDirs[req.System]; !ok {
		return fault.Usage("unknown system %q: import reads %s or %s", req.System, importer.KimiAtlas, importer.AgenTeam)
	}
	return nil
}

// Check refuses a branch name git could not hold, and git-atlas's own branches.
func (req *LandRequest) Check() error {
	branch := strings.TrimPrefix(req.Onto, "refs/heads/")
	if err := git.CheckRefFormat("refs/heads/" + branch); err != nil || branch == "" {
		return fault.Named(fault.ErrUsage, "{onto} %q is not a branch name", req.Onto)
	}
	if strings.HasPrefix(branch, "atlas/") {
		return fault.Named(fault.ErrUsage, "{onto} %s: atlas/ branches are git-atlas's own; land onto one of yours", branch)
	}
	return nil
}

// Check has nothing to refuse: a remote's name or URL is git's to resolve.
func (req *SyncRequest) Check() error { return nil }

// Check has nothing to refuse: no session or no path allows the call.
func (req *GuardRequest) Check() error { return nil }

// Check has nothing to refuse: git's arguments are the hook's to read.
func (req *CheckoutRequest) Check() error { return nil }

// Check has nothing to fill or refuse: Global is a choice.
func (req *HooksRequest) Check() error { return nil }

// Check has nothing of its own to refuse: the agent and the scope are judged, in
// the agent files' own words, where the files are computed (agent.Install).
func (req *AgentFilesRequest) Check() error { return nil }
