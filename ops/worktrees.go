package ops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/worktrees"
)

// WorktreeAddRequest is `worktree add RUN NODE`.
type WorktreeAddRequest struct {
	Run  string `json:"run" help:"${worktree_add_run}"`
	Node string `json:"node" help:"${worktree_add_node}"`
	// Baseline is the commit the node starts from ("": the run's baseline, or the one
	// a recorded worktree has).
	Baseline string `json:"baseline,omitempty" help:"${worktree_add_baseline}"`
	// Lease is the caller's lease token on the node's job (graph runs). With it the
	// write is the worker's (Driver.Holder names it) and never touches the driver
	// lease, unless Driver.TakeOver asks to take the run over.
	Lease  string `json:"lease,omitempty" help:"${worktree_add_lease}"`
	Driver Driver `wire:"inline"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// WorktreeAddResult is a managed worktree as `worktree add` made or found it (docs/contract.md
// §4.7).
type WorktreeAddResult struct {
	RunID     string `json:"run_id"`
	Node      string `json:"node"`
	Stage     string `json:"stage,omitempty"`
	Path      string `json:"path"`
	Branch    string `json:"branch"`
	Baseline  string `json:"baseline"`
	Head      string `json:"head"`
	Created   bool   `json:"created"`
	Recreated bool   `json:"recreated"`
	// Reattached: the node's worktree had been removed; the new one is on its kept
	// branch, at its tip.
	Reattached bool `json:"reattached"`
	// Ports is the node's block of ports (start --ports), [] without.
	Ports []int `json:"ports"`
	// Setup is the run's setup command as it ran in the new worktree (docs/contract.md §15).
	Setup *ledger.SetupRec `json:"setup,omitempty"`
	// TextWithheld: for an agent, the setup's command and output were left out
	// (docs/contract.md §6).
	TextWithheld bool `json:"text_withheld,omitempty"`
}

// nodeStore is the store a write about a node's worktree goes through: a worker's,
// fenced by its lease, when one is given (and no take-over), else the driver's.
func (o *Ops) nodeStore(lease string, d Driver) (*gitstate.Store, error) {
	if lease != "" && !d.TakeOver {
		return o.workerStore(Worker{Holder: d.Holder}), nil
	}
	return o.driverStore(d)
}

// WorktreeAdd gives a node its managed worktree, or finds it, or makes it again when
// its directory is gone. A checkout a killed process left half-made may hold an
// agent's work: it is snapshotted (always) and removed before it is made again.
func (o *Ops) WorktreeAdd(ctx context.Context, req WorktreeAddRequest) (*WorktreeAddResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.nodeStore(req.Lease, req.Driver)
	if err != nil {
		return nil, err
	}
	res, err := worktrees.Add(ctx, store, req.Run, req.Node, worktrees.AddOptions{Baseline: req.Baseline, Lease: req.Lease,
		Preserve: func(ctx context.Context, run, node, reason string) error {
			_, err := resume.PreserveWorktree(ctx, store, run, node, "worktree add: "+reason, true)
			return err
		}})
	if err != nil {
		return nil, err
	}
	rec := res.Rec
	out := &WorktreeAddResult{RunID: req.Run, Node: rec.Node, Stage: rec.Stage, Path: rec.Path, Branch: rec.Branch,
		Baseline: rec.Baseline.String(), Head: rec.Head.String(), Created: res.Created, Recreated: res.Recreated, Reattached: res.Reattached,
		Ports: portsOf(rec), Setup: rec.Setup}
	if res.Created || res.Recreated || res.Reattached {
		// A new directory: the run's setup runs in it (docs/contract.md §15).
		if out.Setup, err = resume.Setup(ctx, store, req.Run, rec.Node, req.Lease); err != nil {
			return o.setupForAgent(ctx, store, req, out), err
		}
	}
	return o.setupForAgent(ctx, store, req, out), setupError(store, req.Run, rec.Node, req.Lease, out.Setup)
}

// setupForAgent is out with its setup as an agent reads it (agentSetup), when the
// request is an agent's.
func (o *Ops) setupForAgent(ctx context.Context, store *gitstate.Store, req WorktreeAddRequest, out *WorktreeAddResult) *WorktreeAddResult {
	if req.ForAgent {
		out.Setup, out.TextWithheld = o.agentSetup(ctx, store, req.Run, out.Setup)
	}
	return out
}

// agentSetup is setup s of run's worktree as an agent reads it (agentText.setup),
// judged on the run as it is after the setup was recorded, and whether text was
// withheld; a run that cannot be read withholds all of it.
func (o *Ops) agentSetup(ctx context.Context, store *gitstate.Store, run string, s *ledger.SetupRec) (*ledger.SetupRec, bool) {
	if s == nil {
		return nil, false
	}
	r, err := store.Load(ctx, run)
	if err != nil {
		return &ledger.SetupRec{Outcome: s.Outcome, ExitCode: s.ExitCode, At: s.At}, true
	}
	return o.agentText().setup(ctx, r, s)
}

func portsOf(rec ledger.WorktreeRec) []int {
	if rec.Ports == nil {
		return []int{}
	}
	return rec.Ports
}

// setupError is the error of a setup that did not succeed: the worktree is not ready,
// and the step to retry is named, as the one who asked runs it (docs/contract.md
// §11.13): as store's holder, with their lease token on the node's job.
func setupError(store *gitstate.Store, run, node, lease string, s *ledger.SetupRec) error {
	if s == nil || s.Outcome == ledger.SetupOK {
		return nil
	}
	retry := resume.SetupStep(run, node, store.Writer.Holder, lease)
	if s.Outcome == ledger.SetupUntrusted {
		// The command is the other clone's text: an agent reads that it was withheld.
		quoted := fmt.Sprintf("the setup %q", s.Command)
		return fault.Refused("%s came with run %s from elsewhere and was not run: worktree of node %s is not ready", quoted, run, node).
			WithHint("read it, then `%s` and `%s`", fault.Do("trust", "run", run), retry).
			WithWithheld(fault.Withheld{Text: quoted, Stand: "its setup command (withheld: not trusted here)"})
	}
	return (&fault.Error{Kind: fault.ErrVerifyFailed, Msg: "setup of worktree of node " + node + " of run " + run + " " + s.Outcome +
		" (exit " + strconv.Itoa(s.ExitCode) + "): it is not ready"}).WithHint("`%s` runs it again", retry)
}

// WorktreeSetupRequest is `worktree setup RUN NODE`.
type WorktreeSetupRequest struct {
	Run  string `json:"run" help:"${worktree_setup_run}"`
	Node string `json:"node" help:"${worktree_setup_node}"`
	// Lease is the caller's lease token on the node's job: with it the write is the
	// worker's.
	Lease  string `json:"lease,omitempty" help:"${worktree_setup_lease}"`
	Driver Driver `wire:"inline"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// WorktreeSetupResult is the setup as it ran.
type WorktreeSetupResult struct {
	RunID string           `json:"run_id"`
	Node  string           `json:"node"`
	Path  string           `json:"path"`
	Ports []int            `json:"ports"`
	Setup *ledger.SetupRec `json:"setup"`
	// TextWithheld: the setup's command and output are another clone's text, withheld
	// from an agent (agentText.setup).
	TextWithheld bool `json:"text_withheld,omitempty"`
}

// WorktreeSetup runs the run's setup command again in the node's worktree and records
// its outcome; a setup that does not succeed comes back with its error.
func (o *Ops) WorktreeSetup(ctx context.Context, req WorktreeSetupRequest) (*WorktreeSetupResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.nodeStore(req.Lease, req.Driver)
	if err != nil {
		return nil, err
	}
	r, err := store.Load(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	if r.Header.Setup == "" {
		return nil, fault.Named(fault.ErrUsage, "run %s has no setup command: `worktree setup` runs the one given to `start {setup}`", req.Run)
	}
	if j := r.State.Job(req.Node); j != nil && req.Lease != "" {
		if err := ledger.CheckLease(&r.State, req.Node, req.Lease); err != nil {
			return nil, err
		}
	}
	s, err := resume.Setup(ctx, store, req.Run, req.Node, req.Lease)
	if err != nil {
		return nil, err
	}
	rec := r.State.Worktree(req.Node)
	res := &WorktreeSetupResult{RunID: req.Run, Node: req.Node, Path: rec.Path, Ports: portsOf(*rec), Setup: s}
	if req.ForAgent {
		res.Setup, res.TextWithheld = o.agentSetup(ctx, store, req.Run, s)
	}
	return res, setupError(store, req.Run, req.Node, req.Lease, s)
}

// WorktreeListRequest is `worktree list [RUN]`.
type WorktreeListRequest struct {
	// Run lists only this run's worktrees ("": every run's).
	Run string `json:"run,omitempty" help:"${worktree_list_run}"`
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// WorktreeListResult is `worktree list --json`.
type WorktreeListResult struct {
	Worktrees []WorktreeItem `json:"worktrees"`
	// Unreadable are the runs that could not be read, left out of the list (one
	// corrupt run never hides the others); a front end warns of each.
	Unreadable []error `json:"-"`
}

// WorktreeItem is one managed worktree as `worktree list` checked it (docs/contract.md §4.7).
type WorktreeItem struct {
	RunID    string `json:"run_id"`
	Node     string `json:"node"`
	Stage    string `json:"stage,omitempty"`
	Path     string `json:"path"`
	Branch   string `json:"branch"`
	Head     string `json:"head"`
	Baseline string `json:"baseline"`
	Ahead    int    `json:"ahead"`
	Dirty    bool   `json:"dirty"`
	Missing  bool   `json:"missing"`
	Locked   bool   `json:"locked"`
	OnBranch bool   `json:"on_branch"`
	// Untrusted: the post-checkout hook saw its HEAD leave its branch (resume
	// snapshots and recreates it).
	Untrusted bool `json:"untrusted"`
	// Making: "in_progress" while a git-atlas process checks it out, "half_made" when
	// the process that began it died (the next resume or add snapshots it first).
	Making string `json:"making,omitempty"`
	Error  string `json:"error,omitempty"`
	// State is "not_ready" after the run's setup did not succeed in it, else "ready"
	// (docs/contract.md §15).
	State string           `json:"state"`
	Ports []int            `json:"ports"`
	Setup *ledger.SetupRec `json:"setup,omitempty"`
	// TextWithheld: the setup's command and output were left out, for an agent,
	// because the run was neither started nor trusted here (agenttext.go).
	TextWithheld bool `json:"text_withheld,omitempty"`
}

// Worktree states (WorktreeItem.State).
const (
	WorktreeReady    = "ready"
	WorktreeNotReady = "not_ready"
)

func worktreeStateOf(rec ledger.WorktreeRec) string {
	if rec.Ready() {
		return WorktreeReady
	}
	return WorktreeNotReady
}

// WorktreeList lists the managed worktrees, checking them in parallel. A worktree
// that cannot be checked is listed with its error, and the list then comes back
// together with an error that gathers them: a front end shows the list, then fails.
func (o *Ops) WorktreeList(ctx context.Context, req WorktreeListRequest) (*WorktreeListResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store := o.Reader()
	res := &WorktreeListResult{}
	runs, unreadable, err := loadRuns(ctx, store, req.Run)
	if err != nil {
		return nil, err
	}
	res.Unreadable = unreadable
	var recs []ledger.WorktreeRec
	var owners []string
	byID := map[string]*ledger.Run{}
	for _, r := range runs {
		byID[r.Header.RunID] = r
		for _, w := range r.State.Worktrees {
			recs, owners = append(recs, w), append(owners, r.Header.RunID)
		}
	}
	infos, errs, inspectErr := worktrees.InspectAll(ctx, o.Repo, recs)
	if infos == nil {
		return nil, inspectErr
	}
	res.Worktrees = make([]WorktreeItem, 0, len(recs))
	for i, rec := range recs {
		in := infos[i]
		it := WorktreeItem{RunID: owners[i], Node: rec.Node, Stage: rec.Stage, Path: rec.Path, Branch: rec.Branch,
			Head: in.Head, Baseline: rec.Baseline.String(), Ahead: in.Ahead, Dirty: in.Dirty, Missing: in.Missing,
			Locked: in.Locked, OnBranch: in.OnBranch(rec), Untrusted: rec.Untrusted,
			State: worktreeStateOf(rec), Ports: portsOf(rec), Setup: rec.Setup}
		if it.Head == "" {
			it.Head = rec.Head.String() // missing: what the ledger last recorded
		}
		if errs[i] != nil {
			it.Error = errs[i].Error()
		}
		switch inProgress, halfMade, _ := worktrees.Making(rec.Path); {
		case inProgress:
			it.Making = "in_progress"
		case halfMade:
			it.Making = "half_made"
		}
		res.Worktrees = append(res.Worktrees, it)
	}
	sort.SliceStable(res.Worktrees, func(a, b int) bool { return res.Worktrees[a].RunID < res.Worktrees[b].RunID })
	if req.ForAgent {
		o.agentText().worktrees(ctx, res.Worktrees, byID)
		if inspectErr != nil {
			inspectErr = uninspected(errs, inspectErr)
		}
	}
	return res, inspectErr
}

// uninspected is err, the combined error of the worktrees InspectAll could not
// inspect (errs), as an agent reads it: a count, of the same kind, for the errors
// quote the ledger's paths (each item's own error is withheld as its run's text is,
// agentText.worktrees).
func uninspected(errs []error, err error) error {
	n := 0
	for _, e := range errs {
		if e != nil {
			n++
		}
	}
	msg := fmt.Sprintf("%d worktree(s) could not be inspected; each item says why", n)
	if fe, ok := errors.AsType[*fault.Error](err); ok {
		return &fault.Error{Kind: fe.Kind, Msg: msg}
	}
	return errors.New(msg)
}

// UnionRequest is `union RUN`.
type UnionRequest struct {
	Run string `json:"run" help:"${union_run}"`
	// Nodes are integrated in this order (nil: the run's done nodes, in dependency
	// order).
	Nodes []string `json:"nodes,omitempty" help:"${union_nodes}"`
	// Force moves the union branch even if someone committed on it (its old tip is
	// kept under a recovery ref first: UnionResult.Kept).
	Force bool `json:"force,omitempty" help:"${union_force}"`
	// Verify runs the run's verify command in the union worktree and records the
	// result.
	Verify bool `json:"verify,omitempty" help:"${union_verify}"`
	// VerifyTimeout bounds that verify (0: resume.DefaultVerifyTimeout).
	VerifyTimeout time.Duration `json:"verify_timeout,omitempty" help:"${union_verify_timeout}"`
	Driver        Driver        `wire:"inline"`
	// AllowOutsideScope are jobs integrated although their branch changed paths
	// outside their scope: a person's step (StepOutsideScope), recorded.
	AllowOutsideScope []string
	Person            Person
	// ForAgent: the result goes to an agent (agenttext.go).
	ForAgent bool
}

// UnionResult is the union as `union` built it: what integrated and what conflicted,
// where.
type UnionResult struct {
	RunID      string              `json:"run_id"`
	Head       string              `json:"head"`
	Baseline   string              `json:"baseline"`
	Branch     string              `json:"branch"`
	Path       string              `json:"path"`
	Integrated []string            `json:"integrated"`
	Conflicted map[string][]string `json:"conflicted"`
	Missing    []string            `json:"missing"`
	Changed    bool                `json:"changed"`
	At         string              `json:"at"`
	// OutsideScope are the jobs left out because their branch changed paths outside
	// their scope, with those paths; AllowedOutsideScope those integrated all the
	// same by --allow-outside-scope (docs/contract.md §5.3).
	OutsideScope        map[string][]string `json:"outside_scope"`
	AllowedOutsideScope map[string][]string `json:"allowed_outside_scope,omitempty"`
	// Verify is the run's verify on this union, when the request asked for it.
	Verify *ledger.VerifyResult `json:"verify,omitempty"`
	// Verdict is a graph run's verdict on its criteria (none without criteria).
	Verdict *ledger.Verdict `json:"verdict,omitempty"`
	// Kept is the union branch's old tip that --force moved it away from (a commit
	// git-atlas did not build), and the recovery ref that keeps it.
	Kept *KeptView `json:"kept,omitempty"`
}

// KeptView is a commit kept under a recovery ref so that nothing is lost.
type KeptView struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// Union builds the run's union, and with Verify runs the run's verify there and
// records it. A verify that fails is recorded and the result comes back together
// with an ErrVerifyFailed error: a front end shows the union, then fails.
func (o *Ops) Union(ctx context.Context, req UnionRequest) (*UnionResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	store, err := o.driverStore(req.Driver)
	if err != nil {
		return nil, err
	}
	if err := precheck(ctx, store, req.Run); err != nil {
		return nil, err // before the union worktree is moved or made
	}
	var r *ledger.Run
	if req.Verify {
		// Refuse before building: a run without a verify command has nothing to run.
		if r, err = store.Load(ctx, req.Run); err != nil {
			return nil, err
		}
		if r.Header.Verify == "" {
			return nil, fault.Named(fault.ErrUsage, "run %s has no verify command: `union {verify}` runs the one given to `start {verify}`", req.Run)
		}
	}
	approvedBy := ""
	if len(req.AllowOutsideScope) > 0 {
		if approvedBy, err = req.Person.approve(StepOutsideScope); err != nil {
			return nil, err // docs/contract.md §5.3: a person's step
		}
	}
	built, err := worktrees.BuildUnion(ctx, store, req.Run, worktrees.UnionOptions{Nodes: req.Nodes, Force: req.Force, Progress: o.Progress,
		AllowOutsideScope: req.AllowOutsideScope, ApprovedBy: approvedBy})
	if err != nil {
		return nil, err
	}
	if built.Created {
		// A new union worktree: the run's setup runs in it first (docs/contract.md §15).
		s, err := resume.Setup(ctx, store, req.Run, worktrees.Union, "")
		if err == nil {
			err = setupError(store, req.Run, worktrees.Union, "", s)
		}
		if err != nil {
			return nil, err
		}
	}
	var vr *ledger.VerifyResult
	if req.Verify {
		// Read again: the verify's environment names the union worktree as recorded now.
		if r, err = store.Load(ctx, req.Run); err != nil {
			return nil, err
		}
		if vr, err = resume.NodeVerify(ctx, store, r, r.Header.Verify, built.Rec.Path, req.VerifyTimeout); err != nil {
			return nil, err
		}
		if err := worktrees.RecordUnionVerify(ctx, store, req.Run, built.Union.Head.String(), vr); err != nil {
			return nil, err
		}
	}
	res := &UnionResult{RunID: req.Run, Head: built.Union.Head.String(), Baseline: built.Rec.Baseline.String(), Branch: built.Rec.Branch, Path: built.Rec.Path,
		Integrated: built.Union.Integrated, Conflicted: built.Union.Conflicted, Missing: built.Missing, Changed: built.Changed, At: built.Union.At,
		Verify: vr}
	if built.Kept != "" {
		res.Kept = &KeptView{Ref: built.Kept, Commit: built.KeptCommit}
	}
	if res.Conflicted == nil {
		res.Conflicted = map[string][]string{}
	}
	res.OutsideScope, res.AllowedOutsideScope = built.Union.OutsideScope, built.Union.AllowedOutsideScope
	if res.OutsideScope == nil {
		res.OutsideScope = map[string][]string{}
	}
	if r, err = store.Load(ctx, req.Run); err != nil {
		return nil, err
	}
	res.Verdict = ledger.RunVerdict(&r.Header, &r.State)
	if req.ForAgent {
		o.agentText().union(ctx, r, res)
	}
	if vr != nil && !vr.Passed {
		return res, &fault.Error{Kind: fault.ErrVerifyFailed, Msg: "verify of the union of run " + req.Run + " " + resume.Outcome(vr, req.VerifyTimeout)}
	}
	return res, nil
}
