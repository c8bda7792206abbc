package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
)

// printJSON writes v as indented JSON on one document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }

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

// isTerminal reports whether f is an interactive terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// headless is the policy of SPEC §6: no prompts under CI, without a terminal, or when
// the caller asked for machine output or said yes in advance.
func (e *Env) headless() bool {
	return e.JSON || e.Yes || os.Getenv("CI") == "true" || !isTerminal(e.Stdin)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
