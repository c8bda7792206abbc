package mcpserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// TestToolCall: a step reaches an MCP client as the tool it calls and that tool's
// arguments, never a flag: the operation's words joined by _, a switch with a tool of
// its own as that tool, a placeholder in angle brackets, a switch given false left out;
// a step its tool cannot take says so.
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
		{fault.Do("undo", "run", "r<1>", "to", 3, "holder", fault.Placeholder("<holder>")), `undo {"run":"r<1>","to":3,"holder":"<holder>"} (no MCP tool: a person runs it on the command line)`},
		{fault.Do("land", "run", "g", "onto", "main", "merge", true), `land {"run":"g","onto":"main","merge":true} (no MCP tool: a person runs it on the command line)`},
		{fault.Do("trust", "run", "r1", "list", true), `trust {"run":"r1","list":true} (no MCP tool: a person runs it on the command line)`},
		// The directory to run in is the command line's alone: no call a client could make.
		{fault.Do("recover", "dir", fault.Placeholder("<your checkout>"), "run", "r1", "stage", "a"), `recover {"dir":"<your checkout>","run":"r1","stage":"a"} (the MCP tool recover takes no dir: run it on the command line)`},
	} {
		if got := toolCall(c.step); got != c.want {
			t.Errorf("%v: %s, want %s", c.step, got, c.want)
		}
	}
}

// TestEveryNextActionIsAToolCall: every next_action a result holds, at any depth and
// in any result type (no case per tool), carries its tool and arguments; one whose
// step the server has no tool for (a person's step: land) carries neither, and its
// command says a person runs it.
func TestEveryNextActionIsAToolCall(t *testing.T) {
	t.Parallel()
	finish := ops.NextAction{Step: fault.Do("finish", "run", "r1", "status", "completed")}
	land := ops.NextAction{Step: fault.Do("land", "run", "g", "onto", "main")}
	land.Spell(mcpSpelling)
	type item struct{ Next *ops.NextAction }
	res := &struct {
		Items []item
		Plan  ops.Plan
		Land  ops.NextAction
	}{Items: []item{{Next: &finish}}, Plan: ops.Plan{NextAction: ops.NextAction{Step: fault.Do("resume", "run", "r2", "plan", true)}}, Land: land}
	withToolCalls(res)
	if finish.Tool != "finish" || !reflect.DeepEqual(finish.Arguments, map[string]any{"run": "r1", "status": "completed"}) {
		t.Errorf("a next action in a list: tool %q, arguments %v", finish.Tool, finish.Arguments)
	}
	if n := res.Plan.NextAction; n.Tool != "resume_plan" || !reflect.DeepEqual(n.Arguments, map[string]any{"run": "r2"}) {
		t.Errorf("a plan's next action: tool %q, arguments %v", n.Tool, n.Arguments)
	}
	if n := res.Land; n.Tool != "" || n.Arguments != nil || !strings.HasSuffix(n.Command, "(no MCP tool: a person runs it on the command line)") {
		t.Errorf("a person's step: tool %q, arguments %v, command %q", n.Tool, n.Arguments, n.Command)
	}
}
