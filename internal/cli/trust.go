package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/ops"
)

// TrustCmd is `git atlas trust RUN` (SPEC §10): a person approves the commands a run
// carries, here; --revoke and --list.
type TrustCmd struct {
	RunID  string `arg:"" optional:"" name:"run" help:"The run whose commands to trust here."`
	Revoke bool   `help:"Forget the run's trusted commands: none of them runs here until trusted again." xor:"mode"`
	List   bool   `help:"List the commands runs carry and whether each is trusted here (one run when RUN is given)." xor:"mode"`
}

// Help is the command's long help.
func (c *TrustCmd) Help() string {
	return `A run carries commands: its verify and its stages' and jobs' verify commands. resume runs
a stage's verify only when this repository wrote it (start, job add --verify) or a person
trusted it here. A run that arrived by pull, a shared remote or import is untrusted:
resume --plan shows its commands as untrusted, and resume skips them and says so.

trust RUN shows the run's commands and records, in this repository only
(<git-common-dir>/atlas/trust/RUN, never in the ledger, never pushed), that they may run.
A command that changes later (a run pulled again with another command) is untrusted again.
On a terminal it asks first; without one it needs --yes.`
}

// Run trusts, revokes or lists.
func (c *TrustCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	if c.List {
		return c.list(env, o)
	}
	if c.Revoke {
		res, err := o.TrustRevoke(env.Ctx, ops.TrustRevokeRequest{Run: c.RunID})
		if err != nil {
			return err
		}
		return env.out(res, func(w io.Writer) {
			fmt.Fprintf(w, "%s: no command of this run is trusted here any more\n", c.RunID)
		})
	}
	req := ops.TrustRequest{Run: c.RunID, Yes: env.Yes}
	if !env.headless() {
		req.Confirm = func(cmds []ops.TrustCommand, untrusted int) (bool, error) {
			printCommands(env.Stderr, cmds)
			ans, err := env.ask(fmt.Sprintf("Trust %d command(s) of run %s to run in this repository?", untrusted, c.RunID), []string{"yes", "no"})
			return ans == "yes", err
		}
	}
	res, err := o.Trust(env.Ctx, req)
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		if len(res.Commands) == 0 {
			fmt.Fprintf(w, "%s carries no commands\n", c.RunID)
			return
		}
		printCommands(w, res.Commands)
	})
}

// list prints every run's commands (or RUN's) with whether each is trusted here.
func (c *TrustCmd) list(env *Env, o *ops.Ops) error {
	res, err := o.TrustList(env.Ctx, ops.TrustListRequest{Run: c.RunID})
	if err != nil {
		return err
	}
	for _, e := range res.Unreadable {
		env.warn("%v", e)
	}
	return env.out(res, func(w io.Writer) {
		if len(res.Runs) == 0 {
			fmt.Fprintln(w, "no run carries commands")
			return
		}
		t := newTable(w, "RUN", "TRUSTED", "WHERE", "COMMAND")
		for _, rc := range res.Runs {
			for _, cm := range rc.Commands {
				t.row(rc.RunID, trustedWord(cm.Trusted), cm.Where, fmt.Sprintf("%q", cm.Command))
			}
		}
		t.flush()
	})
}

// printCommands prints a run's commands, one a line, quoted: they came from the ledger,
// and a pulled run's text must not reach the terminal raw.
func printCommands(w io.Writer, cmds []ops.TrustCommand) {
	t := newTable(w, "TRUSTED", "WHERE", "COMMAND")
	for _, cm := range cmds {
		t.row(trustedWord(cm.Trusted), cm.Where, fmt.Sprintf("%q", cm.Command))
	}
	t.flush()
}

func trustedWord(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
