package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/ops"
)

// DuCmd is `git atlas du [RUN]`.
type DuCmd struct {
	RunID string `arg:"" optional:"" name:"run" help:"The run (default: every run)."`
}

// Help is the command's long help.
func (c *DuCmd) Help() string {
	return `Per run: each managed worktree's bytes, and its unshared bytes (in files whose every
hard link lies in that worktree: what removing it frees); each recovery snapshot's bytes
(of the objects reachable from it and from no other ref); and totals. Snapshot bytes
are freed only when git prunes the objects after their refs are deleted.`
}

// Run prints the disk usage.
func (c *DuCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Du(env.Ctx, ops.DuRequest{Run: c.RunID})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		t := newTable(w, "RUN", "WHAT", "BYTES", "UNSHARED")
		for _, r := range res.Runs {
			t.row(r.RunID, "worktrees", fmt.Sprint(r.WorktreeBytes), fmt.Sprint(r.UnsharedBytes))
			for _, x := range r.Worktrees {
				t.row("", "  "+x.Node, fmt.Sprint(x.Bytes), fmt.Sprint(x.Unshared))
			}
			t.row(r.RunID, "snapshots", fmt.Sprint(r.SnapshotBytes), "")
			for _, s := range r.Snapshots {
				t.row("", "  "+s.ID, fmt.Sprint(s.Bytes), "")
			}
		}
		t.row("total", "worktrees", fmt.Sprint(res.Totals.WorktreeBytes), fmt.Sprint(res.Totals.UnsharedBytes))
		t.row("total", "snapshots", fmt.Sprint(res.Totals.SnapshotBytes), "")
		t.flush()
	})
}
