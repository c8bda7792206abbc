package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/ops"
)

// PushCmd is `git atlas push`.
type PushCmd struct {
	Remote string `arg:"" optional:"" help:"The remote (default: --remote, atlas.remote, origin, or the only remote)."`
}

// Run pushes the ledger.
func (c *PushCmd) Run(env *Env) error { return syncLedger(env, c.Remote, true) }

// PullCmd is `git atlas pull`.
type PullCmd struct {
	Remote string `arg:"" optional:"" help:"The remote (default: --remote, atlas.remote, origin, or the only remote)."`
}

// Run pulls the ledger.
func (c *PullCmd) Run(env *Env) error { return syncLedger(env, c.Remote, false) }

// syncLedger pushes or pulls the ledger and prints the report, also when the
// transfer partly failed (a diverged run): the report says what did move.
func syncLedger(env *Env, name string, push bool) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	req := ops.SyncRequest{Remote: name}
	var res any
	var rep syncReport
	moved := "updated"
	if push {
		moved = "pushed"
		r, perr := o.Push(env.Ctx, req)
		if r != nil {
			res, rep = r, syncReport{Remote: r.Remote, Pushed: r.Pushed, Created: r.Created, UpToDate: r.UpToDate, Behind: r.Behind, Diverged: r.Diverged, Skipped: r.Skipped}
		}
		err = perr
	} else {
		r, perr := o.Pull(env.Ctx, req)
		if r != nil {
			res, rep = r, syncReport{Remote: r.Remote, Created: r.Created, Updated: r.Updated, UpToDate: r.UpToDate, Ahead: r.Ahead, Diverged: r.Diverged, Skipped: r.Skipped}
		}
		err = perr
	}
	if res != nil {
		if perr := env.out(res, func(w io.Writer) { printReport(w, rep, moved, push) }); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

// syncReport is what push or pull did, for people.
type syncReport struct {
	Remote                                      string
	Pushed, Created, Updated, Diverged, Skipped []ops.RefChange
	UpToDate, Ahead, Behind                     []string
}

func printReport(w io.Writer, rep syncReport, moved string, push bool) {
	created := map[string]bool{}
	for _, c := range rep.Created {
		created[c.Ref] = true
	}
	n := 0 // refs moved that existed on the other side
	for _, c := range rep.Pushed {
		if created[c.Ref] {
			continue // listed below as created
		}
		n++
		fmt.Fprintf(w, "%-9s %s %s..%s\n", "pushed", c.Ref, dash(short(c.Remote)), short(c.Local))
	}
	for _, c := range rep.Created {
		id := c.Remote
		if push {
			id = c.Local
		}
		fmt.Fprintf(w, "%-9s %s %s\n", "created", c.Ref, short(id))
	}
	for _, c := range rep.Updated {
		n++
		fmt.Fprintf(w, "%-9s %s %s..%s\n", moved, c.Ref, short(c.Local), short(c.Remote))
	}
	for _, c := range rep.Diverged {
		fmt.Fprintf(w, "%-9s %s here %s, %s %s\n", "diverged", c.Ref, short(c.Local), rep.Remote, short(c.Remote))
		if c.KeptAs != "" {
			fmt.Fprintf(w, "%-9s %s: this repository's chain of run %s (git atlas log %s --diverged %s); the run is %s's now\n", "kept", c.KeptAs, c.RunID, c.RunID, lastComponent(c.KeptAs), rep.Remote)
		}
	}
	for _, c := range rep.Skipped {
		fmt.Fprintf(w, "%-9s %s (%s)\n", "skipped", c.Ref, c.Reason)
	}
	for _, r := range rep.Ahead {
		fmt.Fprintf(w, "%-9s %s (push carries it)\n", "ahead", r)
	}
	for _, r := range rep.Behind {
		fmt.Fprintf(w, "%-9s %s (the remote is ahead: nothing to push; pull brings it)\n", "behind", r)
	}
	fmt.Fprintf(w, "%s: %d %s, %d created, %d up to date, %d diverged", rep.Remote, n, moved, len(rep.Created), len(rep.UpToDate), len(rep.Diverged))
	if len(rep.Behind) > 0 {
		fmt.Fprintf(w, ", %d behind", len(rep.Behind))
	}
	if len(rep.Ahead) > 0 {
		fmt.Fprintf(w, ", %d ahead", len(rep.Ahead))
	}
	fmt.Fprintln(w)
}
