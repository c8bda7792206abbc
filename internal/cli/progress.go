package cli

import (
	"github.com/git-atlas/git-atlas/internal/progress"
)

// progress returns where long work reports its progress: a bar on stderr when stderr
// is a terminal, and nil (no progress at all) with --json, with CI=true, or without a
// terminal, so machine output and logs never hold one. NO_COLOR does not matter: the
// bar has no colour.
func (e *Env) progress() *termProgress {
	if e.JSON || e.getenv("CI") == "true" || !e.isTerminal(e.Stderr) {
		return nil
	}
	return &termProgress{progress.NewBar(e.Stderr)}
}

// termProgress is progress.Bar with each phase's name made safe for the terminal.
type termProgress struct{ *progress.Bar }

func (t termProgress) Start(what string, total int) { t.Bar.Start(terminalSafe(what), total) }
