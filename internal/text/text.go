// Package text is how text that came from the ledger is shown to people: on one
// line when it must be, cut to a width, with every character a terminal would act on
// escaped visibly. The command line's tables and messages use it, and so do the
// operations whose JSON documents carry a line for people (resume's pointer).
package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CellMax is the widest a table cell gets (paths fit; a pasted novel does not).
const CellMax = 200

// BriefMax is the widest free text (an intent, a reason) gets in a one-line summary.
const BriefMax = 72

// Ledger is how text that came from the ledger (an intent, a reason, a holder,
// a stage name or event data of a pulled run) appears in human output: on one line,
// at most max characters (0: no limit), cut with "…", and with every character a
// terminal would act on escaped visibly (escapeRune). JSON output never goes through
// it: it keeps the exact data.
func Ledger(s string, max int) string {
	return Escape(s, max, false)
}

// Terminal escapes what Ledger escapes but keeps newlines and tabs: for a
// whole human output or an error message, whose lines are git-atlas's own.
func Terminal(s string) string {
	return Escape(s, 0, true)
}

// Escape is Ledger (keepLines false) or Terminal (true) cut to at most max characters
// (0: no limit).
func Escape(s string, max int, keepLines bool) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (escapeRune(r) && (!keepLines || (r != '\n' && r != '\t'))) {
			clean = false
			break
		}
		i += size
	}
	if clean && (max <= 0 || utf8.RuneCountInString(s) <= max) {
		return s
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			piece = string(r)
		case r == '\n':
			piece = `\n`
		case r == '\t':
			piece = `\t`
		case r == '\r':
			piece = `\r`
		case r < 0x80 && escapeRune(r):
			piece = fmt.Sprintf(`\x%02x`, r)
		case escapeRune(r):
			piece = fmt.Sprintf(`\u%04x`, r)
		default:
			piece = s[i : i+size]
		}
		if max > 0 && n+utf8.RuneCountInString(piece) > max-1 && (i+size < len(s) || n+utf8.RuneCountInString(piece) > max) {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		n += utf8.RuneCountInString(piece)
		i += size
	}
	return b.String()
}

// escapeRune reports the characters a terminal acts on instead of showing: C0
// controls, DEL, C1 controls (CSI and OSC among them), the line and paragraph
// separators, and the bidirectional controls that make text display other than
// it reads.
func escapeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
