package cli

import (
	"github.com/git-atlas/git-atlas/internal/fault"
)

// Exit codes (docs/contract.md §4.6). This table is the contract; exitTable gives it to the
// generated reference (docs/cli.md, the man page).
const (
	ExitOK           = 0  // success (also resume --brief/--detect with nothing to resume)
	ExitFailure      = 1  // failure not listed below
	ExitUsage        = 2  // bad flag, bad argument, invalid name (also an event type git-atlas writes itself)
	ExitConflict     = 3  // a concurrent update won, or a lease/receipt is stale
	ExitNotFound     = 4  // run, stage, job, node or snapshot not found
	ExitRefused      = 5  // refused by the state machine or a budget
	ExitVerifyFailed = 6  // verify failed
	ExitAttention    = 10 // audit found something that needs attention
	// 128 + the signal's number when SIGINT (130) or SIGTERM (143) interrupted the
	// command (the shell's convention); the JSON error kind is "interrupted".
)

// exitTable is the exit codes with their meanings, for people, in order.
func exitTable() []struct{ code, meaning string } {
	return []struct{ code, meaning string }{
		{"0", "success (also resume --brief or --detect with nothing to resume)"},
		{"1", "a failure not listed below (a remote that cannot be reached or declined a push, a full disk)"},
		{"2", "usage: a bad flag, argument or name"},
		{"3", "conflict: a concurrent update won, or a lease or token is stale"},
		{"4", "not found: a run, stage, job, node or snapshot"},
		{"5", "refused by a state machine, a budget or a safety rule"},
		{"6", "a verify failed"},
		{"10", "audit found something that needs attention"},
		{"130, 143", "interrupted by SIGINT or SIGTERM (128 + the signal's number)"},
	}
}

// exitKind maps an error to its exit code and the JSON error kind (fault.Code: the
// same for every front end).
func exitKind(err error) (int, string) { return fault.Code(err) }
