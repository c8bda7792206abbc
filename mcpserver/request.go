package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// A tool's input is its operation's request (package ops), decoded straight into it
// as the request's own tags put it on the wire (docs/contract.md §4.6):
//
//   - A field is an argument exactly when it has a json tag: its name is the field
//     as the request's errors name it ({ttl}), and omitempty makes it optional. A
//     field without one is not on MCP's wire, and an argument naming it is unknown:
//     what the front end is (ForAgent, Person, Prompt), what a front end parses
//     (StartRequest.Stages) and the person-only steps (AllowOutsideScope,
//     AcceptUnresolved: ops.PersonOnlySteps).
//   - wire:"inline" on a struct field (Driver, Worker, Snapshot): its arguments are
//     the request's own.
//   - help:"text" is the argument's description; help:"${key}" the text the command
//     line's help shows for the same field (ops.FieldHelp). enum:"a,b" lists its
//     values.
//   - The wire form of a value: a time.Duration is a string such as "10m" or "90s",
//     positive; wire:"size" a size string such as "500KiB" or "100MiB", positive;
//     wire:"object" a JSON object and wire:"objects" a list of them, kept as JSON;
//     wire:"path" a file path, relative to the repository; wire:"session" is the
//     server's session ($ATLAS_SESSION) when the call names none.
//
// The front-end facts are filled after decoding (asAgent): ForAgent is true and
// Person is a call through MCP.

// wireField is one argument of a tool: where it goes in the request and its form on
// the wire.
type wireField struct {
	name     string       // the argument's name
	index    []int        // the request field's index (reflect.Value.FieldByIndex)
	wire     reflect.Type // the argument's Go type on the wire
	opts     []string     // the wire tag's options
	optional bool
	help     string // the help tag
	enum     string // the enum tag
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	stringType   = reflect.TypeFor[string]()
	personType   = reflect.TypeFor[ops.Person]()
)

func (f wireField) is(opt string) bool { return slices.Contains(f.opts, opt) }

// wireFields are the arguments of request type t, in the order of its fields.
func wireFields(t reflect.Type) ([]wireField, error) {
	var out []wireField
	var walk func(t reflect.Type, index []int) error
	walk = func(t reflect.Type, index []int) error {
		for i := range t.NumField() {
			sf := t.Field(i)
			idx := append(slices.Clone(index), i)
			var opts []string
			if w := sf.Tag.Get("wire"); w != "" {
				opts = strings.Split(w, ",")
			}
			if slices.Contains(opts, "inline") {
				if sf.Type.Kind() != reflect.Struct {
					return fmt.Errorf("%s.%s: wire:\"inline\" on a %s", t, sf.Name, sf.Type)
				}
				if err := walk(sf.Type, idx); err != nil {
					return err
				}
				continue
			}
			tag, ok := sf.Tag.Lookup("json")
			if !ok || tag == "-" || !sf.IsExported() {
				continue
			}
			name, rest, _ := strings.Cut(tag, ",")
			f := wireField{name: name, index: idx, wire: sf.Type, opts: opts, optional: strings.Contains(rest, "omitempty"),
				help: sf.Tag.Get("help"), enum: sf.Tag.Get("enum")}
			switch {
			case f.is("size") && sf.Type.Kind() == reflect.Int64, sf.Type == durationType:
				f.wire = stringType
			case f.is("object") && sf.Type == rawType:
				f.wire = reflect.TypeFor[map[string]any]()
			case f.is("objects") && sf.Type == rawType:
				f.wire = reflect.TypeFor[[]map[string]any]()
			case sf.Type == rawType || f.is("size") || f.is("object") || f.is("objects"):
				return fmt.Errorf("%s.%s: no wire form for a %s tagged %v", t, sf.Name, sf.Type, opts)
			}
			if slices.ContainsFunc(out, func(o wireField) bool { return o.name == name }) {
				return fmt.Errorf("%s: two fields are argument %q", t, name)
			}
			out = append(out, f)
		}
		return nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a request is a struct, not a %s", t)
	}
	return out, walk(t, nil)
}

