// Package fault holds the error kinds that decide git-atlas's exit codes; domain
// packages wrap them, internal/cli maps them (docs/contract.md §4.6).
package fault

import (
	"errors"
	"fmt"
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
