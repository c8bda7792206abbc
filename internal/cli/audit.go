package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// AuditCmd is `git atlas audit [--size]`.
type AuditCmd struct {
	Size bool `help:"Measure each recovery snapshot's disk usage."`
}

// Run classifies every worktree and atlas ref; exit 10 when something needs attention.
func (c *AuditCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	rep, err := audit.Audit(env.Ctx, store, audit.Options{Size: c.Size, Progress: env.progress()})
	if rep == nil {
		return err
	}
	if err != nil {
		env.warn("%v", err)
	}
	if perr := env.out(rep, func(w io.Writer) {
		t := newTable(w, "WORKTREE", "RUN", "NODE", "LABELS")
		for _, x := range rep.Worktrees {
			t.row(x.Path, dash(x.RunID), dash(x.Node), strings.Join(x.Labels, ","))
		}
		t.flush()
		fmt.Fprintln(w)
		t = newTable(w, "REF", "LABELS", "SIZE")
		for _, r := range rep.Refs {
			size := ""
			if r.Size != nil {
				size = fmt.Sprint(*r.Size)
			}
			t.row(r.Ref, strings.Join(r.Labels, ","), size)
		}
		t.flush()
	}); perr != nil {
		return perr
	}
	if rep.Attention || err != nil {
		return fault.New(fault.ErrAttention, "audit found something that needs attention").WithHint("`git atlas gc` shows what it would clean up")
	}
	return nil
}

// GcCmd is `git atlas gc [--before DUR] [--apply] [--recoveries]`.
type GcCmd struct {
	Before     time.Duration `help:"Drop finished runs last updated longer ago than this (0s: every finished run)." default:"720h"`
	Apply      bool          `help:"Do it; without --apply gc only prints its plan."`
	Recoveries bool          `help:"Also drop the recovery snapshots of dropped and vanished runs."`
}

// Run prints the plan, or applies it.
func (c *GcCmd) Run(env *Env) error {
	if c.Before < 0 {
		return fault.Usage("--before must not be negative")
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	opt := audit.GCOptions{Before: c.Before, Recoveries: c.Recoveries, Now: time.Now(), Progress: env.progress()}
	var acts []audit.Action
	if c.Apply {
		acts, err = audit.Apply(env.Ctx, store, opt)
	} else {
		rep, aerr := audit.Audit(env.Ctx, store, audit.Options{Now: opt.Now, Progress: opt.Progress})
		if rep == nil {
			return aerr
		}
		acts, err = audit.Plan(env.Ctx, store.Repo, rep, opt)
		if aerr != nil {
			env.warn("%v", aerr)
		}
	}
	if acts == nil {
		acts = []audit.Action{}
	}
	if perr := env.out(map[string]any{"applied": c.Apply, "actions": acts}, func(w io.Writer) {
		if len(acts) == 0 {
			fmt.Fprintln(w, "nothing to clean up")
			return
		}
		for _, a := range acts {
			what := a.Ref
			if a.Kind == audit.RemoveWorktree {
				what = a.Path
			}
			state := "would"
			switch {
			case a.Kind == audit.KeepRun:
				state = "keep"
			case c.Apply && a.Skipped != "":
				state = "kept"
			case c.Apply:
				state = map[bool]string{true: "done", false: "FAILED"}[a.Done]
			}
			line := fmt.Sprintf("%-6s %-15s %s (%s)", state, a.Kind, what, a.Reason)
			if a.Patch != "" {
				line += " and " + a.Patch
			}
			if a.Snapshot != "" {
				line += " snapshot " + a.Snapshot
			}
			if a.Skipped != "" {
				line += ": " + a.Skipped
			}
			fmt.Fprintln(w, line)
		}
		if !c.Apply {
			fmt.Fprintln(w, "(a plan: nothing was changed; run with --apply to do it)")
		}
	}); perr != nil {
		return perr
	}
	return err
}
