package cli

import (
	"fmt"
	"os"
	"strings"
	"sync"

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

// termProgress draws one bar per phase on one line, redrawn in place, and clears it
// when the phase ends, so that what the command prints next starts on a clean line.
// (Drawn here rather than by a library: the one used before linked net/http and
// crypto/tls into every git-atlas process, a measurable part of its start-up.)
type termProgress struct {
	e        *Env
	mu       sync.Mutex
	what     string
	n, total int
	drawn    bool
}

const barWidth = 30

func (p *termProgress) Start(what string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.what, p.n, p.total = what, 0, total
	if total > 0 {
		p.draw()
	}
}

func (p *termProgress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total > 0 {
		p.n = min(p.n+n, p.total)
		p.draw()
	}
}

func (p *termProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.total = 0
}

// draw redraws the line: "what  33% |██████████          | (1/3)".
func (p *termProgress) draw() {
	fill := p.n * barWidth / p.total
	fmt.Fprintf(p.e.Stderr, "\r\x1b[K%s %3d%% |%s%s| (%d/%d)", terminalSafe(p.what), p.n*100/p.total,
		strings.Repeat("█", fill), strings.Repeat(" ", barWidth-fill), p.n, p.total)
	p.drawn = true
}

func (p *termProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.e.Stderr, "\r\x1b[K")
		p.drawn = false
	}
}
