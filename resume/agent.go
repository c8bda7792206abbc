package resume

import (
	"github.com/git-atlas/git-atlas/agent"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ledger"
)

// AgentContinue is agent's own command to continue its conversation thread, run
// from dir (the worktree the attempt works in; "" runs it where the asker is), every
// argument quoted for sh (docs/contract.md §15); "" when git-atlas knows no such
// command for the agent (agent.ContinueArgs), or a value is not one a write accepts.
func AgentContinue(name, thread, dir string) string {
	if ledger.ValidAgent(name) != nil || ledger.ValidThreadID(thread) != nil {
		return ""
	}
	args := agent.ContinueArgs(name, thread)
	if args == nil {
		return ""
	}
	cmd := text.Command(args...)
	if dir == "" {
		return cmd
	}
	return text.Command("cd", dir) + " && " + cmd
}
