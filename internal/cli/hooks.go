package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/git-atlas/git-atlas/ops"
)

// HooksCmd is `git atlas hooks`.
type HooksCmd struct {
	Install   HooksInstallCmd   `cmd:"" help:"Install the post-checkout hook (honours core.hooksPath; a hook already there keeps running first)."`
	Uninstall HooksUninstallCmd `cmd:"" help:"Remove the post-checkout hook and restore the one it replaced, byte for byte."`
	Status    HooksStatusCmd    `cmd:"" help:"Say whether the post-checkout hook is installed, absent, or someone else's."`
}

// HooksInstallCmd is `git atlas hooks install`.
type HooksInstallCmd struct {
	Global bool `help:"Allow changing a hooks directory that core.hooksPath sets in the global or system git config (every repository using it runs the hook)."`
}

// Run installs the hook.
func (c *HooksInstallCmd) Run(env *Env) error {
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	req, err := hooksConsent(env, repo, c.Global, "install")
	if err != nil {
		return err
	}
	st, err := repo.HooksInstall(env.Ctx, req)
	if err != nil {
		return err
	}
	return env.out(st, func(w io.Writer) {
		if !st.Changed {
			fmt.Fprintf(w, "already installed: %s\n", st.Hook)
			return
		}
		fmt.Fprintf(w, "installed %s\n", st.Hook)
		if st.Chained != "" {
			fmt.Fprintf(w, "the hook that was there runs first, kept as %s\n", st.Chained)
		}
	})
}

// HooksUninstallCmd is `git atlas hooks uninstall`.
type HooksUninstallCmd struct {
	Global bool `help:"Allow changing a hooks directory that core.hooksPath sets in the global or system git config."`
}

// Run removes the hook.
func (c *HooksUninstallCmd) Run(env *Env) error {
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	req, err := hooksConsent(env, repo, c.Global, "uninstall")
	if err != nil {
		return err
	}
	st, err := repo.HooksUninstall(env.Ctx, req)
	if err != nil {
		return err
	}
	return env.out(st, func(w io.Writer) {
		switch {
		case !st.Changed:
			fmt.Fprintf(w, "not installed: %s\n", st.Hook)
		case st.State == ops.HookNotInstalled:
			fmt.Fprintf(w, "removed %s\n", st.Hook)
		default:
			fmt.Fprintf(w, "removed git-atlas's hook; restored the original %s\n", st.Hook)
		}
	})
}

// hooksConsent returns the options for install or uninstall. A hooks directory set in
// the global or system config is shared by other repositories: without --global, a
// terminal is asked; headless, hooks refuses (exit 2, nothing written).
func hooksConsent(env *Env, repo *ops.Ops, global bool, verb string) (ops.HooksRequest, error) {
	req := ops.HooksRequest{Global: global}
	if global || env.headless() {
		return req, nil
	}
	st, err := repo.HooksInspect(env.Ctx)
	if err != nil || !st.Shared() {
		return req, err
	}
	ans, err := env.ask(fmt.Sprintf("core.hooksPath is set in your %s git config: %s %s, for every repository using it?", st.Scope, verb, st.Hook), []string{"yes", "no"})
	if err != nil {
		return req, err
	}
	req.Global = ans == "yes"
	return req, nil
}

// HooksStatusCmd is `git atlas hooks status`.
type HooksStatusCmd struct{}

// Run describes the hook.
func (c *HooksStatusCmd) Run(env *Env) error {
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	st, err := repo.HooksInspect(env.Ctx)
	if err != nil {
		return err
	}
	return env.out(st, func(w io.Writer) {
		switch st.State {
		case ops.HookInstalled:
			note := ""
			if !st.Current {
				note = " (an older version: `git atlas hooks install` updates it)"
			}
			fmt.Fprintf(w, "installed: %s%s\n", st.Hook, note)
			if st.Chained != "" {
				fmt.Fprintf(w, "runs first: %s\n", st.Chained)
			}
		case ops.HookForeign:
			fmt.Fprintf(w, "foreign: %s is not git-atlas's hook (`git atlas hooks install` keeps it running first)\n", st.Hook)
		default:
			fmt.Fprintf(w, "not installed (hooks directory %s)\n", st.Dir)
		}
	})
}

// HookCmd is the hidden `git atlas hook NAME ARGS...` that the installed hook runs. It
// never fails and prints at most one line, on stderr: a checkout must not break
// because of git-atlas.
type HookCmd struct {
	Name string   `arg:"" help:"The hook git ran."`
	Args []string `arg:"" optional:"" passthrough:"" help:"git's arguments to the hook."`
}

// Run does the hook's work and always succeeds.
func (c *HookCmd) Run(env *Env) error {
	if c.Name != ops.HookName {
		return nil // a hook of a newer git-atlas: nothing this version knows to do
	}
	ctx, cancel := context.WithTimeout(env.Ctx, 5*time.Second)
	defer cancel()
	local := "" // a checkout never reads through atlas.remote: no fork, no network
	env.Remote = &local
	o, err := env.Ops() // the repository was opened while kong parsed
	if err != nil {
		return nil
	}
	res, err := o.PostCheckout(ctx, ops.CheckoutRequest{Args: c.Args})
	if err != nil {
		return nil
	}
	switch {
	case res.Untrusted:
		fmt.Fprintf(env.Stderr, "git-atlas: worktree of run %s node %s left its branch: marked untrusted (resume will snapshot and recreate it)\n", ledgerText(res.Run, cellMax), ledgerText(res.Node, cellMax))
	case len(res.Interrupted) > 0:
		fmt.Fprintln(env.Stderr, ops.InterruptedLine(res.Interrupted, func(s string) string { return ledgerText(s, cellMax) }))
	}
	return nil
}
