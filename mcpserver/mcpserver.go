// Package mcpserver is `git atlas mcp`: a Model Context Protocol server on stdio
// (the official Go SDK, github.com/modelcontextprotocol/go-sdk) with one tool per user
// operation, each with an input schema inferred from a typed Go struct (tools.go) and
// an output schema of the document the command prints with --json.
//
// Tools go through the command line's in-process entry point, cli.Call, injected as
// Options.Call: each tool turns its typed input into exactly the arguments of the
// command the CLI runs with --json, which parses them into the request of the same
// operation of package ops and prints its result. Both front ends thus share the
// operations, the input rules (defaults, durations, sizes, refusals with their hints)
// and the JSON documents; no business logic is copied here, and nothing is executed
// in another process.
//
// A tool call never prompts (the headless policy, as with --json). A failed command is
// a tool error (isError: true) whose first content is the CLI's JSON error,
// {"error": {"code", "kind", "message", "hint"}}; a document the failing command also
// printed (job claim's reason to stop) follows as a second content. A bad input (an
// unknown field, a wrong type, a missing required field) is a usage error (code 2)
// before any command runs. The server logs to stderr only: stdout is the protocol.
// The package knows nothing of runs or jobs beyond the shapes of their JSON.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Failure is a command's error: its exit code, its kind and the JSON error object
// (`{"code","kind","message","hint",...}`) as the CLI prints it under "error".
type Failure struct {
	Code   int
	Kind   string
	Object json.RawMessage
}

// Caller runs one git-atlas command (args as on the command line, without --json and
// -C) in the repository dir and returns the JSON document it printed on stdout (nil if
// none) and its failure (nil on success). It must be safe to call concurrently.
type Caller func(ctx context.Context, dir string, args []string) (out json.RawMessage, fail *Failure)

// Options configure the server.
type Options struct {
	Dir     string         // the repository (absolute)
	Call    Caller         // how a tool runs its command
	Version string         // git-atlas's version
	In      io.ReadCloser  // the protocol's input (the client's requests)
	Out     io.WriteCloser // the protocol's output
	Log     io.Writer      // logs (stderr)
}

// Serve runs the server until the client closes the connection or ctx ends.
func Serve(ctx context.Context, opt Options) error {
	s, err := New(opt)
	if err != nil {
		return err
	}
	return s.Run(ctx, &lineTransport{in: opt.In, out: opt.Out})
}

// New builds the server with every tool.
func New(opt Options) (*mcp.Server, error) {
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := mcp.NewServer(&mcp.Implementation{Name: "git-atlas", Title: "git-atlas", Version: opt.Version}, &mcp.ServerOptions{
		Logger:       logger,
		Instructions: instructions,
	})
	for _, t := range tools() {
		h, err := t.handler(opt, logger)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.name, err)
		}
		s.AddTool(&mcp.Tool{Name: t.name, Description: t.desc, InputSchema: t.inSchema, OutputSchema: t.out}, h)
	}
	return s, nil
}

// anyValue describes a schema that allows any JSON value.
const anyValue = "any JSON value"

// objectsOnly makes every schema in s (s included) one that marshals as a JSON
// object: MCP's Tool shape takes object schemas only, at every depth, and the
// official TypeScript SDK's tools/list refuses the boolean schemas that JSON Schema
// allows (docs/contract.md §12). jsonschema-go marshals a schema with no keyword as true (so does
// what jsonschema.For infers for an interface field, and anything() would without its
// description) and {"not": {}} as false; a schema with no keyword gets a description,
// which allows what it allowed. Children are mended before their parent, so {"not":
// {}} is mended by its child.
func objectsOnly(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	for _, c := range subschemas(s) {
		objectsOnly(c)
	}
	if b, err := json.Marshal(s); err == nil && string(b) == "true" {
		s.Description = anyValue
	}
	return s
}

// subschemas are the schemas s holds directly: every field of type *Schema,
// []*Schema or map[string]*Schema (properties, items, anyOf, not, $defs, ...).
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f := v.Field(i).Interface().(type) {
		case *jsonschema.Schema:
			if f != nil {
				out = append(out, f)
			}
		case []*jsonschema.Schema:
			for _, c := range f {
				if c != nil {
					out = append(out, c)
				}
			}
		case map[string]*jsonschema.Schema:
			for _, k := range slices.Sorted(maps.Keys(f)) {
				if f[k] != nil {
					out = append(out, f[k])
				}
			}
		}
	}
	return out
}

