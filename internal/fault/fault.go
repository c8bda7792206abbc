// Package fault holds the error kinds that decide git-atlas's exit codes; domain
// packages wrap them, internal/cli maps them (docs/contract.md §4.6).
package fault

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

var (
	// ErrUsage: a bad argument or an invalid name (exit 2).
	ErrUsage = errors.New("usage")
	// ErrConflict: a concurrent update won, or a lease or receipt is stale (exit 3).
	ErrConflict = errors.New("conflict")
	// ErrNotFound: a run, stage, job, node or snapshot does not exist (exit 4).
	ErrNotFound = errors.New("not found")
	// ErrRefused: the state machine or a budget refuses the change (exit 5).
	ErrRefused = errors.New("refused")
	// ErrVerifyFailed: a verify command failed (exit 6).
	ErrVerifyFailed = errors.New("verify failed")
	// ErrAttention: audit found something that needs attention (exit 10).
	ErrAttention = errors.New("needs attention")
)

// Error is an error of a kind, with a message for people and a hint for what to do.
type Error struct {
	Kind error
	Msg  string
	Hint string
	Err  error // the cause, if any
	// Targets are the statuses a refused transition could take instead (docs/contract.md §4.7:
	// `valid_targets`); nil when the error is not about a transition.
	Targets []string
	// Fields are more members of the JSON error object (e.g. `driver` on a write
	// refused because another session drives the run, docs/contract.md §4.7).
	Fields map[string]any
	// Quoted are the values from a ledger the message, hint or fields quote (a
	// holder's name): a front end for an agent replaces those it may not read
	// (Redact).
	Quoted []string
	// Withheld are parts of the message that quote a value of a ledger's documents no
	// write of git-atlas makes (pulled text), each with the words an agent reads
	// instead: Redact replaces them all.
	Withheld []Withheld

	// msgT and hintT are the formats of an error that names request fields (Named),
	// with their arguments: Spelled renders them for a front end.
	msgT, hintT       string
	msgArgs, hintArgs []any
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Is makes errors.Is(err, fault.ErrX) match the kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

// New makes an error of kind with a formatted message.
func New(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// WithHint returns e with a hint.
func (e *Error) WithHint(format string, args ...any) *Error {
	if e.msgT != "" || hasStep(args) { // an error naming fields may name them in its hint too, and steps
		e.hintT, e.hintArgs = format, args
		e.Hint = render(format, args, plain)
		return e
	}
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithTargets returns e naming the valid targets of a refused transition (never nil
// afterwards: an empty list says the subject is terminal).
func (e *Error) WithTargets(targets []string) *Error {
	e.Targets = append([]string{}, targets...)
	return e
}

// WithField returns e with one more member of its JSON error object.
func (e *Error) WithField(name string, v any) *Error {
	if e.Fields == nil {
		e.Fields = map[string]any{}
	}
	e.Fields[name] = v
	return e
}

// WithQuoted returns e noting values from a ledger that it quotes (Redact).
func (e *Error) WithQuoted(values ...string) *Error {
	e.Quoted = append(e.Quoted, values...)
	return e
}

// Withheld is a part of an error's message that quotes pulled text (Text), and what
// an agent reads in its place (Stand).
type Withheld struct{ Text, Stand string }

// WithWithheld returns e noting parts of its message that quote a ledger document's
// value no write makes (Redact).
func (e *Error) WithWithheld(parts ...Withheld) *Error {
	e.Withheld = append(e.Withheld, parts...)
	return e
}

// Redact is err with every value its first *Error quotes from a ledger (Quoted) that
// bad reports replaced by stand, and every part it withholds (Withheld) replaced by
// that part's stand, in its message, hint and fields; err itself when there is none.
// The kind stays.
func Redact(err error, bad func(string) bool, stand string) error {
	var fe *Error
	if !errors.As(err, &fe) {
		return err
	}
	var gone []string
	for _, v := range fe.Quoted {
		if v != "" && bad(v) {
			gone = append(gone, v)
		}
	}
	if len(gone) == 0 && len(fe.Withheld) == 0 {
		return err
	}
	sub := func(s string) string {
		for _, w := range fe.Withheld {
			if w.Text != "" {
				s = strings.ReplaceAll(s, w.Text, w.Stand)
			}
		}
		for _, v := range gone {
			s = strings.ReplaceAll(s, v, stand)
		}
		return s
	}
	c := *fe
	c.Quoted, c.Withheld = nil, nil
	c.Msg, c.Hint = sub(c.Msg), sub(c.Hint)
	c.msgArgs, c.hintArgs = redactValue(fe.msgArgs, sub).([]any), redactValue(fe.hintArgs, sub).([]any)
	if fe.Fields != nil {
		c.Fields = redactValue(fe.Fields, sub).(map[string]any)
	}
	if fe.Error() == err.Error() { // nothing wraps it in words
		return &c
	}
	// Wrapped: the wrapping text is kept, redacted, over a cause that is redacted.
	return &Error{Kind: fe.Kind, Msg: sub(err.Error()), Hint: c.Hint, Targets: c.Targets, Fields: c.Fields}
}

// redactValue is v (an argument or a field's value) with sub applied to each string
// it holds; a copy where it changes anything.
func redactValue(v any, sub func(string) string) any {
	switch x := v.(type) {
	case string:
		return sub(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i := range x {
			out[i] = redactValue(x[i], sub)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(e, sub)
		}
		return out
	case Step:
		out := Step{Op: x.Op, Fields: make([]Field, len(x.Fields))}
		for i, f := range x.Fields {
			out.Fields[i] = Field{Name: f.Name, Value: redactValue(f.Value, sub)}
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[k] = sub(e)
		}
		return out
	}
	return v
}

// FieldsOf returns the extra JSON members of the first *Error in err's chain that has
// them, or nil.
func FieldsOf(err error) map[string]any {
	var fe *Error
	for errors.As(err, &fe) {
		if fe.Fields != nil {
			return fe.Fields
		}
		if fe.Err == nil {
			return nil
		}
		err = fe.Err
	}
	return nil
}

// TargetsOf returns the valid targets named by the first *Error in err's chain that
// has them, or nil.
func TargetsOf(err error) []string {
	var fe *Error
	for errors.As(err, &fe) {
		if fe.Targets != nil {
			return fe.Targets
		}
		if fe.Err == nil {
			return nil
		}
		err = fe.Err
	}
	return nil
}

// Usage, Conflict, NotFound and Refused are shorthands for New.
func Usage(format string, args ...any) *Error    { return New(ErrUsage, format, args...) }
func Conflict(format string, args ...any) *Error { return New(ErrConflict, format, args...) }
func NotFound(format string, args ...any) *Error { return New(ErrNotFound, format, args...) }
func Refused(format string, args ...any) *Error  { return New(ErrRefused, format, args...) }

// HintOf returns the hint of the first *Error in err's chain.
func HintOf(err error) string {
	var fe *Error
	for errors.As(err, &fe) {
		if fe.Hint != "" {
			return fe.Hint
		}
		if fe.Err == nil {
			return ""
		}
		err = fe.Err
	}
	return ""
}

// Errors that name a request's fields (docs/contract.md §4.6): the operations speak of
// a request's fields, never of a front end's flags. Named's format and a hint given
// with WithHint may name a field as {name} (its snake_case name, e.g. {ttl},
// {verify_timeout}); Error() shows it as the plain name, and Spelled shows it as a
// front end writes it (`--ttl` on the command line, `ttl` over MCP).

// Named makes an error of kind whose message names request fields as {name}.
func Named(kind error, format string, args ...any) *Error {
	e := &Error{Kind: kind, msgT: format, msgArgs: args}
	e.Msg = render(format, args, plain)
	return e
}

// render formats format with args after replacing each {field} by sp.Field(field)
// and each Step argument by sp.Step(step) (a Text argument, spelled the same way).
func render(format string, args []any, sp Spelling) string {
	f := fieldRef().ReplaceAllStringFunc(format, func(m string) string {
		return strings.ReplaceAll(sp.Field(m[1:len(m)-1]), "%", "%%")
	})
	if len(args) == 0 {
		return strings.ReplaceAll(f, "%%", "%")
	}
	if hasStep(args) {
		args = append([]any{}, args...)
		for i, a := range args {
			switch x := a.(type) {
			case Step:
				args[i] = sp.Step(x)
			case Text:
				args[i] = x.Spell(sp)
			}
		}
	}
	return fmt.Sprintf(f, args...)
}

// fieldRef is how a format names a field: {verify_timeout}. Braces around anything
// else (a glob's {a,b}, a JSON example) are text.
// Compiled on first use, not at start-up (issue 34).
var fieldRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`) })

func plainField(name string) string { return name }

// Spelled is err's message and hint with every field it names spelled by spell: the
// front end's own words for a request's fields.
func Spelled(err error, spell func(field string) string) (msg, hint string) {
	return spelled(err, Spelling{Field: spell, Step: Step.String})
}

func spelled(err error, spell Spelling) (msg, hint string) {
	msg = err.Error()
	var fe *Error
	for e := err; errors.As(e, &fe); e = fe.Err { // every *Error in the chain of causes
		if fe.msgT != "" {
			msg = strings.Replace(msg, fe.Msg, render(fe.msgT, fe.msgArgs, spell), 1)
		}
		if fe.Err == nil {
			break
		}
	}
	// The hint is HintOf's, spelled.
	for errors.As(err, &fe) {
		if fe.Hint != "" {
			if fe.hintT != "" {
				return msg, render(fe.hintT, fe.hintArgs, spell)
			}
			return msg, fe.Hint
		}
		if fe.Err == nil {
			break
		}
		err = fe.Err
	}
	return msg, ""
}

// Code is err's exit code and the kind its JSON error names (docs/contract.md §4.6), the
// same for every front end: usage 2, conflict 3, not found 4, refused 5, verify
// failed 6, attention 10, any other failure 1 (nil: 0).
func Code(err error) (int, string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, ErrUsage):
		return 2, "usage"
	case errors.Is(err, ErrConflict):
		return 3, "conflict"
	case errors.Is(err, ErrNotFound):
		return 4, "not_found"
	case errors.Is(err, ErrRefused):
		return 5, "refused"
	case errors.Is(err, ErrVerifyFailed):
		return 6, "verify_failed"
	case errors.Is(err, ErrAttention):
		return 10, "attention"
	}
	return 1, "failure"
}