// wireType is the struct the arguments decode into before they go into the request.
func wireType(fields []wireField) reflect.Type {
	sfs := make([]reflect.StructField, len(fields))
	for i, f := range fields {
		tag := f.name
		if f.optional {
			tag += ",omitempty"
		}
		sfs[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: f.wire, Tag: reflect.StructTag(`json:"` + tag + `"`)}
	}
	return reflect.StructOf(sfs)
}

// description is the text of the argument's help tag, each field it names spelled
// as MCP spells it.
func (f wireField) description() (string, error) {
	key, ok := strings.CutPrefix(f.help, "${")
	if !ok {
		if f.help == "" {
			return "", fmt.Errorf("argument %s has no help", f.name)
		}
		return f.help, nil
	}
	key = strings.TrimSuffix(key, "}")
	text := ops.FieldHelp(key, func(field string) string { return field })
	if text == "" {
		return "", fmt.Errorf("argument %s: no help %q in ops.FieldHelp", f.name, key)
	}
	return text, nil
}

// request puts the decoded arguments w (of wireType) into a new request of type t:
// each value in its wire form read, a relative path made the repository's, an
// absent session the server's. An error names the argument.
func request(t reflect.Type, fields []wireField, w reflect.Value, dir, session string) (reflect.Value, error) {
	req := reflect.New(t).Elem()
	for i, f := range fields {
		in, out := w.Field(i), req.FieldByIndex(f.index)
		switch {
		case out.Type() == durationType:
			d, err := wireDuration(f.name, in.String())
			if err != nil {
				return req, err
			}
			out.SetInt(int64(d))
		case f.is("size"):
			if s := in.String(); s != "" {
				n, err := ops.ParseSize(s)
				if err != nil || n <= 0 {
					return req, fault.Named(fault.ErrUsage, "{"+f.name+"} must be a positive size such as 500KiB or 100MiB (got %q)", s)
				}
				out.SetInt(n)
			}
		case f.is("object"), f.is("objects"):
			if in.IsNil() {
				continue
			}
			b, err := json.Marshal(in.Interface())
			if err != nil {
				return req, fault.Named(fault.ErrUsage, "{"+f.name+"}: %s", strings.TrimSpace(err.Error()))
			}
			out.SetBytes(b)
		case f.is("path") && out.Kind() == reflect.String:
			out.SetString(repoPath(dir, in.String()))
		case f.is("path") && out.Type() == reflect.TypeFor[[]string]():
			if !in.IsNil() {
				list := make([]string, in.Len())
				for j := range list {
					list[j] = repoPath(dir, in.Index(j).String())
				}
				out.Set(reflect.ValueOf(list))
			}
		case f.is("session"):
			s := in.String()
			if s == "" {
				s = session
			}
			out.SetString(s)
		default:
			out.Set(in)
		}
	}
	asAgent(req)
	return req, nil
}

// asAgent fills what a request says of its front end: its result goes to an agent
// (ForAgent), and no person stands behind it (Person: a call through MCP, so a
// person's step is refused).
func asAgent(req reflect.Value) {
	for i := range req.NumField() {
		f, sf := req.Field(i), req.Type().Field(i)
		switch {
		case sf.Name == "ForAgent" && f.Kind() == reflect.Bool:
			f.SetBool(true)
		case sf.Type == personType:
			f.Set(reflect.ValueOf(ops.Person{Via: ops.ViaMCP}))
		}
	}
}

// wireDuration reads a duration argument ("" is the request's default); given, it
// must be positive, as on the command line.
func wireDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fault.Named(fault.ErrUsage, "{"+field+"} must be a duration such as 10m or 90s (got %q)", s)
	}
	if d <= 0 {
		return 0, fault.Named(fault.ErrUsage, "{"+field+"} must be a positive duration (got %s)", d)
	}
	return d, nil
}

// repoPath is a file path of the input: a relative one is relative to the repository.
func repoPath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
