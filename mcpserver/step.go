package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/git-atlas/git-atlas/internal/fault"
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
	name := strings.Join(strings.Fields(s.Op), "_")
	own := ""
	for _, f := range s.Fields {
		if v, ok := f.Value.(bool); ok && v && toolNames()[name+"_"+f.Name] {
			own = f.Name
			name += "_" + f.Name
			break
		}
	}
	var b bytes.Buffer
	b.WriteString(name)
	b.WriteString(" {")
	n := 0
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
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeJSON(&b, f.Name)
		b.WriteByte(':')
		writeJSON(&b, v)
	}
	b.WriteByte('}')
	return b.String()
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
