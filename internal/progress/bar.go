package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Bar draws one phase at a time as a line on a terminal, redrawn in place at every
// step ("name  42% [=====>------] (5/12)") and erased when the phase ends, so that
// what the command prints next starts on a clean line. It draws on each step, on the
// caller's goroutine: no timer, and nothing outlives the phase. (It replaced the mpb
// module, whose packages and their initialisers every git-atlas process loaded.)
type Bar struct {
	w           io.Writer
	mu          sync.Mutex
	what        string
	done, total int
	drawn       bool
}

// barWidth is the bar's width in cells, brackets left out.
const barWidth = 28

// NewBar draws on w, a terminal. what is drawn as given: the caller makes it safe for
// a terminal.
func NewBar(w io.Writer) *Bar { return &Bar{w: w} }

// Start begins a phase of total steps; an unknown total (< 0) or none draws nothing.
func (b *Bar) Start(what string, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.erase()
	b.what, b.done, b.total = what, 0, total
	if total > 0 {
		b.draw()
	}
}

// Add counts n more steps; the last one erases the bar.
func (b *Bar) Add(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total <= 0 || n <= 0 {
		return
	}
	b.done = min(b.done+n, b.total)
	if b.done == b.total {
		b.erase()
		b.total = 0
		return
	}
	b.draw()
}

// Done ends the phase, erasing its bar.
func (b *Bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.erase()
	b.total = 0
}

// Note prints line on a line of its own: the bar, when drawn, is erased first and drawn
// again below it, so that a message for the person and the bar never share a line.
func (b *Bar) Note(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	drawn := b.drawn
	b.erase()
	_, _ = io.WriteString(b.w, line+"\n")
	if drawn {
		b.draw()
	}
}

func (b *Bar) draw() {
	fill := barWidth * b.done / b.total
	bar := strings.Repeat("=", fill)
	if fill < barWidth {
		bar += ">" + strings.Repeat("-", barWidth-fill-1)
	}
	_, _ = fmt.Fprintf(b.w, "\r%s %3d%% [%s] (%d/%d)\x1b[K", b.what, 100*b.done/b.total, bar, b.done, b.total)
	b.drawn = true
}

// erase clears the line the bar is on, when one is drawn.
func (b *Bar) erase() {
	if b.drawn {
		_, _ = io.WriteString(b.w, "\r\x1b[K")
		b.drawn = false
	}
}
