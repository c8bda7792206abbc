package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-atlas/git-atlas/ops"
	"github.com/git-atlas/git-atlas/views"
)

// GraphCmd is `git atlas graph RUN` (docs/contract.md §14).
type GraphCmd struct {
	RunID  string `arg:"" name:"run" help:"The run."`
	Format string `default:"text" enum:"text,dot,mermaid,json" help:"text (for people), dot (Graphviz), mermaid or json."`
	At     *int   `help:"Draw the run as it was right after event SEQ." placeholder:"SEQ"`
}

// Run draws the run: a graph run's DAG, or a single run's stages.
func (c *GraphCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	g, err := o.Graph(env.Ctx, ops.ShowRequest{Run: c.RunID, At: c.At})
	if err != nil {
		return err
	}
	if env.JSON || c.Format == "json" {
		return printJSON(env.Stdout, g) // the exact data
	}
	// text, dot and mermaid reach terminals: ledger text in them is escaped.
	g = safeGraph(g)
	switch c.Format {
	case "dot":
		return views.Dot(env.Stdout, g)
	case "mermaid":
		return views.Mermaid(env.Stdout, g)
	}
	width, colour := textTerminal(env)
	return views.Text(env.Stdout, g, views.TextOptions{Width: width, Colour: colour})
}

// safeGraph is g with every text that comes from the ledger (a pulled run may hold
// anything in any field) passed through ledgerText, uncut: the views cut what they
// draw themselves, and their own colours are not ledger text.
func safeGraph(g *views.Graph) *views.Graph {
	t := func(s string) string { return ledgerText(s, 0) }
	list := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = t(s)
		}
		return out
	}
	c := *g
	c.RunID, c.Kind, c.Status = t(g.RunID), t(g.Kind), t(g.Status)
	c.Ready = list(g.Ready)
	c.Nodes = make([]views.Node, len(g.Nodes))
	for i, n := range g.Nodes {
		n.ID, n.State, n.Holder, n.Lease, n.ExpiresAt, n.Reason = t(n.ID), t(n.State), t(n.Holder), t(n.Lease), t(n.ExpiresAt), t(n.Reason)
		n.Needs, n.Conflicted = list(n.Needs), list(n.Conflicted)
		n.OutsideScope, n.AllowedOutsideScope = list(n.OutsideScope), list(n.AllowedOutsideScope)
		c.Nodes[i] = n
	}
	c.Edges = make([]views.Edge, len(g.Edges))
	for i, e := range g.Edges {
		c.Edges[i] = views.Edge{From: t(e.From), To: t(e.To)}
	}
	if g.Union != nil {
		c.Union = &views.Union{Head: t(g.Union.Head), Integrated: list(g.Union.Integrated), Conflicted: list(g.Union.Conflicted),
			OutsideScope: list(g.Union.OutsideScope), AllowedOutsideScope: list(g.Union.AllowedOutsideScope)}
	}
	c.Stages = make([]views.Stage, len(g.Stages))
	for i, st := range g.Stages {
		st.Name, st.Status, st.Gate = t(st.Name), t(st.Status), t(st.Gate)
		c.Stages[i] = st
	}
	return &c
}

// textTerminal is the width to draw in and whether to colour: colour only on a
// terminal and never with NO_COLOR (https://no-color.org) or TERM=dumb; the
// terminal's width when it is one, else 80.
func textTerminal(env *Env) (int, bool) {
	ok, cols := env.terminalWidth(env.Stdout)
	if !ok {
		return 80, false
	}
	width := 80
	if cols >= 40 {
		width = cols
	}
	return width, env.getenv("NO_COLOR") == "" && env.getenv("TERM") != "dumb"
}

// UndoCmd is `git atlas undo RUN --to SEQ --holder H` (docs/contract.md §14).
type UndoCmd struct {
	RunID string `arg:"" name:"run" help:"The run."`
	To    int    `required:"" help:"The event whose state to go back to (see git atlas log)." placeholder:"SEQ"`
	DriverFlags
}

// Run appends one event whose state is event SEQ's, made honest (ledger.Undo).
func (c *UndoCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Undo(env.Ctx, ops.UndoRequest{Run: c.RunID, To: c.To, Driver: c.ops()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s #%d: %s\n", c.RunID, res.Seq, res.UndoResult)
		if len(res.ResetJobs) > 0 {
			fmt.Fprintf(w, "jobs back to PENDING (their leases are stale): %s\n", strings.Join(res.ResetJobs, ", "))
		}
		fmt.Fprintln(w, "kept as now: gas spent, attempts, worktrees, snapshots, union, replay branches")
	})
}
