package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// The command reference (docs/cli.md) and the man page (docs/git-atlas.1) are
// generated from the command tree, so they cannot drift from the flags the binary
// parses: TestReferenceUpToDate fails when the committed files differ from what
// these functions write, and `go test ./internal/cli -run TestReferenceUpToDate
// -update-docs` (make docs) writes them again.

// refCommand is one visible command of the tree, flattened for the reference.
type refCommand struct {
	path    string // "worktree add"
	summary string // "worktree add <run> <node> [flags]"
	help    string
	args    []refItem
	flags   []refItem
}

type refItem struct{ name, help string }

// commandTree returns every visible leaf command of the full model, in the order of
// the CLI struct, and the global flags.
func commandTree() ([]refCommand, []refItem, error) {
	k, _, err := newParser(nil, io.Discard, io.Discard, true)
	if err != nil {
		return nil, nil, err
	}
	globals := flagItems(k.Model.Flags)
	var out []refCommand
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, c := range n.Children {
			if c.Hidden || c.Type != kong.CommandNode {
				continue
			}
			if len(c.Children) > 0 && !hasOnlyArguments(c) {
				walk(c)
				continue
			}
			rc := refCommand{path: c.Path(), summary: c.Summary(), help: oneLine(c.Help), flags: flagItems(c.Flags)}
			for _, p := range c.Positional {
				rc.args = append(rc.args, refItem{"<" + p.Name + ">", oneLine(p.Help)})
			}
			out = append(out, rc)
		}
	}
	walk(k.Model.Node)
	return out, globals, nil
}

// hasOnlyArguments: a command whose children are its positional arguments only.
func hasOnlyArguments(n *kong.Node) bool {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			return false
		}
	}
	return true
}

func flagItems(flags []*kong.Flag) []refItem {
	var out []refItem
	for _, f := range flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		out = append(out, refItem{f.String(), oneLine(f.Help)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// WriteMarkdownReference writes docs/cli.md.
func WriteMarkdownReference(w io.Writer) error {
	cmds, globals, err := commandTree()
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	b.WriteString("Generated from the command tree (`make docs`); do not edit. The rules behind each\n")
	b.WriteString("command are in [contract.md](contract.md), the tour in [guide.md](guide.md).\n\n")
	b.WriteString("## Global flags\n\n")
	writeItemsMD(&b, globals)
	for _, c := range cmds {
		fmt.Fprintf(&b, "## git atlas %s\n\n", c.path)
		if c.help != "" {
			fmt.Fprintf(&b, "%s\n\n", c.help)
		}
		fmt.Fprintf(&b, "```\ngit atlas %s\n```\n\n", c.summary)
		if len(c.args) > 0 {
			b.WriteString("Arguments:\n\n")
			writeItemsMD(&b, c.args)
		}
		if len(c.flags) > 0 {
			b.WriteString("Flags:\n\n")
			writeItemsMD(&b, c.flags)
		}
	}
	b.WriteString("## Exit codes\n\n| code | meaning |\n| --- | --- |\n")
	for _, e := range exitTable() {
		fmt.Fprintf(&b, "| %s | %s |\n", e.code, e.meaning)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func writeItemsMD(b *strings.Builder, items []refItem) {
	for _, it := range items {
		if it.help == "" {
			fmt.Fprintf(b, "- `%s`\n", it.name)
		} else {
			fmt.Fprintf(b, "- `%s`: %s\n", it.name, it.help)
		}
	}
	b.WriteString("\n")
}

// WriteManPage writes docs/git-atlas.1, the page `git atlas --help` opens (git turns
// it into `git help atlas`).
func WriteManPage(w io.Writer) error {
	cmds, globals, err := commandTree()
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(".\\\" Generated from the command tree (make docs); do not edit.\n")
	b.WriteString(".TH GIT-ATLAS 1 \"\" \"git-atlas\" \"Git Manual\"\n")
	b.WriteString(".SH NAME\ngit-atlas \\- the durable ledger of AI-agent runs, kept in the repository\n")
	b.WriteString(".SH SYNOPSIS\n.B git atlas\n.I command\n.RI [ flags ]\n.RI [ args ]\n")
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(roff("git-atlas keeps the ledger of agent runs as commit chains under refs/atlas/, ties every run and stage to pinned baseline commits, manages per-node and union worktrees, and resumes interrupted runs: it fences stale workers, snapshots dirty work before removing any worktree, verifies first and reports the next action. It never changes the user's checkout.") + "\n")
	b.WriteString(".PP\n" + roff("Run git atlas help, or git atlas COMMAND -h, for the same reference at the terminal. The user guide is docs/guide.md in the source; the contract docs/contract.md.") + "\n")
	b.WriteString(".SH GLOBAL FLAGS\n")
	writeItemsMan(&b, globals)
	b.WriteString(".SH COMMANDS\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, ".SS \"git atlas %s\"\n", roff(c.path))
		if c.help != "" {
			b.WriteString(roff(c.help) + "\n")
		}
		fmt.Fprintf(&b, ".PP\n.B git atlas %s\n", roff(c.summary))
		writeItemsMan(&b, c.args)
		writeItemsMan(&b, c.flags)
	}
	b.WriteString(".SH EXIT STATUS\n")
	for _, e := range exitTable() {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff(e.code), roff(e.meaning))
	}
	b.WriteString(".SH SEE ALSO\n.BR git (1),\n.BR git-worktree (1)\n")
	_, err = io.WriteString(w, b.String())
	return err
}

func writeItemsMan(b *strings.Builder, items []refItem) {
	for _, it := range items {
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", roff(it.name), roff(it.help))
	}
}

// roff escapes text for a man page: backslashes and hyphens, and a line that would
// start with a control character.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
