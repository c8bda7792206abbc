package agent

import (
	"encoding/json"
	"strings"
)

// Event is what an agent sends its hook on stdin: the fields git-atlas reads, common
// to Claude Code, Codex and Kimi Code (session_id, cwd, hook_event_name; source for
// SessionStart: startup, resume, clear or compact).
type Event struct {
	SessionID     string `json:"session_id"`
	Source        string `json:"source"`
	Cwd           string `json:"cwd"`
	HookEventName string `json:"hook_event_name"`
}

// ParseEvent reads a hook event. Anything that is not a JSON object is an error; a
// field of an unexpected type is ignored.
func ParseEvent(data []byte) (Event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		if err == nil {
			err = &SyntaxError{Line: 1, Msg: "not a JSON object"}
		}
		return Event{}, err
	}
	var ev Event
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(raw[k], &s)
		return s
	}
	ev.SessionID, ev.Source, ev.Cwd, ev.HookEventName = str("session_id"), str("source"), str("cwd"), str("hook_event_name")
	return ev, nil
}

// HookOutput is what the hook prints for agent after event, carrying context (the
// `resume --brief` lines; "" when there is nothing):
//   - Claude Code and Codex, SessionStart: {"hookSpecificOutput": {"hookEventName":
//     "SessionStart", "additionalContext": …}}, the context always present (Codex
//     validates the shape strictly; an empty string is valid, a bare
//     {"continue": true} is not);
//   - Codex, PostCompact: its output schema has no additional context, only a
//     systemMessage shown to the user (openai/codex
//     codex-rs/hooks/schema/generated/post-compact.command.output.schema.json):
//     {"systemMessage": …}, or {} when there is nothing;
//   - Kimi Code: plain text; its observe-only events take stdout as is (added to the
//     context where the CLI does so for SessionStart).
func HookOutput(agent string, ev Event, context string) []byte {
	context = strings.TrimRight(context, "\n")
	switch agent {
	case "kimi":
		if context == "" {
			return nil
		}
		return []byte(context + "\n")
	case "codex":
		if ev.HookEventName == "PostCompact" {
			if context == "" {
				return []byte("{}\n")
			}
			return marshal(map[string]string{"systemMessage": context})
		}
	}
	return marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": "SessionStart", "additionalContext": context}})
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}
