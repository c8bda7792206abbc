package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestVersionBeforeKong: `--version` alone prints what kong's version flag prints,
// without building kong's model or setting up signals (issue 34, start-up): a handful
// of allocations, where the model of the global flags alone is hundreds.
func TestVersionBeforeKong(t *testing.T) {
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errb)
		return out.String() + errb.String(), code
	}
	fast, code := run("--version")
	viaKong, kcode := run("-C", ".", "--version")
	if fast != viaKong || code != kcode || code != ExitOK || !strings.HasPrefix(fast, "git-atlas ") {
		t.Errorf("--version printed %q (exit %d); through kong %q (exit %d)", fast, code, viaKong, kcode)
	}
	if n := testing.AllocsPerRun(10, func() { run("--version") }); n > 20 {
		t.Errorf("--version made %v allocations: it built kong's model", n)
	}
}

// TestClearHelp: a leaf model's help is cleared everywhere kong.Visit goes (so kong
// interpolates none of it), by a walk that allocates nothing (issue 34, start-up: every
// command line that names a command builds a leaf model).
func TestClearHelp(t *testing.T) {
	var root CLI
	k, err := kong.New(&root, kong.Name("git atlas"), kong.Exit(func(int) {}), fieldHelpIn())
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() { clearHelp(k.Model.Node) }); n != 0 {
		t.Errorf("clearHelp made %v allocations", n)
	}
	var nodes, values int
	err = kong.Visit(k.Model.Node, func(v kong.Visitable, next kong.Next) error {
		switch v := v.(type) {
		case *kong.Node:
			nodes++
			if v.Help != "" || v.Detail != "" {
				t.Errorf("command %q kept its help %q", v.Path(), v.Help)
			}
		case *kong.Value:
			values++
			if v.Help != "" {
				t.Errorf("%s kept its help %q", v.Summary(), v.Help)
			}
		}
		return next(nil)
	})
	if err != nil || nodes < 10 || values < 10 {
		t.Fatalf("walked %d commands and %d values (%v): the model is not the whole tree", nodes, values, err)
	}
}
