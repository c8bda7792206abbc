package agent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// GuardCommand is what an installed guard runs.
func GuardCommand(agent string) string { return "git atlas agent guard " + agent }

// guardTimeout (seconds) bounds the guard in the agent; it takes milliseconds.
const guardTimeout = 10

// guardMatcher is the PreToolUse matcher of Claude Code's file-writing tools (a
// tool-name regular expression, code.claude.com/docs/en/hooks).
const guardMatcher = "Edit|Write|MultiEdit|NotebookEdit"

// guardEdit is the guard's hook of agent: a PreToolUse handler beside the
// session-start hook, in the same file. Claude Code only: see GuardSupported.
func guardEdit(agent string) (edit, error) {
	if err := GuardSupported(agent); err != nil {
		return nil, err
	}
	return &jsonHooks{path: ".claude/settings.json", command: GuardCommand(agent), timeout: guardTimeout, kind: "guard",
		events: []hookEvent{{name: "PreToolUse", matcher: guardMatcher}}}, nil
}

// GuardSupported says whether install --guard can give agent a guard, and why not.
//   - Claude Code: a PreToolUse hook sees Edit, Write, MultiEdit and NotebookEdit with
//     the file's path and denies one with a JSON decision (code.claude.com/docs/en/hooks).
//   - Codex: its PreToolUse does see file edits, but as one apply_patch call whose
//     input is the patch text, with the paths inside it (developers.openai.com/codex/hooks);
//     git-atlas does not read patches in a hook, so it installs no guard it cannot keep.
//   - Kimi Code: its PreToolUse can block, but its documentation names neither its
//     file-writing tools nor their input fields
//     (moonshotai.github.io/kimi-code/en/customization/hooks), so there is nothing to
//     match a path on.
func GuardSupported(agent string) error {
	switch agent {
	case "claude":
		return nil
	case "codex":
		return &UsageError{Msg: "--guard is for claude only: Codex's PreToolUse hook receives a file edit as one apply_patch call whose input is the patch text, which git-atlas's guard does not read; nothing was written"}
	case "kimi":
		return &UsageError{Msg: "--guard is for claude only: Kimi Code's hook documentation names neither its file-writing tools nor where their input holds the path, so a guard could not tell an edit of the checkout; nothing was written"}
	}
	return &UsageError{Msg: fmt.Sprintf("unknown agent %q (known: %s)", agent, strings.Join(Agents, ", "))}
}

// GuardTools are the file-writing tools the guard judges, with the input field
// holding the path (Claude Code's PreToolUse input, code.claude.com/docs/en/hooks).
var GuardTools = map[string]string{"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}

// ToolCall is a PreToolUse event, validated: a file-writing tool (GuardTools), the
// session it comes from, and the absolute path it writes (relative to the event's
// cwd when given relative).
type ToolCall struct {
	SessionID string
	Tool      string
	Path      string
	// Cwd is the session's working directory, when the event gives an absolute one.
	Cwd string
}

// ParseToolCall reads a PreToolUse event (hostile input: an agent's hook payload).
// ok is false, with no error, for a call the guard does not judge: another tool,
// or no usable path or session. Input that is not a JSON object is an error.
func ParseToolCall(data []byte) (call ToolCall, ok bool, err error) {
	var raw struct {
		SessionID     json.RawMessage            `json:"session_id"`
		Cwd           json.RawMessage            `json:"cwd"`
		HookEventName json.RawMessage            `json:"hook_event_name"`
		ToolName      json.RawMessage            `json:"tool_name"`
		ToolInput     map[string]json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return ToolCall{}, false, &SyntaxError{Line: 1, Msg: "not a JSON object: " + err.Error()}
	}
	str := func(m json.RawMessage) string {
		var s string
		if json.Unmarshal(m, &s) != nil || strings.IndexByte(s, 0) >= 0 {
			return ""
		}
		return s
	}
	if ev := str(raw.HookEventName); ev != "" && ev != "PreToolUse" {
		return ToolCall{}, false, nil
	}
	field, known := GuardTools[str(raw.ToolName)]
	if !known {
		return ToolCall{}, false, nil
	}
	call = ToolCall{SessionID: str(raw.SessionID), Tool: str(raw.ToolName), Path: str(raw.ToolInput[field])}
	if call.SessionID == "" || call.Path == "" {
		return ToolCall{}, false, nil
	}
	if cwd := str(raw.Cwd); filepath.IsAbs(cwd) {
		call.Cwd = filepath.Clean(cwd)
	}
	if !filepath.IsAbs(call.Path) {
		if call.Cwd == "" {
			return ToolCall{}, false, nil
		}
		call.Path = filepath.Join(call.Cwd, call.Path)
	}
	call.Path = filepath.Clean(call.Path)
	return call, true, nil
}

// GuardDeny is the guard's output that denies a tool call, with the reason the agent
// reads: Claude Code's PreToolUse decision {"hookSpecificOutput": {"hookEventName":
// "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": …}}, printed
// with exit 0 (code.claude.com/docs/en/hooks). Allowing is no output at all.
func GuardDeny(reason string) []byte {
	return marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
}
