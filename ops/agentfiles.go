package ops

import (
	"errors"
	"fmt"
	"slices"

	"github.com/git-atlas/git-atlas/agent"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// The agents' configuration files (docs/contract.md §12): install, uninstall and status
// of an agent's hooks, guard, MCP registration and protocol text, and what the
// installed hook and guard read and print. None of it reads or writes the ledger: the
// files are the agent's, under the working tree (scope project) or $HOME (scope user).

// AgentChange is one file an install or uninstall writes, creates or removes.
type AgentChange = agent.Change

// AgentStatus is what is installed for one agent in one scope.
type AgentStatus = agent.Status

// AgentEvent is an agent's session-start hook event.
type AgentEvent = agent.Event

// AgentToolCall is the file edit an agent's PreToolUse event asks for.
type AgentToolCall = agent.ToolCall

// The scopes an agent's files are installed in.
const (
	AgentScopeProject = agent.ScopeProject
	AgentScopeUser    = agent.ScopeUser
)

// AgentNames are the agents git-atlas installs for.
func AgentNames() []string { return slices.Clone(agent.Agents) }

// AgentProtocol is the protocol text the installers write: how an agent drives a run.
func AgentProtocol() string { return agent.Protocol }

// AgentFilesRequest is `agent install AGENT`: the files of Agent in Scope, under Root
// (the working tree's root, or $HOME).
type AgentFilesRequest struct {
	Agent, Scope, Root string
	// Guard adds the PreToolUse guard; MCP registers the MCP server.
	Guard, MCP bool
}

// AgentInstall computes the changes that install the agent's files; nothing is
// written (AgentApply writes them). A malformed file stops all of them.
func AgentInstall(req AgentFilesRequest) ([]AgentChange, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	install := agent.Install
	if req.Guard {
		install = agent.InstallGuard
	}
	changes, err := install(req.Agent, req.Scope, req.Root)
	if err != nil {
		return nil, agentError(err)
	}
	if req.MCP {
		mcp, err := agent.InstallMCP(req.Agent, req.Scope, req.Root)
		if err != nil {
			return nil, agentError(err)
		}
		changes = append(changes, mcp...)
	}
	return changes, nil
}

// AgentUninstall computes the changes that remove exactly what install added.
func AgentUninstall(req AgentFilesRequest) ([]AgentChange, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	changes, err := agent.Uninstall(req.Agent, req.Scope, req.Root)
	if err != nil {
		return nil, agentError(err)
	}
	return changes, nil
}

// AgentApply writes the changes.
func AgentApply(name string, changes []AgentChange) error {
	if err := agent.Apply(changes); err != nil {
		return fmt.Errorf("agent %s: %w", name, err)
	}
	return nil
}

// AgentInspect says what is installed for the agent in the scope.
func AgentInspect(name, scope, root string) (AgentStatus, error) {
	st, err := agent.Inspect(name, scope, root)
	if err != nil {
		return st, agentError(err)
	}
	return st, nil
}

// CodexTrusted reports whether ~/.codex/config.toml (under home) trusts the project at
// dir.
func CodexTrusted(home, dir string) (bool, error) { return agent.CodexTrusted(home, dir) }

// ParseAgentEvent reads a session-start hook event.
func ParseAgentEvent(data []byte) (AgentEvent, error) { return agent.ParseEvent(data) }

// AgentHookOutput is the hook's output in the shape the agent reads, context its
// text ("" for the empty valid output).
func AgentHookOutput(name string, ev AgentEvent, context string) []byte {
	return agent.HookOutput(name, ev, context)
}

// AgentGuardSupported refuses an agent the guard cannot judge.
func AgentGuardSupported(name string) error { return agent.GuardSupported(name) }

// ParseAgentToolCall reads a PreToolUse event: ok is false when it is not a file
// edit the guard judges.
func ParseAgentToolCall(name string, data []byte) (call AgentToolCall, ok bool, err error) {
	return agent.ParseToolCall(name, data)
}

// AgentGuardDeny is the deny decision both agents read, reason its words.
func AgentGuardDeny(reason string) []byte { return agent.GuardDeny(reason) }

// agentError maps the agent package's errors to kinds: a malformed file is a usage
// error (exit 2) naming the file and line, a file that is not git-atlas's or that
// resolves out of the working tree is refused (exit 5).
func agentError(err error) error {
	var fe *agent.FileError
	var se *agent.SyntaxError
	var foreign *agent.ForeignError
	var ue *agent.UsageError
	switch {
	case errors.As(err, &se) && errors.As(err, &fe):
		return &fault.Error{Kind: fault.ErrUsage, Msg: "malformed configuration: " + fe.Error(), Hint: "fix the file, then run the command again; nothing was written"}
	case errors.As(err, &foreign) && errors.As(err, &fe):
		return &fault.Error{Kind: fault.ErrRefused, Msg: fe.Error(), Hint: "move the file away, then run the command again; nothing was written"}
	case errors.As(err, &ue):
		return fault.Usage("%s", ue.Msg)
	case errors.Is(err, fault.ErrRefused): // a project file that resolves out of the working tree
		return &fault.Error{Kind: fault.ErrRefused, Msg: err.Error(), Hint: "git-atlas writes the project's agent files only inside its working tree; nothing was written"}
	case errors.As(err, &fe):
		return fmt.Errorf("%s", fe.Error())
	}
	return err
}
