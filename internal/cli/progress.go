package cli

import (
	"github.com/git-atlas/git-atlas/internal/progress"
)

// progress returns where long work reports its progress: a bar on stderr when stderr
// is a terminal, and nil (no progress at all) with --json, with CI=true, or without a
// terminal, so machine output and logs never hold one. NO_COLOR does not matter: the
// bar has no colour. The nil is a *termProgress: store it in a progress.Reporter only
// when it is not nil (Env.Repo), or the interface holds a nil pointer and is not nil.
func (e *Env) progress() *termProgress {
	if e.JSON || e.getenv("CI") == "true" || !e.isTerminal(e.Stderr) {
		return nil
	}
	return &termProgress{progress.NewBar(e.Stderr)}
}

// termProgress is progress.Bar with each phase's name made safe for the terminal (its
// Note, for a line to the person, takes text already made safe: lockWaitNote).
type termProgress struct{ *progress.Bar }

func (t termProgress) Start(what string, total int) { t.Bar.Start(terminalSafe(what), total) }
