package ledger

import "slices"

import "github.com/git-atlas/git-atlas/internal/fault"

// AgentNames are the agents an attempt or a job may name (--agent): the ones whose
// own command to continue a conversation git-atlas composes (docs/contract.md §15).
var AgentNames = []string{"claude", "codex", "kimi"}

// ValidAgent checks an agent name: one of AgentNames.
func ValidAgent(name string) error {
	if slices.Contains(AgentNames, name) {
		return nil
	}
	return fault.Usage("invalid agent %q: use claude, codex or kimi", name)
}

// ValidThreadID checks an agent's own session or thread id (--thread-id): a plain
// token of 1-128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit. It goes
// into a command git-atlas prints for an agent to run, so nothing else may pass.
func ValidThreadID(id string) error {
	ok := len(id) > 0 && len(id) <= 128 && isNameByte(id[0]) && id[0] != '.' && id[0] != '_' && id[0] != '-'
	for i := 0; ok && i < len(id); i++ {
		ok = isNameByte(id[i]) || id[i] == ':'
	}
	if !ok {
		return fault.Usage("invalid thread id %q: use 1-128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit", clip(id))
	}
	return nil
}
