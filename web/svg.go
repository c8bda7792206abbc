package web

import (
	"fmt"
	"html/template"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/ops"
	"github.com/git-atlas/git-atlas/views"
)

// The DAG as inline SVG, drawn by git-atlas itself (docs/contract.md §16): a layered layout, one
// column per dependency depth (views.Node.Level), jobs coloured by state (CSS
// classes, no inline style: the CSP allows none), an edge for each need, and the
// children an expansion added placed next to their parent and framed with it.

const (
	nodeW, nodeH = 170, 54
	colGap       = 60
	rowGap       = 30
	pad          = 12
)

type placed struct {
	views.Node
	X, Y   int
	Parent string
}

// drawDAG lays out g's jobs (r gives each job's parent) and returns the SVG markup.
// Every text in it is escaped.
func drawDAG(g *views.Graph, r *ops.Run) template.HTML {
	parent := map[string]string{}
	if r != nil {
		for _, j := range r.State.Jobs {
			parent[j.ID] = j.Parent
		}
	}
	levels := map[int][]views.Node{}
	maxLevel := 0
	for _, n := range g.Nodes {
		levels[n.Level] = append(levels[n.Level], n)
		maxLevel = max(maxLevel, n.Level)
	}
	// Within a column, a parent's children follow each other, grouped by parent.
	for l := range levels {
		col := levels[l]
		sort.SliceStable(col, func(i, j int) bool { return parent[col[i].ID] < parent[col[j].ID] })
	}
	pos := map[string]*placed{}
	var order []*placed
	height := 0
	for l := 0; l <= maxLevel; l++ {
		for i, n := range levels[l] {
			p := &placed{Node: n, X: pad + l*(nodeW+colGap), Y: pad + i*(nodeH+rowGap), Parent: parent[n.ID]}
			pos[n.ID] = p
			order = append(order, p)
			height = max(height, p.Y+nodeH+pad)
		}
	}
	width := pad*2 + (maxLevel+1)*nodeW + maxLevel*colGap
	esc := template.HTMLEscapeString
	// Groups: each parent's children, framed together (drawn first, under the jobs).
	groups := map[string][]*placed{}
	for _, p := range order {
		if p.Parent != "" {
			groups[p.Parent] = append(groups[p.Parent], p)
		}
	}
	var parents []string
	for k := range groups {
		parents = append(parents, k)
	}
	sort.Strings(parents)
	var frames strings.Builder
	for _, k := range parents {
		x0, y0, x1, y1 := 1<<30, 1<<30, 0, 0
		for _, p := range groups[k] {
			x0, y0 = min(x0, p.X), min(y0, p.Y)
			x1, y1 = max(x1, p.X+nodeW), max(y1, p.Y+nodeH)
		}
		fmt.Fprintf(&frames, `<g class="group"><rect x="%d" y="%d" width="%d" height="%d" rx="8"/><text x="%d" y="%d">children of %s</text></g>`,
			x0-6, y0-6, x1-x0+12, y1-y0+24, x0, y1+14, esc(k))
		height = max(height, y1+24)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="dag" xmlns="http://www.w3.org/2000/svg" role="img" width="%d" height="%d" viewBox="0 0 %d %d">`, width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"/></marker></defs>`)
	b.WriteString(frames.String())
	for _, e := range g.Edges {
		a, z := pos[e.From], pos[e.To]
		if a == nil || z == nil {
			continue
		}
		x1, y1 := a.X+nodeW, a.Y+nodeH/2
		x2, y2 := z.X, z.Y+nodeH/2
		mid := (x1 + x2) / 2
		fmt.Fprintf(&b, `<path class="edge" d="M %d %d C %d %d, %d %d, %d %d" marker-end="url(#arrow)"><title>%s needs %s</title></path>`,
			x1, y1, mid, y1, mid, y2, x2, y2, esc(e.To), esc(e.From))
	}
	for _, p := range order {
		state := p.State
		if p.Ready {
			state += " (ready)"
		}
		class := "node state-" + cssName(p.State)
		if p.Ready {
			class += " ready"
		}
		fmt.Fprintf(&b, `<g class="%s" data-job="%s" data-state="%s"><title>%s: %s</title>`, class, esc(p.ID), esc(p.State), esc(p.ID), esc(state))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6"/>`, p.X, p.Y, nodeW, nodeH)
		fmt.Fprintf(&b, `<text class="id" x="%d" y="%d">%s</text>`, p.X+8, p.Y+20, esc(cut(p.ID, 22)))
		line := fmt.Sprintf("%s · %d/%d", state, p.Attempts, g.MaxAttempts)
		if p.Holder != "" {
			line += " · " + p.Holder
		}
		fmt.Fprintf(&b, `<text class="state" x="%d" y="%d">%s</text></g>`, p.X+8, p.Y+40, esc(cut(line, 28)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every ledger text above went through esc
}

// cssName is a state as a CSS class name part: letters, digits and '-' only.
func cssName(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// cut shortens s to n runes, with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
