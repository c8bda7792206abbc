package archtest

import (
	"go/ast"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// flagSpelling is a command-line flag as text: --ttl, --verify-timeout.
var flagSpelling = regexp.MustCompile(`(^|[^\w-])--[a-z]`)

// flagsAllowed are the string literals, per file, that still name a flag below the
// front ends: command lines in hints and next actions (`git atlas land R --onto B`),
// the event catalogue's commands, git's own flags. Each front end should render them
// from the operation and its fields (issue 33); the list only shrinks.
var flagsAllowed = map[string]int{
	"ledger/events.go":   4, // the catalogue's commands: "union --verify"
	"gitstate/remote.go": 3, // the global --remote
	"gitstate/store.go":  2, // `git atlas list --all`, `git atlas finish R --status ...`
	"ledger/verdict.go":  1, // `git atlas start --criterion TEXT`
	"ops/jobs.go":        2, // `git atlas start --graph`, `git atlas finish R --status ...`
	"ops/land.go":        7, // land's commands, its merge commit's message, git's --ff-only
	"ops/person.go":      3, // the person's steps, named by their flags
	"ops/recovery.go":    1, // `git atlas finish R --status ...`
	"ops/runs.go":        4, // heartbeat's and undo's commands, finish's, "finish --force"
	"ops/stage_scope.go": 1, // `git atlas transition ... --allow-outside-scope`
	"ops/trust.go":       3, // `git atlas trust --list R`
	"ops/worktrees.go":   2, // `start --setup`, `start --verify`
}

// TestNoFlagsBelowFrontEnds: the operations and the ledger speak of a request's fields
// ({ttl} in a fault.Named message, spelled by each front end: --ttl on the command
// line, ttl over MCP), never of a flag (docs/contract.md §4.6). A string literal in ops
// or the ledger (gitstate, ledger) that spells a flag fails, but those flagsAllowed still counts.
func TestNoFlagsBelowFrontEnds(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	got := map[string]int{}
	for _, dir := range []string{"ops", "gitstate", "ledger"} {
		p := pkgs[module+"/"+dir]
		for name, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && flagSpelling.MatchString(s) {
					got[dir+"/"+name]++
				}
				return true
			})
		}
	}
	for _, file := range slices.Sorted(maps.Keys(got)) {
		if got[file] > flagsAllowed[file] {
			t.Errorf("%s: %d string literals spell a flag (allowed %d): name the request's field as {field} in a fault.Named error, and let each front end spell it", file, got[file], flagsAllowed[file])
		}
	}
	for _, file := range slices.Sorted(maps.Keys(flagsAllowed)) {
		if got[file] < flagsAllowed[file] {
			t.Errorf("%s: %d string literals spell a flag, fewer than the %d allowed: lower flagsAllowed", file, got[file], flagsAllowed[file])
		}
	}
}
