// Package mcpserver is `git atlas mcp`: a Model Context Protocol server on stdio
// (the official Go SDK, github.com/modelcontextprotocol/go-sdk) with one tool per user
// operation (tools.go), each with an input schema generated from its operation's
// request type (request.go) and an output schema from the operation's result type.
//
// A front end on the operations layer, as the command line is: a tool decodes its
// input (unknown members refused) straight into the request of its operation of
// package ops and calls it; the request's Check fills the defaults and refuses what
// the operation cannot do, so no input rule exists twice, and the result is the document
// the command prints with --json. Errors name a request's fields as MCP spells them
// (ttl, verify_timeout; the command line writes --ttl).
//
// A tool call never prompts (the headless policy, as with --json). A failed
// operation is a tool error (isError: true) whose first content is the JSON error,
// {"error": {"code", "kind", "message", "hint"}}, as the CLI's --json prints it; a
// result the failing operation also returned (job claim's reason to stop) follows as
// a second content. A bad input (an unknown field, a wrong type, a missing required
// field) is a usage error (code 2) before any operation runs. The server logs to
// stderr only: stdout is the protocol.
package mcpserver

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the server.
type Options struct {
	Dir string // the repository (absolute)
	// Ops opens the operations on Dir for one tool call (each call its own, as each
	// command is).
	Ops     func() (*ops.Ops, error)
	Session string         // the session of a call that names none ($ATLAS_SESSION)
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

// jsonTypes are all of JSON's types: the type of a schema that allows any value.
var jsonTypes = []string{"null", "boolean", "number", "string", "array", "object"}

// objectsOnly makes every schema in s (s included) an object schema that names its
// type: MCP's Tool shape takes object schemas only, at every depth, and the official
// TypeScript SDK's tools/list refuses the boolean schemas that JSON Schema allows
// (docs/contract.md §12). jsonschema-go marshals a schema with no keyword as true (so
// it does what jsonschema.For infers for an interface field) and {"not": {}} as
// false; a schema that names no type (and combines none) gets all of JSON's types,
// which allows what it allowed. Children are mended before their parent, so {"not":
// {}} is mended by its child.
func objectsOnly(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	for _, c := range subschemas(s) {
		objectsOnly(c)
	}
	if typeless(s) {
		s.Types = slices.Clone(jsonTypes)
		if s.Description == "" {
			s.Description = anyValue
		}
	}
	return s
}

// typeless reports whether s names no type and is no combination of schemas that do.
func typeless(s *jsonschema.Schema) bool {
	return s.Type == "" && len(s.Types) == 0 && s.Ref == "" && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		len(s.AllOf) == 0 && s.Not == nil && s.Enum == nil && s.Const == nil
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

// spec is one tool: its name, description, request type, the operation it calls and
// its schemas.
type spec struct {
	name string
	desc string
	in   reflect.Type // the operation's request type: the tool's input
	// run calls the operation with the request (of type in) and returns its result as
	// JSON (nil when it returned none) and its error.
	run func(c *call, req reflect.Value) (json.RawMessage, error)
	// outType is the operation's result type: the output schema is generated from it.
	outType reflect.Type
	// results are exit codes whose document is the tool's result rather than an
	// error: audit's 10 ("something needs attention") is the report asked for.
	results []int

	inSchema, out *jsonschema.Schema
}

// call is one tool call: the operations it runs on.
type call struct {
	ctx context.Context
	ops *ops.Ops
	// result completes an operation's result before it is encoded (withToolCalls).
	result func(res any)
}

// tool declares a tool whose input is the request Req of operation op, which returns
// *Out.
func tool[Req, Out any](name, desc string, op func(*ops.Ops, context.Context, Req) (*Out, error), results ...int) spec {
	return spec{name: name, desc: desc, in: reflect.TypeFor[Req](), outType: reflect.TypeFor[Out](), results: results,
		run: func(c *call, req reflect.Value) (json.RawMessage, error) {
			res, err := op(c.ops, c.ctx, req.Interface().(Req))
			if res == nil {
				return nil, err
			}
			if c.result != nil {
				c.result(res)
			}
			doc, merr := encode(res)
			if merr != nil {
				return nil, merr
			}
			return doc, err
		}}
}

// encode is v's JSON as the command line's --json writes it (no HTML escaping),
// compact.
func encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// handler resolves the tool's schemas and returns the function that serves its calls.
func (t *spec) handler(opt Options, logger *slog.Logger) (mcp.ToolHandler, error) {
	fields, err := wireFields(t.in)
	if err != nil {
		return nil, err
	}
	in, err := inputSchema(t.in)
	if err != nil {
		return nil, err
	}
	t.inSchema = objectsOnly(in)
	if t.out, err = outputSchema(t.outType); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	inResolved, err := in.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	outResolved, err := t.out.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	wire := wireType(fields)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		w, uerr := decodeInput(req.Params.Arguments, wire, fields, inResolved)
		if uerr != nil {
			return usageResult(t.name, uerr), nil
		}
		r, err := request(t.in, fields, w, opt.Dir, opt.Session)
		if err != nil {
			return failureResult(err, nil), nil
		}
		o, err := opt.Ops()
		if err != nil {
			return failureResult(err, nil), nil
		}
		o.Spelling = mcpSpelling // next_action's steps as tool calls (docs/contract.md §4.6)
		out, err := t.run(&call{ctx: ctx, ops: o, result: withToolCalls}, r)
		remoteWarnings(o, logger, t.name)
		if code, _ := fault.Code(err); err != nil && (out == nil || !slices.Contains(t.results, code)) {
			return failureResult(err, out), nil
		}
		if out == nil {
			out = json.RawMessage("{}")
		}
		var doc any
		if err := json.Unmarshal(out, &doc); err == nil {
			if err := outResolved.Validate(doc); err != nil {
				logger.Error("a tool's result does not match its output schema", "tool", t.name, "error", err)
				return failureResult(fmt.Errorf("%s: the result does not match the tool's output schema: %w", t.name, err), out), nil
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: out}, nil
	}, nil
}

// remoteWarnings tells what the call's remote syncs did besides its result, as the
// command line warns of it on stderr (docs/contract.md §10.1): a run whose local chain
// was kept aside because the remote's won, and a local ref that could not follow a
// write the remote holds. Each goes to the server's log (stderr), a warning naming the
// tool (MCP's logging notifications are deprecated, SEP-2577).
func remoteWarnings(o *ops.Ops, logger *slog.Logger, tool string) {
	remote := o.RemoteName()
	if remote == "" {
		return
	}
	var msgs []string
	for _, d := range o.Kept() {
		msgs = append(msgs, fmt.Sprintf("run %s had diverged from %s: the remote's chain (%s) is the run now; this repository's chain (%s) is kept as %s",
			d.RunID, remote, d.Remote, d.Local, d.Ref))
	}
	for _, n := range o.RemoteNotes() {
		msgs = append(msgs, n.Spell(mcpSpelling))
	}
	for _, m := range msgs {
		logger.Warn(m, "tool", tool)
	}
}

// failureResult is a tool error carrying the JSON error of err as an agent reads it
// (ops.AgentError; and the result the operation returned with it, if any).
func failureResult(err error, out json.RawMessage) *mcp.CallToolResult {
	err = ops.AgentError(err) // a holder it quotes from a ledger only when a name
	b, _ := json.Marshal(map[string]any{"error": errorObject(err)})
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if out != nil {
		res.Content = append(res.Content, &mcp.TextContent{Text: string(out)})
	}
	return res
}

// errorObject is err as the JSON error of docs/contract.md §4.7 (the CLI's --json
// error): code and kind (fault.Code), the message and hint with the request fields
// they name spelled as MCP's input names them, and valid_targets or the further
// members the error names.
func errorObject(err error) map[string]any {
	code, kind := fault.Code(err)
	msg, hint := fault.SpelledBy(err, mcpSpelling)
	e := map[string]any{"code": code, "kind": kind, "message": msg, "hint": hint}
	if t := fault.TargetsOf(err); t != nil {
		e["valid_targets"] = t
	}
	for k, v := range fault.FieldsOf(err) {
		if _, taken := e[k]; !taken {
			e[k] = v
		}
	}
	return e
}

// usageResult is a bad input as the CLI reports a bad flag: code 2, kind usage.
func usageResult(name string, err error) *mcp.CallToolResult {
	hint := "see the input schema of tool " + name
	var ue *usageError
	if errors.As(err, &ue) && ue.hint != "" {
		hint = ue.hint
	}
	return failureResult(&fault.Error{Kind: fault.ErrUsage, Msg: err.Error(), Hint: hint}, nil)
}

type usageError struct{ msg, hint string }

func (e *usageError) Error() string { return e.msg }

// inputSchema is the schema of the arguments of request type t (wireFields): each
// described by its help tag, the values of an enum tag listed.
func inputSchema(t reflect.Type) (*jsonschema.Schema, error) {
	fields, err := wireFields(t)
	if err != nil {
		return nil, err
	}
	s, err := jsonschema.ForType(wireType(fields), nil)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		p := s.Properties[f.name]
		if p == nil {
			return nil, fmt.Errorf("argument %s: not in the schema", f.name)
		}
		if p.Description, err = f.description(); err != nil {
			return nil, err
		}
		if f.enum != "" {
			for v := range strings.SplitSeq(f.enum, ",") {
				p.Enum = append(p.Enum, v)
			}
		}
	}
	return s, nil
}

// outputSchema is the schema of an operation's result type t, as its JSON document:
// object schemas at every depth (objectsOnly), a raw JSON member allows any value,
// and every object allows further members (the JSON contract adds fields, never
// renames them; a ledger document keeps the members a newer release wrote).
func outputSchema(t reflect.Type) (*jsonschema.Schema, error) {
	types := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Types: jsonTypes, Description: anyValue},
	}
	textTypes(t, types, map[reflect.Type]bool{})
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		return nil, err
	}
	var open func(*jsonschema.Schema)
	open = func(s *jsonschema.Schema) {
		for _, c := range subschemas(s) {
			open(c)
		}
		if s.AdditionalProperties != nil && s.Properties != nil {
			s.AdditionalProperties = nil
		}
	}
	open(s)
	return objectsOnly(s), nil
}

// textTypes adds to types a string schema for every type reachable from t that
// encodes itself as JSON text (encoding.TextMarshaler: an object id is a struct in Go
// and a hex string in the document), which the generator would otherwise describe by
// its Go fields.
func textTypes(t reflect.Type, types map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	if _, ok := types[t]; !ok && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		types[t] = &jsonschema.Schema{Type: "string"}
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		textTypes(t.Elem(), types, seen)
	case reflect.Map:
		textTypes(t.Key(), types, seen)
		textTypes(t.Elem(), types, seen)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if f.IsExported() {
				textTypes(f.Type, types, seen)
			}
		}
	}
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

// decodeInput checks the arguments against the tool's input and decodes them into a
// value of t (wireType).
func decodeInput(raw json.RawMessage, t reflect.Type, fields []wireField, schema *jsonschema.Resolved) (reflect.Value, error) {
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
