package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/ops"
)

// AuditCmd is `git atlas audit [--size]`.
type AuditCmd struct {
	Size bool `help:"${audit_size}"`
}

// Run classifies every worktree and atlas ref; exit 10 when something needs attention.
func (c *AuditCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Audit(env.Ctx, ops.AuditRequest{Size: c.Size, ForAgent: env.forAgent()})
	if res == nil {
		return err
	}
	if res.Incomplete != nil {
		env.warn("%v", res.Incomplete)
	}
	if perr := env.out(res, func(w io.Writer) {
		t := newTable(w, "WORKTREE", "RUN", "NODE", "LABELS")
		for _, x := range res.Worktrees {
			t.row(x.Path, dash(x.RunID), dash(x.Node), strings.Join(x.Labels, ","))
		}
		t.flush()
		for _, x := range res.Worktrees {
			if x.Reason != "" {
				fmt.Fprintf(w, "foreign: %s\n", x.Reason)
			}
		}
		fmt.Fprintln(w)
		t = newTable(w, "REF", "LABELS", "SIZE")
		for _, r := range res.Refs {
			size := ""
			if r.Size != nil {
				size = fmt.Sprint(*r.Size)
			}
			t.row(r.Ref, strings.Join(r.Labels, ","), size)
		}
		t.flush()
		if len(res.Leftovers) > 0 {
			fmt.Fprintln(w)
			t = newTable(w, "LEFTOVER", "KIND", "SIZE", "AGE")
			for _, l := range res.Leftovers {
				t.row(l.Path, l.Kind, fmt.Sprint(l.Size), l.Age)
			}
			t.flush()
		}
	}); perr != nil {
		return perr
	}
	return err
}

// GcCmd is `git atlas gc [--before DUR] [--keep-last N] [--apply] [--recoveries [--max-size SIZE]]`.
type GcCmd struct {
	Before     *time.Duration `help:"Drop finished runs last updated longer ago than this (0s: every finished run; default 720h unless --keep-last or atlas.gc.keepLast is set)." placeholder:"DUR"`
	KeepLast   *int           `name:"keep-last" help:"Keep the newest N finished runs; drop those beyond them (default: git config atlas.gc.keepLast)." placeholder:"N"`
	Apply      bool           `help:"Do it; without --apply gc only prints its plan."`
	Recoveries bool           `help:"Also drop the recovery snapshots of dropped and vanished runs."`
	MaxSize    string         `name:"max-size" help:"With --recoveries: also drop finished runs' snapshots, oldest first, until the bytes only they hold fit in SIZE (500M, 2G: powers of 1024; default: git config atlas.gc.maxSize)." placeholder:"SIZE"`
	SnapshotFlags
}

// Run prints the plan, or applies it.
func (c *GcCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	snap, err := c.options()
	if err != nil {
		return err
	}
	req := ops.GCRequest{Before: c.Before, KeepLast: c.KeepLast, Apply: c.Apply, Recoveries: c.Recoveries, Snapshot: snap}
	if c.MaxSize != "" {
		if req.MaxSize, err = ops.ParseSize(c.MaxSize); err != nil {
			return err
		}
	}
	res, err := o.GC(env.Ctx, req)
	if res == nil {
		return err
	}
	if res.Incomplete != nil {
		env.warn("%v", res.Incomplete)
	}
	acts := res.Actions
	if perr := env.out(res, func(w io.Writer) {
		if len(acts) == 0 {
			fmt.Fprintln(w, "nothing to clean up")
			return
		}
		for _, a := range acts {
			what := a.Ref
			if a.Kind == ops.GCRemoveWorktree || a.Kind == ops.GCKeepWorktree || a.Kind == ops.GCRemoveLeftover || a.Path != "" {
				what = a.Path
			}
			state := "would"
			switch {
			case a.Kind == ops.GCKeepRun || a.Kind == ops.GCKeepWorktree || a.Kind == ops.GCKeepStray:
				state = "keep"
			case res.Applied && a.Skipped != "":
				state = "kept"
			case res.Applied:
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
			printIgnoredDeleted(w, a.IgnoredDeleted)
			printIgnoredToDelete(w, "", a.IgnoredToDelete)
		}
		if res.UnreachableUnknown != "" {
			fmt.Fprintf(w, "the bytes of objects left unreachable could not be measured: %s\n", res.UnreachableUnknown)
		} else if res.Applied {
			fmt.Fprintf(w, "%d bytes of objects became unreachable; git's own gc prunes them\n", res.UnreachableBytes)
		} else {
			fmt.Fprintf(w, "%d bytes of objects would become unreachable (git's own gc prunes them)\n", res.UnreachableBytes)
		}
		if !res.Applied {
			fmt.Fprintln(w, "(a plan: nothing was changed; run with --apply to do it)")
		}
	}); perr != nil {
		return perr
	}
	return err
}
