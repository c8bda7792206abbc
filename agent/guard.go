package agent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// GuardCommand is what an installed guard runs.
func GuardCommand(agent string) string { return "git atlas agent guard " + agent }

// guardTimeout (seconds) bounds the guard in the agent; it takes milliseconds.
const guardTimeout = 10

// guardMatchers are the PreToolUse matchers (tool-name regular expressions) of
// each agent's file-writing tools: Claude Code's Edit, Write, MultiEdit and
// NotebookEdit (code.claude.com/docs/en/hooks); Codex's apply_patch, its one file
// edit path (developers.openai.com/codex/hooks; openai/codex#18391).
var guardMatchers = map[string]string{"claude": "Edit|Write|MultiEdit|NotebookEdit", "codex": "^apply_patch$"}

// guardEdit is the guard's hook of agent: a PreToolUse handler beside the
// session-start hook, in the same file (see GuardSupported).
func guardEdit(agent string) (edit, error) {
	if err := GuardSupported(agent); err != nil {
		return nil, err
	}
	path := ".claude/settings.json"
	if agent == "codex" {
		path = ".codex/hooks.json"
	}
	return &jsonHooks{path: path, command: GuardCommand(agent), timeout: guardTimeout, kind: "guard",
		events: []hookEvent{{name: "PreToolUse", matcher: guardMatchers[agent]}}}, nil
}

// GuardSupported says whether install --guard can give agent a guard, and why not.
//   - Claude Code: a PreToolUse hook sees Edit, Write, MultiEdit and NotebookEdit with
//     the file's path and denies one with a JSON decision (code.claude.com/docs/en/hooks).
//   - Codex: a PreToolUse hook sees apply_patch with the patch text in
//     tool_input.command, its paths relative to the session's cwd, and denies it with
//     the same JSON decision (developers.openai.com/codex/hooks).
//   - Kimi Code: its PreToolUse can block, but its documentation names neither its
//     file-writing tools nor their input fields
//     (moonshotai.github.io/kimi-code/en/customization/hooks), so there is nothing to
//     match a path on.
func GuardSupported(agent string) error {
	switch agent {
	case "claude", "codex":
		return nil
	case "kimi":
		return fault.Named(fault.ErrUsage, "{guard} is for claude and codex only: Kimi Code's hook documentation names neither its file-writing tools nor where their input holds the path, so a guard could not tell an edit of the checkout; nothing was written")
	}
	return &UsageError{Msg: fmt.Sprintf("unknown agent %q (known: %s)", agent, strings.Join(Agents, ", "))}
}

// GuardTools are Claude Code's file-writing tools the guard judges, with the input
// field holding the path (its PreToolUse input, code.claude.com/docs/en/hooks).
var GuardTools = map[string]string{"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}

// ToolCall is a PreToolUse event, validated: a file-writing tool, the session it
// comes from, and the absolute paths it writes (relative to the event's cwd when
// given relative).
type ToolCall struct {
	SessionID string
	Tool      string
	Paths     []string
	// Cwd is the session's working directory, when the event gives an absolute one.
	Cwd string
}

// maxPatchPaths bounds the paths read from one patch: a hook's input is hostile.
const maxPatchPaths = 1000

// ParseToolCall reads agent's PreToolUse event (hostile input: an agent's hook
// payload). ok is false, with no error, for a call the guard does not judge: another
// tool, or no usable path or session. Input that is not a JSON object is an error.
func ParseToolCall(agent string, data []byte) (call ToolCall, ok bool, err error) {
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
	call = ToolCall{SessionID: str(raw.SessionID), Tool: str(raw.ToolName)}
	switch {
	case agent == "claude" && GuardTools[call.Tool] != "":
		if p := str(raw.ToolInput[GuardTools[call.Tool]]); p != "" {
			call.Paths = []string{p}
		}
	case agent == "codex" && call.Tool == "apply_patch":
		call.Paths = PatchPaths(str(raw.ToolInput["command"]))
	}
	if call.SessionID == "" || len(call.Paths) == 0 {
		return ToolCall{}, false, nil
	}
	if cwd := str(raw.Cwd); filepath.IsAbs(cwd) {
		call.Cwd = filepath.Clean(cwd)
	}
	for i, p := range call.Paths {
		if !filepath.IsAbs(p) {
			if call.Cwd == "" {
				return ToolCall{}, false, nil
			}
			p = filepath.Join(call.Cwd, p)
		}
		call.Paths[i] = filepath.Clean(p)
	}
	return call, true, nil
}

// PatchPaths are the files a Codex apply_patch text adds, updates, deletes or moves
// to: the "*** Add File: ", "*** Update File: ", "*** Delete File: " and
// "*** Move to: " lines of its envelope (openai/codex codex-rs/apply-patch), at most
// maxPatchPaths of them.
func PatchPaths(patch string) []string {
	var out []string
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, mark := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, mark); ok && strings.TrimSpace(p) != "" && len(out) < maxPatchPaths {
				out = append(out, strings.TrimSpace(p))
			}
		}
	}
	return out
}

// GuardDeny is the guard's output that denies a tool call, with the reason the agent
// reads: Claude Code's PreToolUse decision, which Codex reads too {"hookSpecificOutput": {"hookEventName":
// "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": …}}, printed
// with exit 0 (code.claude.com/docs/en/hooks). Allowing is no output at all.
func GuardDeny(reason string) []byte {
	return marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
}
