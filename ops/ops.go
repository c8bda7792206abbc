// Package ops holds one function per user operation (SPEC §4): start, transition,
// event, finish, job add/claim/renew/done, reap, worktree add/remove, union, resume
// detect/plan/apply, recover, recovery list/show/restore, audit, gc, push, pull.
//
// Each takes a typed request and returns a typed result and an error whose kind is a
// fault kind (exit codes are decided by internal/cli from it). Every front end calls
// these and nothing below them for a user operation: the command line
// (internal/cli is parse → call → print), the MCP server, import, remote coordination
// and the benchmarks. Business rules (which transitions are allowed, what a claim
// records, what a finish clears) live here or in the domain packages below, never in
// a front end.
//
// An operation never prints and never prompts: what a person must confirm is asked
// by the front end before it calls, and the request says that it was confirmed.
package ops

import (
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/progress"
)

// Ops is the operations on one repository. The zero value is not usable: make one
// with New.
type Ops struct {
	Repo  *git.Repository
	Store *gitstate.Store
	// Progress receives the progress of long operations (audit, gc, union,
	// snapshots, import); nil reports nothing.
	Progress progress.Reporter
}

// New returns the operations on repo.
func New(repo *git.Repository) *Ops {
	return &Ops{Repo: repo, Store: gitstate.New(repo)}
}
