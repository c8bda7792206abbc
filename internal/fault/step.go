package fault

import (
	"fmt"
	"strings"
)

// A Step is an operation someone is told to run (in a hint, a message, a next
// action): the operation and the request fields it sets, never a command line
// (docs/contract.md §4.6). Below the front ends nothing spells a flag; each front end
// renders a step its own way (Spelling): the command line as `git atlas finish R
// --status failed`, every argument quoted for sh; MCP as a tool call, the tool and
// its arguments.
//
// Op is the operation as the command line's words name it ("finish", "job done",
// "worktree setup"; MCP's tool is the same words joined by _). Fields are the
// request's fields it sets, in the order a command line writes its flags, each by
// its snake_case name (run, take_over): which of them the command line writes as
// positional arguments is the command line's own knowledge.
type Step struct {
	Op     string
	Fields []Field
}

// Field is one request field a Step sets. Value is a string, a bool (true: a switch
// set), an int, or a Placeholder.
type Field struct {
	Name  string
	Value any
}

// Placeholder is a value for the reader to fill in (NAME, completed|failed, <holder>):
// shown as it is, never quoted.
type Placeholder string

// Do is the step op with the fields named by pairs of name and value:
// Do("finish", "run", id, "status", Placeholder("completed|failed")).
func Do(op string, pairs ...any) Step {
	s := Step{Op: op}
	for i := 0; i+1 < len(pairs); i += 2 {
		name, _ := pairs[i].(string)
		s.Fields = append(s.Fields, Field{Name: name, Value: pairs[i+1]})
	}
	return s
}

// With is s with one more field (set last).
func (s Step) With(name string, value any) Step {
	s.Fields = append(append([]Field{}, s.Fields...), Field{Name: name, Value: value})
	return s
}

// Field is the value s sets for name, and whether it sets it.
func (s Step) Field(name string) (any, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// String is the step in neutral words, for logs and Error(): finish(run=R,
// status=failed). A front end renders it with its own Spelling instead.
func (s Step) String() string {
	var b strings.Builder
	b.WriteString(s.Op)
	b.WriteString("(")
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
		if v, ok := f.Value.(bool); !ok || !v {
			fmt.Fprintf(&b, "=%v", f.Value)
		}
	}
	b.WriteString(")")
	return b.String()
}

// Spelling is how a front end writes what the operations name: a request's field
// (--ttl on the command line, ttl over MCP) and a Step.
type Spelling struct {
	Field func(name string) string
	Step  func(Step) string
}

// plain is the spelling of Error() and HintOf: fields by their names, steps in
// neutral words.
var plain = Spelling{Field: plainField, Step: Step.String}

// Text is a sentence that names request fields ({name}) and steps (Step arguments)
// for each front end to spell: a next action's reason, a note.
type Text struct {
	Format string
	Args   []any
}

// Textf is the Text of format and args.
func Textf(format string, args ...any) Text { return Text{Format: format, Args: args} }

// String is t in plain words.
func (t Text) String() string { return render(t.Format, t.Args, plain) }

// Spell is t as the front end sp writes it.
func (t Text) Spell(sp Spelling) string { return render(t.Format, t.Args, sp) }

// hasStep reports whether args hold a Step or a Text (so a hint keeps its format
// for the front ends to spell).
func hasStep(args []any) bool {
	for _, a := range args {
		switch a.(type) {
		case Step, Text:
			return true
		}
	}
	return false
}

// SpelledBy is Spelled with a front end's whole spelling: the fields it names and
// the steps it names.
func SpelledBy(err error, sp Spelling) (msg, hint string) {
	return spelled(err, sp)
}
