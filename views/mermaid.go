package views

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-atlas/git-atlas/ledger"
)

// Mermaid writes g as a Mermaid flowchart. Node ids are generated (j0, j1, s0, ...)
// because Mermaid ids cannot hold every character a name may ('.' among them); the
// names go into quoted labels, with Mermaid's entity escapes for quotes and brackets.
func Mermaid(w io.Writer, g *Graph) error {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	fmt.Fprintf(&b, "  %%%% %s\n", strings.ReplaceAll(summary(g), "\n", " "))
	class := map[string][]string{}
	if g.Kind == ledger.KindGraph {
		ids := map[string]string{}
		for i, n := range g.Nodes {
			ids[n.ID] = fmt.Sprintf("j%d", i)
		}
		for _, n := range g.Nodes {
			fmt.Fprintf(&b, "  %s[%s]\n", ids[n.ID], mermaidQuote(strings.Join(nodeLabel(g, n), "\n")))
			class[jobClass(n)] = append(class[jobClass(n)], ids[n.ID])
		}
		for _, e := range g.Edges {
			if from, ok := ids[e.From]; ok {
				fmt.Fprintf(&b, "  %s --> %s\n", from, ids[e.To])
			}
		}
		if u := g.Union; u != nil {
			fmt.Fprintf(&b, "  union{{%s}}\n", mermaidQuote(unionLabel(u)))
			for _, id := range u.Integrated {
				if from, ok := ids[id]; ok {
					fmt.Fprintf(&b, "  %s -.-> union\n", from)
				}
			}
			for _, id := range u.Conflicted {
				if from, ok := ids[id]; ok {
					fmt.Fprintf(&b, "  %s -. conflict .-> union\n", from)
				}
			}
		}
	}
	for i, s := range g.Stages {
		id := fmt.Sprintf("s%d", i)
		fmt.Fprintf(&b, "  %s[%s]\n", id, mermaidQuote(strings.Join(stageLabel(s), "\n")))
		if i > 0 {
			fmt.Fprintf(&b, "  s%d --> %s\n", i-1, id)
		}
		class[stageClass(s)] = append(class[stageClass(s)], id)
	}
	b.WriteString("  classDef done stroke:#2a2,stroke-width:2px\n")
	b.WriteString("  classDef running stroke:#e90,stroke-width:2px\n")
	b.WriteString("  classDef failed stroke:#d22,stroke-width:2px\n")
	b.WriteString("  classDef ready stroke:#26d,stroke-dasharray:4\n")
	for _, c := range []string{"done", "running", "failed", "ready"} {
		if len(class[c]) > 0 {
			fmt.Fprintf(&b, "  class %s %s\n", strings.Join(class[c], ","), c)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidQuote is a quoted Mermaid label: entity codes for characters Mermaid reads as
// syntax, and <br/> for line breaks.
func mermaidQuote(s string) string {
	r := strings.NewReplacer(`#`, "#35;", `&`, "#amp;", `"`, "#quot;", `<`, "#lt;", `>`, "#gt;", "\n", "<br/>", "\r", "")
	return `"` + r.Replace(s) + `"`
}

func jobClass(n Node) string {
	switch {
	case n.State == ledger.JobDone:
		return "done"
	case n.State == ledger.JobRunning:
		return "running"
	case n.State == ledger.JobFailed:
		return "failed"
	case n.Ready:
		return "ready"
	}
	return ""
}

func stageClass(s Stage) string {
	switch {
	case s.Status == ledger.StageCompleted:
		return "done"
	case s.Status == ledger.StageFailed || s.Status == ledger.StageRejected:
		return "failed"
	case s.Current:
		return "running"
	}
	return ""
}
