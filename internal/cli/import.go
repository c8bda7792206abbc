package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/git-atlas/git-atlas/ops"
)

// ImportCmd is `git atlas import kimi-atlas|agenteam [DIR]` (docs/contract.md §13).
type ImportCmd struct {
	System string `arg:"" enum:"kimi-atlas,agenteam" help:"The system the runs come from: kimi-atlas or agenteam."`
	Dir    string `arg:"" optional:"" help:"Its state directory (default: .atlas/ or .agenteam/ at the worktree root)."`
	DryRun bool   `name:"dry-run" help:"Print the plan; write nothing."`
}

// Run imports the runs it finds; the source is only read.
func (c *ImportCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Import(env.Ctx, ops.ImportRequest{System: c.System, Dir: env.path(c.Dir), DryRun: c.DryRun})
	if res == nil {
		return err
	}
	if perr := env.out(res, func(w io.Writer) { printImport(w, res) }); perr != nil {
		return perr
	}
	return err
}

func printImport(w io.Writer, v *ops.ImportResult) {
	for _, r := range v.Runs {
		line := fmt.Sprintf("%s %s", r.Outcome, r.RunID)
		if r.Mapped {
			line += fmt.Sprintf(" (from %q)", r.SourceID)
		}
		line += fmt.Sprintf(": %s, %d events", r.Header.Kind, r.Events)
		if r.Reason != "" {
			line += ": " + r.Reason
		}
		fmt.Fprintln(w, line)
		for _, src := range slices.Sorted(maps.Keys(r.JobIDs)) {
			fmt.Fprintf(w, "  job %q -> %s\n", src, r.JobIDs[src])
		}
		if len(r.Reset) > 0 {
			fmt.Fprintf(w, "  reset to PENDING (lease cleared, no gas refund): %v\n", r.Reset)
		}
		if r.Worktree != "" {
			fmt.Fprintf(w, "  worktree %s adopted as node imported", r.Worktree)
			if r.Snapshot != "" {
				fmt.Fprintf(w, " (dirty: snapshot %s first)", r.Snapshot)
			}
			fmt.Fprintln(w)
		}
		for _, n := range r.Notes {
			fmt.Fprintln(w, "  note: "+n)
		}
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "skipped %s: %s\n", p.Path, p.Reason)
	}
}