// instructions is what an MCP client may show its model about the server as a whole.
const instructions = `git-atlas: the durable ledger of AI-agent runs in this git repository. ` +
	`Always pass holder (and session) on writes; act on resume_plan's next_action; ` +
	`recover instead of discarding; finish at the end; never touch the user's checkout. ` +
	`Errors carry {"error": {"code","kind","message","hint"}} as the git-atlas CLI's --json does.`

// spec is one tool: its name, description, the command words it runs, its input type
// and its output schema.
type spec struct {
	name  string
	desc  string
	words []string // the command and any fixed flags: "job", "claim"; "resume", "--plan"
	in    reflect.Type
	out   *jsonschema.Schema
	// results are exit codes whose document is the tool's result rather than an
	// error: audit's 10 ("something needs attention") is the report asked for.
	results []int

	inSchema *jsonschema.Schema
}

// tool declares a tool whose input is In.
func tool[In any](name, desc string, words []string, out *jsonschema.Schema, results ...int) spec {
	return spec{name: name, desc: desc, words: words, in: reflect.TypeFor[In](), out: out, results: results}
}

// handler resolves the tool's schemas and returns the function that serves its calls.
func (t *spec) handler(opt Options, logger *slog.Logger) (mcp.ToolHandler, error) {
	in, err := inputSchema(t.in)
	if err != nil {
		return nil, err
	}
	t.inSchema = objectsOnly(in)
	objectsOnly(t.out)
	inResolved, err := in.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	outResolved, err := t.out.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	fields := fieldsOf(t.in)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v, uerr := decodeInput(req.Params.Arguments, t.in, fields, inResolved)
		if uerr != nil {
			return usageResult(t.name, uerr), nil
		}
		args, cleanup, aerr := buildArgs(t.words, v, fields, opt.Dir)
		defer cleanup()
		if aerr != nil {
			return usageResult(t.name, aerr), nil
		}
		out, fail := opt.Call(ctx, opt.Dir, args)
		if fail != nil && (out == nil || !slices.Contains(t.results, fail.Code)) {
			return failureResult(fail, out), nil
		}
		if out == nil {
			out = json.RawMessage("{}")
		}
		var doc any
		if err := json.Unmarshal(out, &doc); err == nil {
			err = outResolved.Validate(doc)
			if err != nil {
				logger.Error("a tool's result does not match its output schema", "tool", t.name, "error", err)
				return failureResult(&Failure{Code: 1, Kind: "failure", Object: errorJSON(1, "failure",
					fmt.Sprintf("%s: the result does not match the tool's output schema: %v", t.name, err),
					"this is a git-atlas bug: please report it")}, out), nil
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: compact(out)}}, StructuredContent: out}, nil
	}, nil
}

// failureResult is a tool error carrying the CLI's JSON error (and the document the
// command printed, if any).
func failureResult(f *Failure, out json.RawMessage) *mcp.CallToolResult {
	obj := f.Object
	if len(obj) == 0 {
		obj = errorJSON(f.Code, f.Kind, "the command failed", "")
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"error": obj})
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if out != nil {
		res.Content = append(res.Content, &mcp.TextContent{Text: compact(out)})
	}
	return res
}

// usageResult is a bad input as the CLI reports a bad flag: code 2, kind usage.
func usageResult(name string, err error) *mcp.CallToolResult {
	hint := "see the input schema of tool " + name
	var ue *usageError
	if errors.As(err, &ue) && ue.hint != "" {
		hint = ue.hint
	}
	return failureResult(&Failure{Code: 2, Kind: "usage", Object: errorJSON(2, "usage", err.Error(), hint)}, nil)
}

// compact is a JSON document on one line: the CLI indents for people, a model reads
// it in its context.
func compact(doc json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, doc) != nil {
		return string(doc)
	}
	return b.String()
}

func errorJSON(code int, kind, msg, hint string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"code": code, "kind": kind, "message": msg, "hint": hint})
	return b
}

type usageError struct{ msg, hint string }

func (e *usageError) Error() string { return e.msg }

// field is one input field: its JSON name, its index, and how it becomes arguments.
type field struct {
	name  string // the JSON name: snake_case, the CLI flag with - as _
	index []int
	arg   bool // a positional argument
	path  bool // a file path: a relative one is relative to the repository
	abs   bool // a file path that must be absolute (a place to write outside the repository)
	file  bool // a JSON value the command reads from a file (--children FILE)
}

// fieldsOf lists the input fields of t (embedded structs flattened).
func fieldsOf(t reflect.Type) []field {
	var out []field
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous || !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		tags := strings.Split(sf.Tag.Get("atlas"), ",")
		out = append(out, field{name: name, index: sf.Index, arg: slices.Contains(tags, "arg"),
			path: slices.Contains(tags, "path"), abs: slices.Contains(tags, "abs"), file: slices.Contains(tags, "file")})
	}
	return out
}

