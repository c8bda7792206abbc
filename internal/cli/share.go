package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/share"
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
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	if name == "" {
		// The remote this clone coordinates through is the one to sync with.
		if name, err = env.remote(repo); err != nil {
			return err
		}
	}
	remote, err := share.ResolveRemote(env.Ctx, repo, name)
	if err != nil {
		return err
	}
	transfer, moved := share.Pull, "updated"
	if push {
		transfer, moved = share.Push, "pushed"
	}
	rep, err := transfer(env.Ctx, repo, remote)
	if rep != nil {
		if perr := env.out(reportJSON(rep, push), func(w io.Writer) { printReport(w, rep, moved, push) }); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

func printReport(w io.Writer, rep *share.Report, moved string, push bool) {
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

// reportJSON is push's or pull's JSON: every list present, [] when empty. Push's
// "pushed" is every ref sent and "created" those of them new on the remote; pull's
// "created" and "updated" are disjoint.
func reportJSON(rep *share.Report, push bool) map[string]any {
	changes := func(c []share.RefChange) []share.RefChange {
		if c == nil {
			return []share.RefChange{}
		}
		return c
	}
	refs := func(r []string) []string {
		if r == nil {
			return []string{}
		}
		return r
	}
	m := map[string]any{
		"remote":        rep.Remote,
		"up_to_date":    refs(rep.UpToDate),
		"diverged":      changes(rep.Diverged),
		"diverged_runs": refs(rep.DivergedRuns()),
		"skipped":       changes(rep.Skipped),
	}
	if push {
		m["pushed"], m["created"], m["behind"] = changes(rep.Pushed), changes(rep.Created), refs(rep.Behind)
	} else {
		m["created"], m["updated"], m["ahead"] = changes(rep.Created), changes(rep.Updated), refs(rep.Ahead)
	}
	return m
}
