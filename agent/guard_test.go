package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
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
		call, ok, err := ParseToolCall("claude", []byte(tc.in))
		if ok != tc.ok || (ok && (len(call.Paths) != 1 || call.Paths[0] != filepath.FromSlash(tc.path))) {
			t.Errorf("%s: %+v %v %v, want ok %v path %s", tc.in, call, ok, err, tc.ok, tc.path)
		}
	}
	for _, bad := range []string{"", "[]", "Edit", `{"tool_name":`} {
		if _, _, err := ParseToolCall("claude", []byte(bad)); err == nil && bad != "[]" {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Codex's apply_patch: every file its patch adds, updates, deletes or moves to,
// relative to the session's cwd; Claude Code's tool names mean nothing for Codex.
func TestParseCodexPatch(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Add File: new.go\n+package x\n*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-a\n+b\n*** Delete File: /abs/c.go\r\n*** End Patch\n"
	in := `{"session_id":"019a-th","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":` + strconv.Quote(patch) + `}}`
	call, ok, err := ParseToolCall("codex", []byte(in))
	want := []string{"/r/new.go", "/r/src/a.go", "/r/src/b.go", "/abs/c.go"}
	if err != nil || !ok || strings.Join(call.Paths, ",") != strings.Join(want, ",") {
		t.Fatalf("%+v %v %v, want %v", call, ok, err, want)
	}
	if _, ok, _ := ParseToolCall("claude", []byte(in)); ok {
		t.Fatal("apply_patch judged for claude")
	}
	if _, ok, _ := ParseToolCall("codex", []byte(`{"session_id":"s","cwd":"/r","tool_name":"Edit","tool_input":{"file_path":"/r/a"}}`)); ok {
		t.Fatal("Edit judged for codex")
	}
	if got := PatchPaths(strings.Repeat("*** Add File: x\n", maxPatchPaths+5)); len(got) != maxPatchPaths {
		t.Fatalf("%d paths from a long patch", len(got))
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

// TestGuardRefusalNamesTheField: the guard's refusal of an agent names the request's
// field (docs/contract.md §4.6): --guard on the command line, guard over MCP; a usage
// error (exit 2).
func TestGuardRefusalNamesTheField(t *testing.T) {
	t.Parallel()
	err := GuardSupported("kimi")
	flag, _ := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return "--" + f }})
	field, _ := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }})
	if code, _ := fault.Code(err); code != 2 || !strings.HasPrefix(flag, "--guard is for claude and codex only: ") || !strings.HasPrefix(field, "guard is for claude and codex only: ") {
		t.Errorf("exit %d, spelled %q and %q", code, flag, field)
	}
}
