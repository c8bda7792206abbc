package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/ops"
)

// LandCmd is `git atlas land RUN --onto BRANCH [--merge]`.
type LandCmd struct {
	RunID            string `arg:"" name:"run" help:"The graph run."`
	Onto             string `required:"" help:"The branch to move to the run's union." placeholder:"BRANCH"`
	Merge            bool   `help:"When the union is not a fast-forward of BRANCH, land it as a merge commit (made without any checkout)."`
	AcceptUnresolved bool   `name:"accept-unresolved" help:"Land although the run's verdict is not resolved: a person's step (a terminal, or --approved-by), recorded."`
	ApprovedBy       string `name:"approved-by" help:"Without a terminal, the person landing (recorded in the landed event)." placeholder:"NAME"`
}

// Help is the command's long help.
func (c *LandCmd) Help() string {
	return `Moves BRANCH to the run's union by compare-and-swap: a fast-forward, or with --merge
a merge commit made by git merge-tree (a conflict: exit 5 naming the paths). Only when
the union holds every DONE job, its verify (if the run has one) passed and, when the run
has criteria, its verdict is resolved; otherwise exit 5 naming what is missing. A branch
checked out in any worktree is never moved: exit 5 with the command to run there.
Landing is a person's step (a terminal, or --approved-by NAME) unless git config
atlas.agentsMayLand is true and this clone built and verified the union itself (or a
person trusted the run here). Recorded as a landed event; touches no checkout.`
}

// Run lands the union.
func (c *LandCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Land(env.Ctx, ops.LandRequest{Run: c.RunID, Onto: c.Onto, Merge: c.Merge, AcceptUnresolved: c.AcceptUnresolved, Person: env.person(c.ApprovedBy)})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		if res.How == ops.LandUpToDate {
			fmt.Fprintf(w, "%s already holds run %s's union %s\n", res.Branch, res.RunID, res.Union)
			return
		}
		fmt.Fprintf(w, "%s: %s -> %s (%s of run %s's union)\n", res.Branch, res.Old, res.New, res.How, res.RunID)
	})
}
