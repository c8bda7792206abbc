package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/trust"
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
	if c.RunID != "" {
		if err := gitstate.ValidName("run", c.RunID); err != nil {
			return err
		}
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	repo := store.Repo
	if c.List {
		return c.list(env, store)
	}
	if c.RunID == "" {
		return fault.Usage("name the run whose commands to trust (or --list)")
	}
	if c.Revoke {
		if err := trust.Revoke(env.Ctx, repo, c.RunID); err != nil {
			return err
		}
		return env.out(map[string]any{"run_id": c.RunID, "revoked": true}, func(w io.Writer) {
			fmt.Fprintf(w, "%s: no command of this run is trusted here any more\n", c.RunID)
		})
	}
	r, err := store.Load(env.Ctx, c.RunID)
	if err != nil {
		return err
	}
	cmds, err := trust.Check(env.Ctx, repo, r)
	if err != nil {
		return err
	}
	var todo []string
	for _, cm := range cmds {
		if !cm.Trusted {
			todo = append(todo, cm.Command)
		}
	}
	if len(todo) > 0 {
		switch {
		case !env.headless():
			printCommands(env.Stderr, cmds)
			ans, err := env.ask(fmt.Sprintf("Trust %d command(s) of run %s to run in this repository?", len(todo), c.RunID), []string{"yes", "no"})
			if err != nil {
				return err
			}
			if ans != "yes" {
				return fault.Refused("nothing trusted: run %s's commands stay untrusted here", c.RunID)
			}
		case !env.Yes:
			return fault.Usage("trusting run %s's commands needs a person: run it on a terminal, or pass --yes after reading them (`git atlas trust --list %s`)", c.RunID, c.RunID)
		}
		if err := trust.Record(env.Ctx, repo, c.RunID, todo...); err != nil {
			return err
		}
	}
	for i := range cmds {
		cmds[i].Trusted = true
	}
	return env.out(map[string]any{"run_id": c.RunID, "commands": cmds}, func(w io.Writer) {
		if len(cmds) == 0 {
			fmt.Fprintf(w, "%s carries no commands\n", c.RunID)
			return
		}
		printCommands(w, cmds)
	})
}

// list prints every run's commands (or RUN's) with whether each is trusted here.
func (c *TrustCmd) list(env *Env, store *gitstate.Store) error {
	runs, err := loadRuns(env, store, c.RunID)
	if err != nil {
		return err
	}
	type runCmds struct {
		RunID    string          `json:"run_id"`
		Commands []trust.Command `json:"commands"`
	}
	out := []runCmds{}
	for _, r := range runs {
		cmds, err := trust.Check(env.Ctx, store.Repo, r)
		if err != nil {
			return err
		}
		if len(cmds) > 0 {
			out = append(out, runCmds{r.Header.RunID, cmds})
		}
	}
	return env.out(map[string]any{"runs": out}, func(w io.Writer) {
		if len(out) == 0 {
			fmt.Fprintln(w, "no run carries commands")
			return
		}
		t := newTable(w, "RUN", "TRUSTED", "WHERE", "COMMAND")
		for _, rc := range out {
			for _, cm := range rc.Commands {
				t.row(rc.RunID, trustedWord(cm.Trusted), cm.Where, fmt.Sprintf("%q", cm.Command))
			}
		}
		t.flush()
	})
}

// printCommands prints a run's commands, one a line, quoted: they came from the ledger,
// and a pulled run's text must not reach the terminal raw.
func printCommands(w io.Writer, cmds []trust.Command) {
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
