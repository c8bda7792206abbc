package mcpserver

import (
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestToolCall: a step reaches an MCP client as the tool it calls and that tool's
// arguments, never a flag: the operation's words joined by _, a switch with a tool of
// its own as that tool, a placeholder in angle brackets, a switch given false left out.
func TestToolCall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		step fault.Step
		want string
	}{
		{fault.Do("list", "all", true), `list {"all":true}`},
		{fault.Do("job done", "run", "g", "job", "j1", "lease", "l", "status", "ok"), `job_done {"run":"g","job":"j1","lease":"l","status":"ok"}`},
		{fault.Do("resume", "run", "r1", "plan", true), `resume_plan {"run":"r1"}`},
		{fault.Do("finish", "run", "r1", "status", fault.Placeholder("completed|failed"), "force", false), `finish {"run":"r1","status":"<completed|failed>"}`},
		{fault.Do("undo", "run", "r<1>", "to", 3, "holder", fault.Placeholder("<holder>")), `undo {"run":"r<1>","to":3,"holder":"<holder>"}`},
	} {
		if got := toolCall(c.step); got != c.want {
			t.Errorf("%v: %s, want %s", c.step, got, c.want)
		}
	}
}
