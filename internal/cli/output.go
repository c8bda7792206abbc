package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-atlas/git-atlas/internal/text"
)

// printJSON writes v as one indented JSON document: what an Encoder with
// SetIndent("", "  ") and SetEscapeHTML(false) writes, indented by indentJSON, which
// takes a fifth of the time of the Encoder's own pass (`list` of 1,000 runs).
func printJSON(w io.Writer, v any) error {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := indentJSON(make([]byte, 0, compact.Len()*3/2), compact.Bytes())
	_, err := w.Write(out)
	return err
}

// indentJSON appends src, compact JSON as encoding/json writes it (no whitespace
// outside strings but a final newline), to dst as json.Indent(dst, src, "", "  ")
// would.
func indentJSON(dst, src []byte) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for i := 0; i < depth; i++ {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			// Strings are copied as they are, except that <, > and & come out as
			// themselves: documents read from the ledger were encoded with
			// json.Marshal, which escapes them, and a json.RawMessage keeps its bytes.
			j := i + 1
			dst = append(dst, '"')
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] != '\\' {
					dst = append(dst, src[j])
					continue
				}
				if c, ok := htmlEscape(src[j:]); ok {
					dst = append(dst, c)
					j += 5
					continue
				}
				dst = append(dst, src[j:min(j+2, len(src))]...)
				j++
			}
			if j < len(src) {
				dst = append(dst, '"')
			}
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// htmlEscape reports the character of a \u003c, \u003e or \u0026 escape at the start of b.
func htmlEscape(b []byte) (byte, bool) {
	if len(b) < 6 || b[1] != 'u' || string(b[2:4]) != "00" {
		return 0, false
	}
	switch string(b[4:6]) {
	case "3c", "3C":
		return '<', true
	case "3e", "3E":
		return '>', true
	case "26":
		return '&', true
	}
	return 0, false
}

// table prints aligned columns for people.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(headers...)
	return t
}

// row prints one row; every cell is one line of at most cellMax characters, with
// control characters escaped (ledgerText), so a value from the ledger cannot break
// the table or reach the terminal as a control sequence.
func (t *table) row(cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = ledgerText(c, cellMax)
	}
	fmt.Fprintln(t.tw, strings.Join(safe, "\t"))
}

// cellMax is the widest a table cell gets (paths fit; a pasted novel does not).
const cellMax = text.CellMax

// briefMax is the widest free text (an intent, a reason) gets in a one-line summary.
const briefMax = text.BriefMax

// ledgerText is text.Ledger: how ledger text appears in human output.
func ledgerText(s string, max int) string { return text.Ledger(s, max) }

// terminalSafe is text.Terminal: a whole human output or error message, escaped.
func terminalSafe(s string) string { return text.Terminal(s) }

func (t *table) flush() { _ = t.tw.Flush() }

// age renders how long ago a ledger time was, for people.
func age(stamp string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return "?"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// headless is the policy of docs/contract.md §6: no prompts under CI, without a terminal, or when
// the caller asked for machine output or said yes in advance.
func (e *Env) headless() bool {
	return e.JSON || e.Yes || e.getenv("CI") == "true" || !e.isTerminal(e.Stdin)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
