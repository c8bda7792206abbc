package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hook payload is hostile: only a file-writing tool with a string path (absolute,
// or relative to an absolute cwd) and a session is judged; anything else is left
// alone, and input that is not a JSON object is an error.
func TestParseToolCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		ok   bool
		path string
	}{
		{`{"session_id":"s","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/r/a.go"}}`, true, "/r/a.go"},
		{`{"session_id":"s","cwd":"/r","tool_name":"Write","tool_input":{"file_path":"sub/../b.go"}}`, true, "/r/b.go"},
		{`{"session_id":"s","cwd":"/r","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/r/n.ipynb"}}`, true, "/r/n.ipynb"},
		{`{"session_id":"s","cwd":"/r","tool_name":"NotebookEdit","tool_input":{"file_path":"/r/n.ipynb"}}`, false, ""},
		{`{"session_id":"s","cwd":"rel","tool_name":"Edit","tool_input":{"file_path":"a.go"}}`, false, ""},
		{`{"session_id":"s","cwd":"/r","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`, false, ""},
		{`{"session_id":"s","cwd":"/r","tool_name":"Edit","tool_input":{"file_path":["/r/a"]}}`, false, ""},
		{`{"session_id":"s","cwd":"/r","tool_name":"Edit","tool_input":{"file_path":"/r/a\u0000b"}}`, false, ""},
		{`{"cwd":"/r","tool_name":"Edit","tool_input":{"file_path":"/r/a"}}`, false, ""},
		{`{"session_id":"s","cwd":"/r","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/r/a"}}`, false, ""},
		{`{"session_id":"s","tool_name":"Edit","tool_input":"x"}`, false, ""},
	} {
		call, ok, err := ParseToolCall([]byte(tc.in))
		if ok != tc.ok || (ok && call.Path != filepath.FromSlash(tc.path)) {
			t.Errorf("%s: %+v %v %v, want ok %v path %s", tc.in, call, ok, err, tc.ok, tc.path)
		}
	}
	for _, bad := range []string{"", "[]", "Edit", `{"tool_name":`} {
		if _, _, err := ParseToolCall([]byte(bad)); err == nil && bad != "[]" {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The guard and the session-start hook share .claude/settings.json: installed
// together into a file that is not there they make one created file, and uninstall
// removes it.
func TestGuardSharesTheSettingsFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	changes, err := InstallGuard("claude", ScopeProject, root)
	if err != nil {
		t.Fatal(err)
	}
	settings := 0
	for _, c := range changes {
		if strings.HasSuffix(c.Path, filepath.Join(".claude", "settings.json")) {
			settings++
			if c.Action != "create" || !strings.Contains(string(c.New), HookCommand("claude")) || !strings.Contains(string(c.New), GuardCommand("claude")) {
				t.Fatalf("settings change: %s\n%s", c.Action, c.New)
			}
		}
	}
	if settings != 1 {
		t.Fatalf("%d changes of settings.json, want one: %+v", settings, changes)
	}
	if err := Apply(changes); err != nil {
		t.Fatal(err)
	}
	changes, err = Uninstall("claude", ScopeProject, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(changes); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude")); !os.IsNotExist(err) {
		t.Fatalf(".claude left after uninstall: %v", err)
	}
}
