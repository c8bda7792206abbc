package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// PathCmd is `git atlas path RUN [NODE|STAGE]`.
type PathCmd struct {
	RunID string `arg:"" name:"run" help:"The run."`
	Node  string `arg:"" optional:"" name:"node" help:"The node: a stage, job or union (default: a single run's current stage)."`
}

// Run prints the worktree's path, for `cd "$(git atlas path RUN NODE)"`.
func (c *PathCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Path(env.Ctx, ops.PathRequest{Run: c.RunID, Node: c.Node})
	if err != nil {
		return err
	}
	if res.State == ops.WorktreeNotReady && !env.JSON {
		fmt.Fprintf(env.Stderr, "the worktree is not ready: its setup %s; `%s` runs it again\n", res.Setup.Outcome, env.spelling().Step(fault.Do("worktree setup", "run", res.RunID, "node", res.Node)))
	}
	return env.out(res, func(w io.Writer) { fmt.Fprintln(w, res.Path) })
}

// WorktreeSetupCmd is `git atlas worktree setup RUN NODE`.
type WorktreeSetupCmd struct {
	RunID string `arg:"" name:"run" help:"${worktree_setup_run}"`
	Node  string `arg:"" help:"${worktree_setup_node}"`
	Lease string `help:"${worktree_setup_lease}" placeholder:"TOKEN"`
	DriverFlags
}

// Run runs the run's setup again in the node's worktree.
func (c *WorktreeSetupCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, setupErr := o.WorktreeSetup(env.Ctx, ops.WorktreeSetupRequest{Run: c.RunID, Node: c.Node, Lease: c.Lease, Driver: c.ops()})
	if res == nil {
		return setupErr
	}
	if err := env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "setup %s in %s: %s (exit %d)\n", res.Setup.Command, res.Path, res.Setup.Outcome, res.Setup.ExitCode)
		if res.Setup.Outcome != "ok" && res.Setup.Tail != "" {
			fmt.Fprintln(w, res.Setup.Tail)
		}
	}); err != nil {
		return err
	}
	return setupErr
}
