package ops

import (
	"context"
	"os"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// PathRequest is `path RUN [NODE|STAGE]`.
type PathRequest struct {
	Run string
	// Node is a node, stage or job name ("": a single run's current stage).
	Node string
}

// PathResult is where to work (docs/contract.md §15).
type PathResult struct {
	RunID  string `json:"run_id"`
	Node   string `json:"node"`
	Stage  string `json:"stage,omitempty"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Ports  []int  `json:"ports"`
	// State is "ready", or "not_ready" after the run's setup did not succeed there.
	State string           `json:"state"`
	Setup *ledger.SetupRec `json:"setup,omitempty"`
}

// Path finds the managed worktree of a run's node: not found (exit 4) when the node
// has none, or its directory is gone. Without a node, a single run's current stage;
// a graph run has no one place to work (usage).
func (o *Ops) Path(ctx context.Context, req PathRequest) (*PathResult, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	r, err := o.Reader().Load(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	node := req.Node
	if node == "" {
		if r.Header.Kind == ledger.KindGraph {
			return nil, fault.Usage("run %s is a graph run: name the job (or union) whose worktree you want", req.Run).
				WithHint("`%s`", fault.Do("path", "run", req.Run, "node", fault.Placeholder("JOB")))
		}
		st := r.CurrentStage()
		if st == nil {
			return nil, fault.NotFound("run %s has no current stage: every stage is finished", req.Run)
		}
		node = st.Name
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return nil, fault.NotFound("run %s has no worktree for %s", req.Run, node).
			WithHint("make it with `%s`", resume.AddStep(req.Run, node, "", ""))
	}
	if _, err := os.Lstat(rec.Path); err != nil {
		return nil, fault.NotFound("the worktree of %s of run %s is gone (%s)", node, req.Run, rec.Path).
			WithHint("`%s` makes it again", resume.AddStep(req.Run, node, "", ""))
	}
	return &PathResult{RunID: req.Run, Node: node, Stage: rec.Stage, Path: rec.Path, Branch: rec.Branch, Ports: portsOf(*rec),
		State: worktreeStateOf(*rec), Setup: rec.Setup}, nil
}
