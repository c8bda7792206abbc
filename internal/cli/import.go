package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/git-atlas/git-atlas/importer"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// ImportCmd is `git atlas import kimi-atlas|agenteam [DIR]` (SPEC §13).
type ImportCmd struct {
	System string `arg:"" enum:"kimi-atlas,agenteam" help:"The system the runs come from: kimi-atlas or agenteam."`
	Dir    string `arg:"" optional:"" help:"Its state directory (default: .atlas/ or .agenteam/ at the worktree root)."`
	DryRun bool   `name:"dry-run" help:"Print the plan; write nothing."`
}

type importView struct {
	System   string             `json:"system"`
	Dir      string             `json:"dir"`
	DryRun   bool               `json:"dry_run,omitempty"`
	Runs     []importer.Result  `json:"runs"`
	Problems []importer.Problem `json:"problems"`
}

// Run imports the runs it finds; the source is only read.
func (c *ImportCmd) Run(env *Env) error {
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	if repo.TopLevel == "" {
		return fault.Usage("import needs a worktree (the source directory lives in one)")
	}
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join(repo.TopLevel, map[string]string{importer.KimiAtlas: ".atlas", importer.AgenTeam: ".agenteam"}[c.System])
	} else {
		dir = env.path(dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fault.NotFound("no %s directory at %s", c.System, dir)
	}
	var plans []*importer.Plan
	var probs []importer.Problem
	switch c.System {
	case importer.KimiAtlas:
		plans, probs, err = importer.ScanKimi(dir)
	default:
		plans, probs, err = importer.ScanAgenTeam(dir)
	}
	if err != nil {
		return fault.New(fault.ErrUsage, "%v", err)
	}
	for _, p := range plans {
		if rel, err := filepath.Rel(repo.TopLevel, p.Path); err == nil {
			p.Header.ImportedFrom.Path = filepath.ToSlash(rel)
		}
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	res := importer.Apply(env.Ctx, store, plans, c.DryRun, env.progress())
	v := importView{System: c.System, Dir: dir, DryRun: c.DryRun, Runs: res, Problems: probs}
	if v.Runs == nil {
		v.Runs = []importer.Result{}
	}
	if v.Problems == nil {
		v.Problems = []importer.Problem{}
	}
	if err := env.out(v, func(w io.Writer) { printImport(w, v) }); err != nil {
		return err
	}
	for _, r := range res {
		if r.Outcome != importer.Refused {
			return nil
		}
	}
	if len(res) == 0 && len(probs) == 0 {
		return fault.NotFound("no %s runs in %s", c.System, dir)
	}
	return errors.New("nothing could be imported")
}

func printImport(w io.Writer, v importView) {
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
		for src, id := range r.JobIDs {
			fmt.Fprintf(w, "  job %q -> %s\n", src, id)
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
