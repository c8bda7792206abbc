package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/ops"
)

// SnapshotFlags tune the snapshots a command takes.
type SnapshotFlags struct {
	IncludeIgnored bool   `name:"include-ignored" help:"${snapshot_include_ignored}"`
	IgnoredCap     string `name:"ignored-cap" help:"${snapshot_ignored_cap}" placeholder:"SIZE"`
}

// options are the snapshot options the flags give.
func (f SnapshotFlags) options() (ops.SnapshotOptions, error) {
	if f.IgnoredCap == "" { // the request's default
		return ops.SnapshotOptions{IncludeIgnored: f.IncludeIgnored}, nil
	}
	n, err := parseSize(f.IgnoredCap)
	if err != nil {
		return ops.SnapshotOptions{}, err
	}
	return ops.SnapshotOptions{IncludeIgnored: f.IncludeIgnored, IgnoredCap: n}, nil
}

// parseSize reads 123, 10K, 10KiB, 5M, 5MB, 1G (binary multiples).
func parseSize(s string) (int64, error) { return ops.ParseSize(s) }

// WorktreeRemoveCmd is `git atlas worktree remove RUN NODE`.
type WorktreeRemoveCmd struct {
	RunID string `arg:"" name:"run" help:"${worktree_remove_run}"`
	Node  string `arg:"" help:"${worktree_remove_node}"`
	SnapshotFlags
	DriverFlags
}

// Run preserves, then removes.
func (c *WorktreeRemoveCmd) Run(env *Env) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.WorktreeRemove(env.Ctx, ops.WorktreeRemoveRequest{Run: c.RunID, Node: c.Node, Snapshot: opt, Driver: c.ops()})
	if err != nil {
		if res != nil && res.Snapshot != nil {
			env.warn("snapshot %s was taken and kept", res.Snapshot.ID)
		}
		return err
	}
	return env.out(res, func(w io.Writer) {
		if res.Snapshot != nil {
			fmt.Fprintf(w, "snapshot %s (%s)\n  ref   %s\n  patch %s\n", res.Snapshot.ID, strings.Join(res.Reasons, ", "), res.Snapshot.Ref, res.Snapshot.Patch)
		}
		fmt.Fprintf(w, "removed %s\n", res.Path)
		printIgnoredDeleted(w, res.IgnoredDeleted)
	})
}

// printIgnoredDeleted names the ignored files a removal deleted without keeping
// their bytes (they stay out of snapshots, which are pushed).
func printIgnoredDeleted(w io.Writer, list []ops.IgnoredEntry) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "deleted ignored files, not in the snapshot (--include-ignored keeps them):\n")
	for _, e := range list {
		name := displayPath(e.String())
		if e.Dir {
			name += "/"
		}
		fmt.Fprintf(w, "  %s  %d file(s), %d bytes\n", name, e.Files, e.Size)
	}
}

// printIgnoredToDelete names, in a plan, the ignored files a reset or removal would
// delete without keeping their bytes (of node, when given).
func printIgnoredToDelete(w io.Writer, node string, list []ops.IgnoredEntry) {
	if len(list) == 0 {
		return
	}
	of := ""
	if node != "" {
		of = " of " + ledgerText(node, cellMax)
	}
	fmt.Fprintf(w, "would delete ignored files%s, not in the snapshot (--include-ignored keeps them, up to --ignored-cap):\n", of)
	for _, e := range list {
		name := displayPath(e.String())
		if e.Dir {
			name += "/"
		}
		fmt.Fprintf(w, "  %s  %d file(s), %d bytes\n", name, e.Files, e.Size)
	}
}

// RecoverCmd is `git atlas recover RUN --stage S`.
type RecoverCmd struct {
	RunID    string `arg:"" name:"run" help:"${recover_run}"`
	Stage    string `required:"" help:"${recover_stage}" placeholder:"STAGE"`
	Node     string `help:"${recover_node}" placeholder:"NODE"`
	Worktree bool   `help:"${recover_worktree}"`
	Apply    bool   `help:"${recover_apply}"`
	PatchOut string `name:"patch-out" type:"path" help:"${recover_patch_out}" placeholder:"FILE"`
	Force    bool   `help:"${recover_force}"`
	SnapshotFlags
	DriverFlags
}

// Run preserves and replays.
func (c *RecoverCmd) Run(env *Env) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Recover(env.Ctx, ops.RecoverRequest{Run: c.RunID, Stage: c.Stage, Node: c.Node, Worktree: c.Worktree, Apply: c.Apply,
		PatchOut: c.PatchOut, Force: c.Force, Snapshot: opt, Driver: c.ops()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		if res.Snapshot != nil {
			what := "worktree of " + res.Snapshot.Node
			if res.Source != nil && *res.Source == ops.SourceCheckout {
				what = "your checkout " + res.Checkout + " (unchanged)"
			}
			fmt.Fprintf(w, "snapshot %s of %s\n  ref   %s\n  patch %s\n", res.Snapshot.ID, what, res.Snapshot.Ref, res.Snapshot.Patch)
		} else {
			fmt.Fprintf(w, "no snapshot: the stage's worktree is gone\n")
		}
		fmt.Fprintf(w, "replay branch %s at %s\n", res.Replay.Branch, short(res.Replay.Baseline))
		if res.Replay.Worktree != nil {
			applied := ""
			if res.Applied {
				applied = " (snapshot applied)"
			}
			fmt.Fprintf(w, "worktree %s%s\n", *res.Replay.Worktree, applied)
		}
	})
}

