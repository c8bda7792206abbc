package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ops"
)

// TrustCmd is `git atlas trust RUN` (docs/contract.md §10): a person approves the commands a run
// carries, here; --revoke and --list.
type TrustCmd struct {
	RunID  string `arg:"" optional:"" name:"run" help:"The run whose commands to trust here."`
	Revoke bool   `help:"Forget the run's trusted commands: none of them runs here until trusted again." xor:"mode"`
	List   bool   `help:"List the commands runs carry and whether each is trusted here (one run when RUN is given), with each run's digest." xor:"mode"`
	Digest string `help:"With --yes: trust only if the run's commands and text are still those whose digest --list printed (else nothing is trusted, exit 3)." placeholder:"D"`
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
Commands are shown whole, Go-quoted, with long runs of spaces counted, never cut.
On a terminal it shows them and asks first; without one it needs --yes and --digest D,
the digest trust --list RUN printed for exactly the commands you read: when the run's
commands changed since (a pull, a job added), nothing is trusted and it exits 3.

Trusting a run also lets its text reach agents here: its intent, and its header as it
now stands (criteria, managed_by, resume_with, setup, stage definitions). Of a run
started here, agents get that header text only as this clone wrote it; trust --list
RUN shows, whole, what is withheld from them until the run is trusted
(header_withheld), and its digest covers that text as well as the commands.`
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
	req := ops.TrustRequest{Run: c.RunID, Yes: env.Yes, Digest: c.Digest}
	if !env.headless() {
		req.Confirm = func(intent string, withheld []ops.TrustHeaderText, cmds []ops.TrustCommand, untrusted int) (bool, error) {
			printCommands(env.Stderr, c.RunID, intent, cmds)
			printWithheld(env.Stderr, withheld)
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
		printCommands(w, c.RunID, res.Intent, res.Commands)
		fmt.Fprintf(w, "digest %s\n", res.Digest)
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
		for i, rc := range res.Runs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			printCommands(w, rc.RunID, rc.Intent, rc.Commands)
			printWithheld(w, rc.HeaderWithheld)
			fmt.Fprintf(w, "digest %s\n", rc.Digest)
		}
	})
}

// printCommands prints a run's commands, each whole on a line of its own
// (text.Command: quoted, escaped, long runs of spaces counted, never cut at a cell
// width): they came from the ledger, and what a person trusts must be what they read.
func printCommands(w io.Writer, run, intent string, cmds []ops.TrustCommand) {
	fmt.Fprintf(w, "run %s\n", ledgerText(run, 0))
	if intent != "" {
		fmt.Fprintf(w, "  intent %s\n", text.ShowCommand(intent))
	}
	for _, cm := range cmds {
		fmt.Fprintf(w, "  %-3s  %s\n    %s\n", trustedWord(cm.Trusted), ledgerText(cm.Where, 0), text.ShowCommand(cm.Command))
	}
}

// printWithheld prints the header text agents do not get until the run is trusted,
// each member whole (JSON, shown as printCommands shows a command).
func printWithheld(w io.Writer, withheld []ops.TrustHeaderText) {
	if len(withheld) == 0 {
		return
	}
	fmt.Fprintln(w, "  header text withheld from agents until trusted:")
	for _, m := range withheld {
		fmt.Fprintf(w, "    %s %s\n", ledgerText(m.Member, 0), text.ShowCommand(string(m.Value)))
	}
}

func trustedWord(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
