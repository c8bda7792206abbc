package resume

import (
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ledger"
)

// AgentContinue is agent's own command to continue its conversation thread, run
// from dir (the worktree the attempt works in; "" runs it where the asker is), every
// argument quoted for sh (docs/contract.md §15); "" when git-atlas knows no such
// command for the agent, or a value is not one a write accepts. The commands follow:
//   - Claude Code: `claude --resume <session-id>`, from the directory the session
//     worked in, since sessions are kept per project directory
//     (code.claude.com/docs/en/cli-reference);
//   - Codex: `codex resume <SESSION_ID>` (developers.openai.com/codex/cli/reference).
//
// Kimi Code documents no command that continues a session by its id, so it gets none.
func AgentContinue(agent, thread, dir string) string {
	if ledger.ValidAgent(agent) != nil || ledger.ValidThreadID(thread) != nil {
		return ""
	}
	var cmd string
	switch agent {
	case "claude":
		cmd = text.Command("claude", "--resume", thread)
	case "codex":
		cmd = text.Command("codex", "resume", thread)
	default:
		return ""
	}
	if dir == "" {
		return cmd
	}
	return text.Command("cd", dir) + " && " + cmd
}