// RecoveryGroup is `git atlas recovery ...`.
type RecoveryGroup struct {
	List    RecoveryListCmd    `cmd:"" help:"List recovery snapshots."`
	Show    RecoveryShowCmd    `cmd:"" help:"Show what a snapshot holds."`
	Restore RecoveryRestoreCmd `cmd:"" help:"Restore a snapshot into a new directory or worktree."`
}

// RecoveryListCmd is `git atlas recovery list [RUN]`.
type RecoveryListCmd struct {
	RunID string `arg:"" optional:"" name:"run" help:"${recovery_list_run}"`
}

// Run lists snapshots.
func (c *RecoveryListCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.RecoveryList(env.Ctx, ops.RecoveryListRequest{Run: c.RunID, ForAgent: env.forAgent()})
	if err != nil {
		return err
	}
	now := env.now()
	return env.out(res, func(w io.Writer) {
		if len(res.Snapshots) == 0 {
			fmt.Fprintln(w, "no snapshots")
			return
		}
		t := newTable(w, "SNAPSHOT", "RUN", "NODE", "STAGE", "SOURCE", "TAKEN", "REASON")
		for _, v := range res.Snapshots {
			t.row(v.ID, v.RunID, dash(v.Node), dash(v.Stage), dash(v.Source), dash(ageOrEmpty(v.CreatedAt, now)), dash(v.Reason))
		}
		t.flush()
	})
}

// RecoveryShowCmd is `git atlas recovery show SNAPSHOT`.
type RecoveryShowCmd struct {
	Snapshot string `arg:"" help:"${recovery_show_snapshot}"`
}

// Run shows a snapshot.
func (c *RecoveryShowCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	v, err := o.RecoveryShow(env.Ctx, ops.RecoveryShowRequest{Snapshot: c.Snapshot, ForAgent: env.forAgent()})
	if err != nil {
		return err
	}
	m := v.Manifest
	return env.out(v, func(w io.Writer) {
		fmt.Fprintf(w, "snapshot  %s/%s\n", v.RunID, v.ID)
		fmt.Fprintf(w, "ref       %s (%s)\n", v.Ref, short(v.Commit))
		if m.Source == ops.SourceCheckout {
			fmt.Fprintf(w, "source    the user's checkout (read-only)\n")
		} else {
			fmt.Fprintf(w, "source    worktree of node %s\n", m.Node)
		}
		fmt.Fprintf(w, "head      %s %s\n", dash(short(m.Head.String())), strings.TrimPrefix(m.Branch, "refs/heads/"))
		fmt.Fprintf(w, "baseline  %s\n", short(m.Baseline.String()))
		if v.Patch != "" {
			fmt.Fprintf(w, "patch     %s\n", v.Patch)
		}
		section := func(title string, list []ops.ChangeView) {
			if len(list) == 0 {
				return
			}
			fmt.Fprintf(w, "\n%s:\n", title)
			for _, c := range list {
				fmt.Fprintf(w, "  %s %s\n", c.Status, displayPath(c.String()))
			}
		}
		section("staged", v.Staged)
		section("unstaged and untracked", v.Unstaged)
		if len(m.Unmerged) > 0 {
			fmt.Fprintf(w, "\nunmerged:\n")
			for _, n := range m.Unmerged {
				fmt.Fprintf(w, "  %s\n", displayPath(n.String()))
			}
		}
		if len(m.Ignored) > 0 {
			fmt.Fprintf(w, "\nignored:\n")
			for _, e := range m.Ignored {
				fmt.Fprintf(w, "  %s  %d file(s), %d bytes, %d kept\n", displayPath(e.String()), e.Files, e.Size, e.Included)
			}
		}
	})
}

// displayPath quotes a path the way git does when it holds control characters or
// bytes that are not UTF-8, so one path stays on one line.
func displayPath(p string) string {
	if q := strconv.Quote(p); q != `"`+p+`"` {
		return q
	}
	return p
}

// RecoveryRestoreCmd is `git atlas recovery restore SNAPSHOT --to PATH`.
type RecoveryRestoreCmd struct {
	Snapshot string `arg:"" help:"${recovery_restore_snapshot}"`
	To       string `required:"" type:"path" help:"${recovery_restore_to}" placeholder:"PATH"`
	Worktree bool   `help:"${recovery_restore_worktree}"`
}

// Run restores a snapshot.
func (c *RecoveryRestoreCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.RecoveryRestore(env.Ctx, ops.RecoveryRestoreRequest{Snapshot: c.Snapshot, To: c.To, Worktree: c.Worktree})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		what := "files"
		if c.Worktree {
			what = "worktree (index and files)"
		}
		fmt.Fprintf(w, "restored %s/%s into %s: %s, checked against the snapshot\n", res.RunID, res.Snapshot, c.To, what)
	})
}
