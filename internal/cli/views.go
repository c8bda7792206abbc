package cli

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/views"
)

// GraphCmd is `git atlas graph RUN` (SPEC §14).
type GraphCmd struct {
	RunID  string `arg:"" name:"run" help:"The run."`
	Format string `default:"text" enum:"text,dot,mermaid,json" help:"text (for people), dot (Graphviz), mermaid or json."`
	At     *int   `help:"Draw the run as it was right after event SEQ." placeholder:"SEQ"`
}

// Run draws the run: a graph run's DAG, or a single run's stages.
func (c *GraphCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	var r *gitstate.Run
	if c.At != nil {
		r, err = store.LoadAt(env.Ctx, c.RunID, *c.At)
	} else {
		r, err = store.Load(env.Ctx, c.RunID)
	}
	if err != nil {
		return err
	}
	g := views.Build(r)
	switch {
	case env.JSON || c.Format == "json":
		return printJSON(env.Stdout, g)
	case c.Format == "dot":
		return views.Dot(env.Stdout, g)
	case c.Format == "mermaid":
		return views.Mermaid(env.Stdout, g)
	}
	width, colour := textTerminal(env.Stdout)
	return views.Text(env.Stdout, g, views.TextOptions{Width: width, Colour: colour})
}

// textTerminal is the width to draw in and whether to colour: colour only on a
// terminal and never with NO_COLOR (https://no-color.org) or TERM=dumb; the
// terminal's width when it is one, else 80.
func textTerminal(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 80, false
	}
	width := 80
	if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols >= 40 {
		width = cols
	}
	return width, os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
