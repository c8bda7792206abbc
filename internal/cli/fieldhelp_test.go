package cli

import (
	"io"
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
	k, err := kong.New(&root, kong.Name("git atlas"), kong.Exit(func(int) {}), fieldHelpIn())
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

// TestFullTreeCost: the whole tree's model (help, completion, every parse error) is
// built without kong interpolating the field texts into every value: kong does that
// for each variable it is given, one regexp pass per variable and value, several
// times the allocations of building the model itself (BenchmarkFullParser with
// -benchmem, before and after fieldHelpIn).
func TestFullTreeCost(t *testing.T) {
	n := testing.AllocsPerRun(2, func() {
		if _, _, err := newParser([]string{"resume", "--brief"}, io.Discard, io.Discard, true); err != nil {
			t.Fatal(err)
		}
	})
	if n > 40000 {
		t.Errorf("building the whole tree made %v allocations: kong interpolated variables of ours into every value", n)
	}
}
