package worktrees

import (
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// flagLike and fieldLike spell a request's field as the command line and MCP do
// (--allow-outside-scope, allow_outside_scope), a step as its operation and fields.
var (
	flagLike  = fault.Spelling{Field: func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }, Step: func(s fault.Step) string { return "CLI(" + s.String() + ")" }}
	fieldLike = fault.Spelling{Field: func(f string) string { return f }, Step: func(s fault.Step) string { return "MCP(" + s.String() + ")" }}
)

// TestErrorsNameFieldsNotFlags: the worktree checks' errors and hints name request
// fields and steps, which each front end spells (docs/contract.md §4.6).
func TestErrorsNameFieldsNotFlags(t *testing.T) {
	t.Parallel()
	single := &ledger.Run{Header: ledger.Header{RunID: "r1", Kind: ledger.KindSingle}}
	graph := &ledger.Run{Header: ledger.Header{RunID: "g", Kind: ledger.KindGraph}}
	graph.State.Jobs = []ledger.Job{{ID: "j1", State: ledger.JobRunning}}
	for _, c := range []struct {
		err                  error
		cliMsg, mcpMsg, hint string
	}{
		{checkAllowed(single, []string{"j1"}), "--allow-outside-scope names jobs: run r1 is not a graph run", "allow_outside_scope names jobs: run r1 is not a graph run", ""},
		{checkAllowed(graph, []string{"j2"}), `run g has no job "j2" (--allow-outside-scope)`, `run g has no job "j2" (allow_outside_scope)`, ""},
		{fence(single, "a", AddOptions{Lease: "l"}), "node a of run r1 is not a job of a graph run: --lease applies to jobs", "node a of run r1 is not a job of a graph run: lease applies to jobs", ""},
		{fence(graph, "j1", AddOptions{}), "", "", "pass the token `%s` printed: `%s`|job claim()|worktree add(run=g, node=j1, lease=TOKEN)"},
	} {
		if c.err == nil {
			t.Fatalf("no error, want %q", c.cliMsg)
		}
		cliMsg, cliHint := fault.SpelledBy(c.err, flagLike)
		mcpMsg, mcpHint := fault.SpelledBy(c.err, fieldLike)
		if c.cliMsg != "" && (cliMsg != c.cliMsg || mcpMsg != c.mcpMsg) {
			t.Errorf("command line %q, MCP %q; want %q, %q", cliMsg, mcpMsg, c.cliMsg, c.mcpMsg)
		}
		if c.hint != "" {
			parts := strings.Split(c.hint, "|")
			wantCLI := strings.Replace(strings.Replace(parts[0], "%s", "CLI("+parts[1]+")", 1), "%s", "CLI("+parts[2]+")", 1)
			wantMCP := strings.Replace(strings.Replace(parts[0], "%s", "MCP("+parts[1]+")", 1), "%s", "MCP("+parts[2]+")", 1)
			if cliHint != wantCLI || mcpHint != wantMCP {
				t.Errorf("hints %q, %q; want %q, %q", cliHint, mcpHint, wantCLI, wantMCP)
			}
		}
	}
}