// inputSchema infers the schema of t from its fields and their jsonschema tags, then
// adds the enums named by `enum:"a,b"` tags.
func inputSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	for _, sf := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if e := sf.Tag.Get("enum"); e != "" && s.Properties[name] != nil {
			for v := range strings.SplitSeq(e, ",") {
				s.Properties[name].Enum = append(s.Properties[name].Enum, v)
			}
		}
	}
	return s, nil
}

// decodeInput checks the arguments against the tool's input and decodes them.
func decodeInput(raw json.RawMessage, t reflect.Type, fields []field, schema *jsonschema.Resolved) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return v, &usageError{msg: "the arguments must be a JSON object"}
	}
	var known, unknown []string
	for _, f := range fields {
		known = append(known, f.name)
	}
	for k := range members {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		hint := "this tool takes no arguments"
		if len(known) > 0 {
			hint = "valid arguments: " + strings.Join(known, ", ")
		}
		return v, &usageError{msg: fmt.Sprintf("unknown argument %s", quoteList(unknown)), hint: hint}
	}
	var doc any
	_ = json.Unmarshal(raw, &doc)
	if err := schema.Validate(doc); err != nil {
		return v, &usageError{msg: "invalid arguments: " + strings.TrimPrefix(err.Error(), "validating root: ")}
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		return v, &usageError{msg: "invalid arguments: " + plainJSONError(err)}
	}
	return v, nil
}

// plainJSONError says what encoding/json complains of without Go type names.
func plainJSONError(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Sprintf("%s: got a JSON %s", te.Field, te.Value)
	}
	return "not valid JSON"
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// buildArgs turns a decoded input into the command's arguments: the command words,
// then each set field as --flag=value (a list repeats the flag, true is --flag, an
// object is its JSON), then "--" and the positional arguments, so that no value is
// ever read as a flag. cleanup removes the temporary files of `file` fields.
func buildArgs(words []string, v reflect.Value, fields []field, dir string) (args []string, cleanup func(), err error) {
	var temps []string
	cleanup = func() {
		for _, p := range temps {
			_ = os.Remove(p)
		}
	}
	args = append(args, words...)
	var positional []string
	for _, f := range fields {
		fv := v.FieldByIndex(f.index)
		if fv.IsZero() {
			continue
		}
		for fv.Kind() == reflect.Pointer {
			fv = fv.Elem()
		}
		var values []string
		switch {
		case f.file:
			b, err := json.Marshal(fv.Interface())
			if err != nil {
				return nil, cleanup, &usageError{msg: f.name + ": " + plainJSONError(err)}
			}
			tmp, err := os.CreateTemp("", "git-atlas-mcp-*.json")
			if err != nil {
				return nil, cleanup, err
			}
			temps = append(temps, tmp.Name())
			_, werr := tmp.Write(b)
			if cerr := tmp.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return nil, cleanup, werr
			}
			values = []string{tmp.Name()}
		case fv.Kind() == reflect.Bool:
			args = append(args, "--"+flagName(f.name))
			continue
		case fv.Kind() == reflect.Slice:
			for i := 0; i < fv.Len(); i++ {
				values = append(values, fmt.Sprint(fv.Index(i).Interface()))
			}
		case fv.Kind() == reflect.Map || fv.Kind() == reflect.Struct:
			b, err := json.Marshal(fv.Interface())
			if err != nil {
				return nil, cleanup, &usageError{msg: f.name + ": " + plainJSONError(err)}
			}
			values = []string{string(b)}
		default:
			values = []string{fmt.Sprint(fv.Interface())}
		}
		if f.path {
			for i, p := range values {
				if f.abs && !filepath.IsAbs(p) {
					// The server has no working directory of the caller's, and the
					// repository is the one place such a path may never go.
					return nil, cleanup, &usageError{msg: fmt.Sprintf("%s %q is a relative path: give an absolute one, outside the repository's working trees", f.name, p)}
				}
				if !filepath.IsAbs(p) {
					values[i] = filepath.Join(dir, p)
				}
			}
		}
		for _, val := range values {
			if f.arg {
				positional = append(positional, val)
			} else {
				args = append(args, "--"+flagName(f.name)+"="+val)
			}
		}
	}
	if len(positional) > 0 {
		args = append(append(args, "--"), positional...)
	}
	return args, cleanup, nil
}

// flagName is the CLI flag of a JSON name: max_attempts → max-attempts.
func flagName(name string) string { return strings.ReplaceAll(name, "_", "-") }
