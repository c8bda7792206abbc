package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// The repository opened before kong parses is used only for the directory -C names.
func TestPreopenGuess(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "."},
		{[]string{"-C", "a", "list"}, "a"},
		{[]string{"-Ca", "list"}, "a"},
		{[]string{"--dir=a", "list", "-C", "b"}, "b"},
		{[]string{"--dir", "a", "event", "r", "--", "-C", "b"}, "a"},
	} {
		if got := dirArg(c.args); got != c.want {
			t.Errorf("dirArg(%q) = %q, want %q", c.args, got, c.want)
		}
	}
	dir := t.TempDir()
	p := startOpen(context.Background(), []string{"-C", dir, "list"})
	defer p.stop()
	if r, err := p.take(filepath.Join(dir, "sub")); r != nil || err != nil {
		t.Fatalf("take of another directory = %v, %v; want nothing", r, err)
	}
	if r, err := p.take(dir); r != nil || err == nil {
		t.Fatalf("take of %s (no repository) = %v, %v; want git.Open's error", dir, r, err)
	}
	var nothing *preopen
	if r, err := nothing.take(dir); r != nil || err != nil {
		t.Fatal("a nil preopen gave something")
	}
	nothing.stop()
}

// The model of one command (newParser's fast path) is that command as the whole tree
// has it: the same name, help, flags, arguments and subcommands, for every command.
func TestLeafModelMatchesTree(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	full, _, err := newParser(nil, &out, &out, true)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, want := range full.Model.Children {
		if want.Type != kong.CommandNode {
			continue
		}
		leaf, g, err := newParser([]string{"-C", ".", want.Name}, &out, &out, false)
		if err != nil {
			t.Fatal(err)
		}
		if g.full {
			switch want.Name {
			case "help", "completion", "__complete":
				continue // these walk the whole tree
			}
			t.Errorf("%s: built the whole tree", want.Name)
			continue
		}
		if len(leaf.Model.Children) != 1 {
			t.Fatalf("%s: the leaf model has %d commands", want.Name, len(leaf.Model.Children))
		}
		if got, wantS := describe(leaf.Model.Children[0]), describe(want); got != wantS {
			t.Errorf("%s: the leaf model differs from the tree's:\n%s\nwant\n%s", want.Name, got, wantS)
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d commands compared", n)
	}
	if _, g, _ := newParser([]string{"--version"}, &out, &out, false); g.full {
		t.Error("--version built the whole tree")
	}
	for _, args := range [][]string{{"-h"}, {"list", "-h"}, {}, {"help", "list"}, {"frobnicate"}, {"--", "list"}} {
		if _, g, _ := newParser(args, &out, &out, false); !g.full {
			t.Errorf("%q: not the whole tree", args)
		}
	}
}

// describe prints what parsing reads of a command node, recursively: its name,
// visibility, flags (short name, default, enum, placeholder), arguments and
// subcommands. Help text is left out: a leaf model carries none (noHelp), since it
// never prints any.
func describe(n *kong.Node) string {
	var b strings.Builder
	var walk func(n *kong.Node, depth int)
	walk = func(n *kong.Node, depth int) {
		fmt.Fprintf(&b, "%*s%s hidden=%v\n", depth*2, "", n.Name, n.Hidden)
		for _, f := range n.Flags {
			fmt.Fprintf(&b, "%*s  --%s -%c default=%q enum=%q placeholder=%q hidden=%v\n", depth*2, "", f.Name, f.Short, f.Default, f.Enum, f.PlaceHolder, f.Hidden)
		}
		for _, p := range n.Positional {
			fmt.Fprintf(&b, "%*s  <%s> required=%v\n", depth*2, "", p.Name, p.Required)
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// Only commands that read a repository open it beside kong: --version forks nothing.
func TestNeedsRepo(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]bool{
		"--version": false, "-h": false, "list -h": false, "help list": false, "": false,
		"completion bash": false, "demo": false, "-C x list": true, "resume --brief": true,
		"--json hook post-checkout": true,
	} {
		if got := needsRepo(strings.Fields(args)); got != want {
			t.Errorf("needsRepo(%q) = %v, want %v", args, got, want)
		}
	}
}

// BenchmarkLeafParser: building the model of one command (`resume`), as every command
// line that names one does before it parses.
func BenchmarkLeafParser(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, _, err := newParser([]string{"resume", "--brief"}, io.Discard, io.Discard, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullParser: building the whole tree's model, as help, completion and every
// parse error do.
func BenchmarkFullParser(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, _, err := newParser([]string{"resume", "--brief"}, io.Discard, io.Discard, true); err != nil {
			b.Fatal(err)
		}
	}
}
