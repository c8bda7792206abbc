package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
)

// ErrorObject is a command's error as --json prints it on stderr (docs/contract.md §4.7): the exit
// code, its kind, the message and the hint. Raw is the whole object as printed, with
// any further members (valid_targets, and whatever later commands add).
type ErrorObject struct {
	Code    int             `json:"code"`
	Kind    string          `json:"kind"`
	Message string          `json:"message"`
	Hint    string          `json:"hint"`
	Raw     json.RawMessage `json:"-"`
}

// Error is the message.
func (e *ErrorObject) Error() string { return e.Message }

// Call runs one git-atlas command in this process, exactly as `git atlas -C dir --json
// ARGS...` would from a script: stdin empty and no terminal (the headless policy: it
// never prompts), stdout and stderr captured. out is the JSON document the command
// printed on stdout (nil when it printed none; some failures print one too, such as
// `job claim` with nothing left to claim); errObj is nil on success.
//
// It is the in-process entry point of the MCP server: a tool call is parsed by the
// same flags (defaults, durations, sizes, the bad-input errors with their hints) into
// the same ops request the command line builds, and its result printed as the same
// --json document, so neither the input rules nor the output shapes exist twice. Call is
// safe to use from several goroutines at once: a command run this way changes no
// process-wide state (it does not chdir, set environment variables or handle signals;
// -C carries the directory), and each call builds its own parser, repository handle
// and ledger store. ctx cancels the command as SIGINT cancels the CLI's.
func Call(ctx context.Context, dir string, args []string) (out json.RawMessage, errObj *ErrorObject) {
	return call(ctx, OSSystem(), dir, args)
}

// call is Call with the System the command reads (its Via: the front end).
func call(ctx context.Context, sys System, dir string, args []string) (out json.RawMessage, errObj *ErrorObject) {
	full := make([]string, 0, len(args)+3)
	full = append(full, "--json")
	if dir != "" {
		full = append(full, "-C", dir)
	}
	full = append(full, args...)
	var stdout, stderr bytes.Buffer
	code, e := execute(ctx, nil, sys, full, strings.NewReader(""), &stdout, &stderr)
	if b := bytes.TrimSpace(stdout.Bytes()); len(b) > 0 && json.Valid(b) {
		out = json.RawMessage(b)
	}
	if code == ExitOK {
		return out, nil
	}
	if e == nil { // kong's own exits (help, version) name no error
		e = errorObject(errorString(strings.TrimSpace(stderr.String())), code, "failure")
	}
	raw, _ := json.Marshal(e)
	obj := &ErrorObject{Code: code, Raw: raw}
	obj.Kind, _ = e["kind"].(string)
	obj.Message, _ = e["message"].(string)
	obj.Hint, _ = e["hint"].(string)
	return out, obj
}

type errorString string

func (s errorString) Error() string { return string(s) }
