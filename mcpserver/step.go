package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// mcpSpelling is how MCP writes what the operations name (docs/contract.md §4.6): a
// request's field by its input name (ttl, verify_timeout), a step as the tool call
// that runs it (toolCall).
var mcpSpelling = fault.Spelling{Field: func(field string) string { return field }, Step: toolCall}

// toolCall is step s as an MCP client calls it: the tool (the operation's words
// joined by _) and its arguments as JSON, `finish {"run":"r1","status":"failed"}`.
// A field given false is left out; a placeholder (fault.Placeholder) is its text in
// angle brackets, for the caller to replace.
func toolCall(s fault.Step) string {
	var b bytes.Buffer
	b.WriteString(strings.ReplaceAll(strings.Join(strings.Fields(s.Op), " "), " ", "_"))
	b.WriteString(" {")
	n := 0
	for _, f := range s.Fields {
		v := f.Value
		switch x := v.(type) {
		case bool:
			if !x {
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
