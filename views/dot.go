package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-atlas/git-atlas/ledger"
)

// Dot writes g as a Graphviz digraph. Every id and label is a quoted string, so names
// with '.' or '-' (and free text such as holders) cannot break the syntax.
func Dot(w io.Writer, g *Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(g.RunID))
	fmt.Fprintf(&b, "  label=%s;\n", dotQuote(summary(g)))
	b.WriteString("  rankdir=LR;\n  node [shape=box, style=rounded];\n")
	if g.Kind == ledger.KindGraph {
		for _, n := range g.Nodes {
			fmt.Fprintf(&b, "  %s [label=%s, color=%s];\n", dotQuote("job:"+n.ID), dotQuote(strings.Join(nodeLabel(g, n), "\n")), dotQuote(jobColour(n)))
		}
		for _, e := range g.Edges {
			fmt.Fprintf(&b, "  %s -> %s;\n", dotQuote("job:"+e.From), dotQuote("job:"+e.To))
		}
		if u := g.Union; u != nil {
			fmt.Fprintf(&b, "  %s [label=%s, shape=doubleoctagon];\n", dotQuote("union"), dotQuote(unionLabel(u)))
			for _, id := range u.Integrated {
				fmt.Fprintf(&b, "  %s -> %s [style=dashed];\n", dotQuote("job:"+id), dotQuote("union"))
			}
			for _, id := range u.Conflicted {
				fmt.Fprintf(&b, "  %s -> %s [style=dashed, color=\"red\", label=\"conflict\"];\n", dotQuote("job:"+id), dotQuote("union"))
			}
		}
	}
	if len(g.Stages) > 0 {
		for i, s := range g.Stages {
			fmt.Fprintf(&b, "  %s [label=%s, color=%s];\n", dotQuote("stage:"+s.Name), dotQuote(strings.Join(stageLabel(s), "\n")), dotQuote(stageColour(s)))
			if i > 0 {
				fmt.Fprintf(&b, "  %s -> %s;\n", dotQuote("stage:"+g.Stages[i-1].Name), dotQuote("stage:"+s.Name))
			}
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dotQuote is a dot double-quoted string: backslash and quote escaped, line breaks as
// dot's own "\n" escape.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

func summary(g *Graph) string {
	s := fmt.Sprintf("%s (%s): %s, epoch %d", g.RunID, g.Kind, g.Status, g.Epoch)
	if g.Kind == ledger.KindGraph {
		s += fmt.Sprintf(", gas %d of %d spent", g.GasSpent, g.GasLimit)
	}
	return s
}

// nodeLabel is a job's lines: id, state (and ready), attempts, holder.
func nodeLabel(g *Graph, n Node) []string {
	state := n.State
	if n.Ready {
		state += " (ready)"
	}
	lines := []string{n.ID, state, fmt.Sprintf("attempts %d/%d", n.Attempts, g.MaxAttempts)}
	if n.Holder != "" {
		lines = append(lines, "holder "+n.Holder)
	}
	return lines
}

func stageLabel(s Stage) []string {
	lines := []string{s.Name, s.Status, fmt.Sprintf("attempts %d, %d left", s.Attempts, s.BudgetLeft)}
	if s.Gate != "" {
		lines = append(lines, "gate "+s.Gate)
	}
	return lines
}

func unionLabel(u *Union) string {
	s := fmt.Sprintf("union\n%d integrated", len(u.Integrated))
	if len(u.Conflicted) > 0 {
		s += fmt.Sprintf(", %d conflicted", len(u.Conflicted))
	}
	return s
}

func jobColour(n Node) string {
	switch {
	case n.State == ledger.JobDone:
		return "darkgreen"
	case n.State == ledger.JobRunning:
		return "orange"
	case n.State == ledger.JobFailed:
		return "red"
	case n.Ready:
		return "blue"
	}
	return "gray"
}

func stageColour(s Stage) string {
	switch {
	case s.Status == ledger.StageCompleted:
		return "darkgreen"
	case s.Status == ledger.StageFailed || s.Status == ledger.StageRejected:
		return "red"
	case s.Current:
		return "orange"
	}
	return "gray"
}
