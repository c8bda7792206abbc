package views

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/git-atlas/git-atlas/ledger"
)

// TextOptions shape the text drawing.
type TextOptions struct {
	// Width is the terminal's width in columns; no line is longer (default 80).
	Width int
	// Colour adds ANSI colour to states. The marks and words carry the same meaning,
	// so the drawing reads the same without it.
	Colour bool
}

// Names longer than these are cut (with "~") so that a row fits in the width.
const (
	maxName   = 24
	maxHolder = 12
)

// Text draws g for people: one row per job, by level (a job's level is one more than
// its deepest need), or one row per stage for a single run.
func Text(w io.Writer, g *Graph, o TextOptions) error {
	if o.Width <= 0 {
		o.Width = 80
	}
	p := &printer{w: w, o: o}
	head := []string{g.RunID, g.Kind, g.Status, fmt.Sprintf("epoch %d", g.Epoch), fmt.Sprintf("event %d", g.Seq)}
	if g.Kind == ledger.KindGraph {
		head = append(head, fmt.Sprintf("gas %d of %d spent", g.GasSpent, g.GasLimit))
	}
	p.line(strings.Join(head, "  "))
	if g.Kind == ledger.KindGraph {
		p.jobs(g)
	}
	if len(g.Stages) > 0 {
		p.line("")
		p.stages(g)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	o   TextOptions
	err error
}

// line writes s cut to the width.
func (p *printer) line(s string) {
	p.paintLine(s, 0, "", "")
}

// paintLine writes s cut to the width, with word, found at byte offset at, painted.
// The colour (zero width) goes in after the cut, so it never costs a column.
func (p *printer) paintLine(s string, at int, word, colour string) {
	if p.err != nil {
		return
	}
	s = cut(s, p.o.Width)
	if p.o.Colour && colour != "" && strings.HasPrefix(s[min(at, len(s)):], word) {
		s = s[:at] + colour + word + "\x1b[0m" + s[at+len(word):]
	}
	_, p.err = fmt.Fprintln(p.w, strings.TrimRight(s, " "))
}

func (p *printer) jobs(g *Graph) {
	if len(g.Nodes) == 0 {
		p.line("")
		p.line("no jobs yet (git atlas job add)")
		return
	}
	wn, wh, wl := len("JOB"), 0, 1
	for _, n := range g.Nodes {
		wn = max(wn, min(len(n.ID)+4, maxName+4))
		wh = max(wh, min(len(n.Holder), maxHolder))
		wl = max(wl, len(fmt.Sprint(n.Level)))
	}
	tries := len(fmt.Sprintf("%d/%d", g.MaxAttempts, g.MaxAttempts))
	if wh > 0 {
		wh = max(wh, len("HOLDER"))
	}
	stateAt := max(wl, 2) + 2 + wn + 2
	row := func(level, name, state, att, holder, needs string) string {
		s := fmt.Sprintf("%-*s  %-*s  %-7s  %-*s", max(wl, 2), level, wn, name, state, max(tries, len("ATTEMPTS")), att)
		if wh > 0 {
			s += fmt.Sprintf("  %-*s", wh, holder)
		}
		return s + "  " + needs
	}
	p.line("")
	p.line(row("LV", "JOB", "STATE", "ATTEMPTS", "HOLDER", "NEEDS"))
	byLevel := map[int][]Node{}
	top := 0
	for _, n := range g.Nodes {
		byLevel[n.Level] = append(byLevel[n.Level], n)
		top = max(top, n.Level)
	}
	for l := 0; l <= top; l++ {
		for _, n := range byLevel[l] {
			mark, colour := jobMark(n)
			s := row(fmt.Sprint(l), mark+" "+cut(n.ID, maxName), n.State, fmt.Sprintf("%d/%d", n.Attempts, g.MaxAttempts),
				dash(cut(n.Holder, maxHolder)), "")
			p.paintLine(s+needsList(n.Needs, p.o.Width-utf8.RuneCountInString(s)), stateAt, n.State, colour)
		}
	}
	if u := g.Union; u != nil {
		s := fmt.Sprintf("union  %d integrated", len(u.Integrated))
		if len(u.Conflicted) > 0 {
			s += fmt.Sprintf(", %d conflicted: %s", len(u.Conflicted), strings.Join(u.Conflicted, ", "))
		}
		if len(u.OutsideScope) > 0 {
			s += fmt.Sprintf(", %d left out, outside scope: %s", len(u.OutsideScope), strings.Join(u.OutsideScope, ", "))
		}
		if len(u.AllowedOutsideScope) > 0 {
			s += fmt.Sprintf(", %d allowed outside scope: %s", len(u.AllowedOutsideScope), strings.Join(u.AllowedOutsideScope, ", "))
		}
		p.line("")
		p.line(s)
	}
	p.line("")
	p.line("[x] done  [>] running  [*] ready  [ ] waiting  [!] failed  [U] in the union")
}

// jobMark is a job's mark (readable without colour) and its colour.
func jobMark(n Node) (string, string) {
	switch {
	case n.State == ledger.JobDone && n.Integrated:
		return "[U]", green
	case n.State == ledger.JobDone:
		return "[x]", green
	case n.State == ledger.JobRunning:
		return "[>]", yellow
	case n.State == ledger.JobFailed:
		return "[!]", red
	case n.Ready:
		return "[*]", cyan
	}
	return "[ ]", ""
}

func (p *printer) stages(g *Graph) {
	wn := len("STAGE")
	for _, s := range g.Stages {
		wn = max(wn, min(len(s.Name)+4, maxName+4))
	}
	p.line(fmt.Sprintf("%-3s  %-*s  %-10s  %-8s  %-6s  %s", "#", wn, "STAGE", "STATUS", "ATTEMPTS", "BUDGET", "GATE"))
	for i, s := range g.Stages {
		mark, colour := stageMark(s)
		p.paintLine(fmt.Sprintf("%-3d  %-*s  %-10s  %-8d  %-6d  %s", i+1, wn, mark+" "+cut(s.Name, maxName), s.Status, s.Attempts, s.BudgetLeft, dash(s.Gate)),
			3+2+wn+2, s.Status, colour)
	}
	p.line("")
	p.line("[x] completed  [-] skipped  [>] current  [!] failed or rejected  [ ] to do")
}

func stageMark(s Stage) (string, string) {
	switch {
	case s.Status == ledger.StageCompleted:
		return "[x]", green
	case s.Status == ledger.StageSkipped:
		return "[-]", ""
	case s.Status == ledger.StageFailed || s.Status == ledger.StageRejected:
		return "[!]", red
	case s.Current:
		return "[>]", yellow
	}
	return "[ ]", ""
}

const (
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	red    = "\x1b[31m"
	cyan   = "\x1b[36m"
)

// needsList fits a job's needs in room columns: as many as fit, then "+N".
func needsList(needs []string, room int) string {
	if len(needs) == 0 {
		return "-"
	}
	out := ""
	for i, n := range needs {
		next := n
		if i > 0 {
			next = out + ", " + n
		}
		rest := ""
		if i < len(needs)-1 {
			rest = fmt.Sprintf(" +%d", len(needs)-1-i)
		}
		if len(next)+len(rest) > room {
			if out == "" {
				return fmt.Sprintf("+%d", len(needs))
			}
			return out + fmt.Sprintf(" +%d", len(needs)-i)
		}
		out = next
	}
	return out
}

// cut shortens s to n columns (runes), marking the cut with "~".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:max(n, 0)])
	}
	return string(r[:n-1]) + "~"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
