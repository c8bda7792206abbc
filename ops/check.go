package ops

import (
	"bytes"
	"encoding/json"
	"os"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
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
		data, err := os.ReadFile(req.Pipeline)
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
	return req.Driver.Check()
}

// Check fills the verify time limit a passed report runs under.
func (req *TransitionRequest) Check() error {
	if err := checkTimeout("verify_timeout", &req.VerifyTimeout); err != nil {
		return err
	}
	return req.Driver.Check()
}

// Check fills the receipt's verify time limit and the worker's lease.
func (req *JobDoneRequest) Check() error {
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

// Check fills the snapshot options of the recovery.
func (req *RecoverRequest) Check() error {
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

// ParseChildren reads a receipt's children (JobDoneRequest.Children): a JSON list of
// jobs in job add's shape (id, needs, scope, verify, criterion, kind), nothing else.
func ParseChildren(data []byte) ([]ledger.JobSpec, error) {
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
