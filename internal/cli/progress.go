package cli

import (
	"sync"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/git-atlas/git-atlas/internal/progress"
)

// progress returns where long work reports its progress: a bar on stderr when stderr
// is a terminal, and nil (no progress at all) with --json, with CI=true, or without a
// terminal, so machine output and logs never hold one. NO_COLOR does not matter: the
// bar has no colour.
func (e *Env) progress() progress.Reporter {
	if e.JSON || e.getenv("CI") == "true" || !e.isTerminal(e.Stderr) {
		return nil
	}
	return &termProgress{e: e}
}

// termProgress draws one bar per phase with mpb (maintained, and unlike the
// progressbar module it links no net/http into every git-atlas process), and removes
// it when the phase ends, so that what the command prints next starts on a clean
// line. It renders on every step (manual refresh) rather than on a timer: a phase of
// a few steps shows each of them, and no goroutine outlives the phase.
type termProgress struct {
	e       *Env
	mu      sync.Mutex
	p       *mpb.Progress
	bar     *mpb.Bar
	refresh chan any
}

func (t *termProgress) Start(what string, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.end()
	if total <= 0 {
		return
	}
	t.refresh = make(chan any)
	t.p = mpb.New(mpb.WithOutput(t.e.Stderr), mpb.WithWidth(30), mpb.WithManualRefresh(t.refresh))
	t.bar = t.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(terminalSafe(what), decor.WCSyncSpaceR), decor.Percentage(decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.CountersNoUnit("(%d/%d)")),
		mpb.BarRemoveOnComplete(),
	)
	t.refresh <- struct{}{}
}

func (t *termProgress) Add(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar == nil || t.bar.Completed() {
		return
	}
	t.bar.IncrBy(n)
	if !t.bar.Completed() {
		t.refresh <- struct{}{}
	}
}

func (t *termProgress) Done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.end()
}

// end removes the phase's bar (complete or not) and waits for mpb to let go of the
// terminal.
func (t *termProgress) end() {
	if t.p == nil {
		return
	}
	if !t.bar.Completed() {
		t.bar.Abort(true)
	}
	t.p.Wait()
	t.p, t.bar, t.refresh = nil, nil, nil
}
