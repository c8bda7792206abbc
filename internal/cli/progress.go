package cli

import (
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/git-atlas/git-atlas/internal/progress"
)

// progress returns where long work reports its progress: a bar on stderr when stderr
// is a terminal, and nil (no progress at all) with --json, with CI=true, or without a
// terminal, so machine output and logs never hold one. NO_COLOR does not matter: the
// bar has no colour.
func (e *Env) progress() progress.Reporter {
	if e.JSON || os.Getenv("CI") == "true" || !isTerminal(e.Stderr) {
		return nil
	}
	return &termProgress{e: e}
}

// termProgress draws one progressbar per phase and clears it when the phase ends, so
// that what the command prints next starts on a clean line.
type termProgress struct {
	e   *Env
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

func (p *termProgress) Start(what string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	if total == 0 {
		p.bar = nil
		return
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.e.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionUseANSICodes(true),
	)
}

func (p *termProgress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Add(n)
	}
}

func (p *termProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
