package cli

import (
	"fmt"
	"io"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/web"
)

// WebCmd is `git atlas web`: the read-only dashboard (docs/contract.md §16).
type WebCmd struct {
	Port    int  `help:"Listen on this port of 127.0.0.1 (default: a free one)." placeholder:"N"`
	Open    bool `help:"Open the dashboard in the web browser (git web--browse)."`
	NoToken bool `name:"no-token" help:"Serve without the random token (loopback and Host checks still hold)."`
}

// Help is the command's long help.
func (c *WebCmd) Help() string {
	return `Serves a read-only dashboard of this repository's runs on 127.0.0.1 until
interrupted (Ctrl-C ends it with exit 0): the runs, interrupted first; a run's stages
or DAG (drawn as SVG), driver, attempts, budgets, next_action, worktrees, snapshots
with their diff, and events, with the state at any event. Pages update when the
ledger changes. The same documents as the commands' --json are under /api/ (/api/runs,
/api/runs/RUN, /api/runs/RUN/log, /api/runs/RUN/graph, /api/runs/RUN/plan).
It prints the URL to open, with a random token every request needs (the first visit
sets a cookie); with --json, {"url": ...}. Requests whose Host is not 127.0.0.1,
localhost or [::1] are refused, and only GET and HEAD are answered.`
}

// webURL is web --json's document.
type webURL struct {
	URL string `json:"url"`
}

// Run serves until the command is interrupted.
func (c *WebCmd) Run(env *Env) error {
	if c.Port < 0 || c.Port > 65535 {
		return fault.Usage("--port must be between 0 and 65535")
	}
	o, err := env.Ops()
	if err != nil {
		return err
	}
	env.signalEnds = true
	// The dashboard's documents are the commands' own (run in the repository), for
	// whoever reads them: its steps carry no -C or --remote of the server's.
	o.Spelling = Spelling
	return web.Serve(env.Ctx, web.Options{Ops: o, Port: c.Port, NoToken: c.NoToken, Spelling: Spelling, Ready: func(url string) error {
		if err := env.out(webURL{URL: url}, func(w io.Writer) { fmt.Fprintln(w, url) }); err != nil {
			return err
		}
		if c.Open {
			go func() {
				// Interrupted while the launcher still ran (a launcher may
				// wait for its browser): the person ended it; no warning.
				if err := o.Browse(env.Ctx, url); err != nil && env.Ctx.Err() == nil {
					env.warn("cannot open a browser: %v", err)
				}
			}()
		}
		return nil
	}})
}
