package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/alecthomas/kong"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
)

// Spelling is how the command line writes what the operations name
// (docs/contract.md §4.6): a request's field as its flag, a step as the command line
// that runs it.
var Spelling = fault.Spelling{Field: flagSpelling, Step: StepCommand}

// spelling is Spelling for this invocation: every step also carries the global flags
// the asker gave that say where it runs, -C (as an absolute path) and --remote, unless
// it names its own, so that it runs as printed for them wherever they are
// (docs/contract.md §11.13): a command printed for `git atlas --remote origin ...` writes
// through origin too, and one for `git atlas -C REPO ...` run from elsewhere finds REPO.
func (e *Env) spelling() fault.Spelling {
	var globals []fault.Field
	if e.Dir != "" {
		dir, err := filepath.Abs(e.Dir)
		if err != nil {
			dir = e.Dir
		}
		globals = append(globals, fault.Field{Name: "dir", Value: dir})
	}
	if e.askedRemote != nil {
		globals = append(globals, fault.Field{Name: "remote", Value: *e.askedRemote})
	}
	if len(globals) == 0 {
		return Spelling
	}
	return fault.Spelling{Field: flagSpelling, Step: func(s fault.Step) string {
		s.Fields = slices.Clone(s.Fields)
		for _, g := range globals {
			if _, ok := s.Field(g.Name); !ok {
				s.Fields = append(s.Fields, g)
			}
		}
		return StepCommand(s)
	}}
}

// StepCommand is step s as the command line runs it: `git atlas finish R --status
// failed`, every argument quoted for sh (docs/contract.md §11.13) but a placeholder
// (fault.Placeholder: NAME, completed|failed), which is shown as it is. Which fields
// are positional arguments, and each flag's name, come from kong's model of the
// command; a field given false is left out, true is the bare flag, and a value that
// starts with - goes as --flag=VALUE. A global flag with a short form (the
// directory, -C) goes before the command, as git's own -C does.
func StepCommand(s fault.Step) string {
	shape := stepShape(s.Op)
	word := func(v any) string {
		if p, ok := v.(fault.Placeholder); ok {
			return string(p)
		}
		return text.ShellQuote(fmt.Sprint(v))
	}
	words := []string{"git", "atlas"}
	var before []string
	for _, f := range s.Fields {
		if short, ok := shape.before[f.Name]; ok {
			before = append(before, short, word(f.Value))
		}
	}
	out := []string{text.Command(append(words, strings.Fields(s.Op)...)...)}
	if len(before) > 0 {
		out = []string{text.Command(words...), strings.Join(before, " "), text.Command(strings.Fields(s.Op)...)}
	}
	for _, pos := range shape.positional {
		if v, ok := s.Field(pos); ok {
			out = append(out, word(v))
		}
	}
	for _, f := range s.Fields {
		if _, ok := shape.before[f.Name]; ok || shape.isPositional(f.Name) {
			continue
		}
		flag := shape.flag(f.Name)
		switch v := f.Value.(type) {
		case bool:
			if v {
				out = append(out, flag)
			}
		case string:
			if strings.HasPrefix(v, "-") {
				out = append(out, text.ShellQuote(flag+"="+v))
			} else {
				out = append(out, flag, word(v))
			}
		default:
			out = append(out, flag, word(v))
		}
	}
	return strings.Join(out, " ")
}

// shape is what the command line's model says of one command: its positional
// arguments, in order, and its flags (the global ones too), each by the request
// field it binds to (its name with - as _).
type shape struct {
	positional []string
	flags      map[string]string // field -> --flag
	before     map[string]string // field -> -X: a global flag with a short form
}

func (sh shape) isPositional(field string) bool { return slices.Contains(sh.positional, field) }

// flag is the flag that sets field; flagSpelling's when the model has none.
func (sh shape) flag(field string) string {
	if f, ok := sh.flags[field]; ok {
		return f
	}
	return flagSpelling(field)
}

var shapes sync.Map // op -> shape

// stepShape is the shape of the command op names ("job done"), from kong's model of
// that command alone (built once per command; newParser builds the same leaf model).
func stepShape(op string) shape {
	if s, ok := shapes.Load(op); ok {
		return s.(shape)
	}
	sh := shape{flags: map[string]string{}}
	words := strings.Fields(op)
	if len(words) > 0 {
		if f, ok := leafCommand(words[:1]); ok && f.Type != nil {
			var root struct{ Globals }
			k, err := kong.New(&root, kong.Name("git atlas"), kong.Writers(io.Discard, io.Discard), noHelp(),
				kong.DynamicCommand(commandName(f), "", "", reflect.New(f.Type).Interface(), string(f.Tag)))
			if err == nil {
				sh = shapeOf(k.Model.Node, words)
			}
		}
	}
	shapes.Store(op, sh)
	return sh
}

// shapeOf reads the shape of the command words name under root.
func shapeOf(root *kong.Node, words []string) shape {
	sh := shape{flags: map[string]string{}, before: map[string]string{}}
	for _, f := range root.Flags {
		if f.Short != 0 {
			sh.before[strings.ReplaceAll(f.Name, "-", "_")] = "-" + string(f.Short)
		}
	}
	addFlags := func(n *kong.Node) {
		for _, f := range n.Flags {
			sh.flags[strings.ReplaceAll(f.Name, "-", "_")] = "--" + f.Name
		}
	}
	addFlags(root)
	n := root
	for _, w := range words {
		var next *kong.Node
		for _, c := range n.Children {
			if c.Name == w {
				next = c
			}
		}
		if next == nil {
			return sh
		}
		n = next
		addFlags(n)
	}
	for _, p := range n.Positional {
		sh.positional = append(sh.positional, strings.ReplaceAll(p.Name, "-", "_"))
	}
	return sh
}
