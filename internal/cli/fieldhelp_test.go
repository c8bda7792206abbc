package cli

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/git-atlas/git-atlas/ops"
)

// TestHelpIsTheRequestsText: every text of a request's field (ops.FieldHelp, which
// the MCP tools' input schemas show) is the help of a flag or argument of the command
// line, named by its key (help:"${key}"), each field it names spelled as a flag.
func TestHelpIsTheRequestsText(t *testing.T) {
	t.Parallel()
	var root CLI
	k, err := kong.New(&root, kong.Name("git atlas"), kong.Exit(func(int) {}), helpVars())
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	err = kong.Visit(k.Model.Node, func(v kong.Visitable, next kong.Next) error {
		if v, ok := v.(*kong.Value); ok && v.Tag != nil {
			if key, ok := strings.CutPrefix(v.Tag.Help, "${"); ok {
				key = strings.TrimSuffix(key, "}")
				used[key] = true
				if want := ops.FieldHelp(key, flagSpelling); v.Help != want {
					t.Errorf("%s: help %q, want the request's text %q", v.Summary(), v.Help, want)
				}
			}
		}
		return next(nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range ops.FieldHelpKeys() {
		if !used[key] {
			t.Errorf("no flag or argument of the command line is described by %q", key)
		}
	}
}
