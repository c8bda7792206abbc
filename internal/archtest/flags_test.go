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

// TestNoFlagsBelowFrontEnds: the operations and the ledger speak of a request's fields
// ({ttl} in a fault.Named message, spelled by each front end: --ttl on the command
// line, ttl over MCP), never of a flag (docs/contract.md §4.6). A string literal in ops
// or the ledger (ledger, gitstate) or resume that spells a flag fails: a hint or next action names the operation and
// its fields (fault.Step), and each front end renders it. git's own flags, passed to
// git processes, live in internal/git.
func TestNoFlagsBelowFrontEnds(t *testing.T) {
	t.Parallel()
	pkgs := loadModule(t)
	got := map[string]int{}
	for _, dir := range []string{"ops", "gitstate", "ledger", "resume"} {
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
		t.Errorf("%s: %d string literals spell a flag: name the request's field as {field} in a fault.Named error, a step as a fault.Step, and let each front end spell them", file, got[file])
	}
}
