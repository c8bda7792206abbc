package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
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
// angle brackets, for the caller to replace. A step the server has no tool for (a
// person's step: land, trust, undo; or one only the command line runs) says so:
// `land {"run":"g"} (no MCP tool: a person runs it on the command line)`, and so
// does one that names what its tool does not take (the directory to run in).
func toolCall(s fault.Step) string {
	name, args, ok := toolOf(s)
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
	switch lacks := toolLacks(name, args); {
	case lacks != "":
		fmt.Fprintf(&b, " (the MCP tool %s takes no %s: run it on the command line)", name, lacks)
	case !ok:
		b.WriteString(" " + personRuns)
	}
	return b.String()
}

// personRuns is what MCP says after a step it has no tool for.
const personRuns = "(no MCP tool: a person runs it on the command line)"

// toolOf is the tool that runs step s and its arguments, in the step's order, as
// toolCall writes them, and whether the server has that tool.
func toolOf(s fault.Step) (string, []fault.Field, bool) {
	name := strings.Join(strings.Fields(s.Op), "_")
	own := ""
	for _, f := range s.Fields {
		if v, ok := f.Value.(bool); ok && v && hasTool(name+"_"+f.Name) {
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
	return name, args, toolLacks(name, args) == "" && hasTool(name)
}

// toolLacks is the first of args that the tool name does not take ("" when it takes
// them all, or has no tool): a step that names one (the directory to run in, which
// only the command line has) is no call an MCP client could make.
func toolLacks(name string, args []fault.Field) string {
	takes, ok := toolArgs()[name]
	if !ok {
		return ""
	}
	for _, f := range args {
		if !takes[f.Name] {
			return f.Name
		}
	}
	return ""
}

// withToolCalls sets, in the result of a tool, every next_action's tool and
// arguments from its step (docs/contract.md §4.6): members only MCP gives. It finds
// each ops.NextAction the result holds, at any depth (a field, a pointer, a list),
// so a new result type needs no case here. A step the server has no tool for (a
// person's step) gets neither: its command says a person runs it (toolCall).
func withToolCalls(res any) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer {
				if seen[v.Pointer()] {
					return
				}
				seen[v.Pointer()] = true
			}
			walk(v.Elem())
		case reflect.Struct:
			if v.Type() == nextActionType {
				if v.CanAddr() {
					setToolCall(v.Addr().Interface().(*ops.NextAction))
				}
				return
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				if k := it.Value().Kind(); k == reflect.Pointer || k == reflect.Interface {
					walk(it.Value())
				}
			}
		}
	}
	walk(reflect.ValueOf(res))
}

var nextActionType = reflect.TypeFor[ops.NextAction]()

// setToolCall sets n's tool and arguments from its step, or clears them when the
// server has no tool for the step; a next action with no step keeps what it says.
func setToolCall(n *ops.NextAction) {
	if n.Step.Op == "" {
		return
	}
	name, args, ok := toolOf(n.Step)
	if !ok {
		n.Tool, n.Arguments = "", nil
		return
	}
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

// toolArgs is each of the server's tools by name, with the names of the arguments
// it takes.
var toolArgs = sync.OnceValue(func() map[string]map[string]bool {
	byName := map[string]map[string]bool{}
	for _, t := range tools() {
		args := map[string]bool{}
		if fields, err := wireFields(t.in); err == nil { // TestEveryToolHasItsRequest
			for _, f := range fields {
				args[f.name] = true
			}
		}
		byName[t.name] = args
	}
	return byName
})

// hasTool reports whether the server has the tool name.
func hasTool(name string) bool {
	_, ok := toolArgs()[name]
	return ok
}
