package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// mcpSpelling is how MCP writes what the operations name (docs/contract.md §4.6): a
// request's field by its input name (ttl, verify_timeout), a step as the tool call
// that runs it (toolCall).
var mcpSpelling = fault.Spelling{Field: func(field string) string { return field }, Step: toolCall}

// toolCall is step s as an MCP client calls it: the tool (the operation's words
// joined by _) and its arguments as JSON, `finish {"run":"r1","status":"failed"}`.
// A switch that has a tool of its own (resume's plan: resume_plan) names that tool.
// A field given false is left out; a placeholder (fault.Placeholder) is its text in
// angle brackets, for the caller to replace.
func toolCall(s fault.Step) string {
	name, args := toolOf(s)
	var b bytes.Buffer
	b.WriteString(name)
	b.WriteString(" {")
	for i, f := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, f.Name)
		b.WriteByte(':')
		writeJSON(&b, f.Value)
	}
	b.WriteByte('}')
	return b.String()
}

// toolOf is the tool that runs step s and its arguments, in the step's order, as
// toolCall writes them.
func toolOf(s fault.Step) (string, []fault.Field) {
	name := strings.Join(strings.Fields(s.Op), "_")
	own := ""
	for _, f := range s.Fields {
		if v, ok := f.Value.(bool); ok && v && toolNames()[name+"_"+f.Name] {
			own = f.Name
			name += "_" + f.Name
			break
		}
	}
	var args []fault.Field
	for _, f := range s.Fields {
		v := f.Value
		switch x := v.(type) {
		case bool:
			if !x || f.Name == own {
				continue
			}
		case fault.Placeholder:
			p := string(x)
			if !strings.HasPrefix(p, "<") {
				p = "<" + p + ">"
			}
			v = p
		}
		args = append(args, fault.Field{Name: f.Name, Value: v})
	}
	return name, args
}

// withToolCalls sets, in the result of a tool, each next_action's tool and
// arguments from its step (docs/contract.md §4.6): members only MCP gives.
func withToolCalls(res any) {
	var n *ops.NextAction
	switch r := res.(type) {
	case *ops.Plan:
		n = &r.NextAction
	case *ops.Result:
		if r.Plan != nil {
			n = &r.NextAction
		}
	case *ops.ResumeDetectResult:
		if r.Driving != nil {
			n = r.Driving.NextAction
		}
	}
	if n == nil || n.Step.Op == "" {
		return
	}
	name, args := toolOf(n.Step)
	n.Tool, n.Arguments = name, map[string]any{}
	for _, f := range args {
		n.Arguments[f.Name] = f.Value
	}
}

// writeJSON writes v as compact JSON without HTML escaping, as results are written.
func writeJSON(b *bytes.Buffer, v any) {
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	b.Write(bytes.TrimSpace(one.Bytes()))
}

// toolNames is the set of the server's tools' names.
var toolNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, t := range tools() {
		names[t.name] = true
	}
	return names
})
