package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/agent"
)

// guardRun runs `git atlas agent guard AGENT` with payload on stdin (no -C: the
// guard finds the repository from the event), and checks it exits 0.
func guardRun(t *testing.T, name, payload string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main([]string{"agent", "guard", name}, strings.NewReader(payload), &out, &errb); code != 0 {
		t.Fatalf("agent guard %s: exit %d (the guard must always exit 0)\n%s", name, code, errb.String())
	}
	return out.String(), errb.String()
}

// claudePreToolUse is a PreToolUse event as Claude Code sends it
// (code.claude.com/docs/en/hooks, "PreToolUse input"): the common fields, then the
// tool's name and input.
func claudePreToolUse(session, cwd, tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/home/u/.claude/projects/x/" + session + ".jsonl",
		"cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01ABC",
	})
	return string(b)
}

// The guard, through a real Claude Code PreToolUse payload: while the session drives
// a run whose stage has a worktree, an Edit, Write or NotebookEdit in the main
// checkout is denied with Claude Code's decision (exactly its documented keys),
// naming the worktree; the same edit in the worktree, another tool, another session,
// input that is not JSON, and a directory outside any repository get no output.
func TestAgentGuardClaudePayload(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	sess := "0f9c2a1e-5b7d-4e3a-9c1f-2b8d7e6a5c4b"
	atlas(t, repo, "start", "--id", "fix", "--stages", "code,test", "--holder", "claude", "--session", sess)
	atlas(t, repo, "transition", "fix", "code", "dispatched", "--holder", "claude", "--agent", "claude", "--thread-id", sess)
	var wt struct{ Path string }
	if err := json.Unmarshal([]byte(atlas(t, repo, "worktree", "add", "fix", "code", "--holder", "claude", "--json")), &wt); err != nil || wt.Path == "" {
		t.Fatalf("worktree add: %v %+v", err, wt)
	}

	denied := func(payload string) string {
		t.Helper()
		out, errs := guardRun(t, "claude", payload)
		var got map[string]map[string]string
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
			t.Fatalf("output %q (%v), want a deny decision; stderr %s", out, err, errs)
		}
		d := got["hookSpecificOutput"]
		if len(d) != 3 || d["hookEventName"] != "PreToolUse" || d["permissionDecision"] != "deny" {
			t.Fatalf("decision %v", got)
		}
		return d["permissionDecisionReason"]
	}
	why := denied(claudePreToolUse(sess, repo, "Edit", map[string]any{"file_path": filepath.Join(repo, "README"), "old_string": "a", "new_string": "b"}))
	if !strings.Contains(why, "run fix") || !strings.Contains(why, filepath.Join(wt.Path, "README")) {
		t.Fatalf("reason %q does not name the run and the file in its worktree %s", why, wt.Path)
	}
	denied(claudePreToolUse(sess, repo, "Write", map[string]any{"file_path": filepath.Join(repo, "new", "dir", "x.go"), "content": "package x\n"}))
	denied(claudePreToolUse(sess, repo, "NotebookEdit", map[string]any{"notebook_path": "nb.ipynb", "new_source": "1"}))
	denied(claudePreToolUse(sess, repo, "MultiEdit", map[string]any{"file_path": "../" + filepath.Base(repo) + "/README", "edits": []any{}}))

	for name, payload := range map[string]string{
		"in the worktree":   claudePreToolUse(sess, wt.Path, "Edit", map[string]any{"file_path": filepath.Join(wt.Path, "README"), "old_string": "a", "new_string": "b"}),
		"a shell command":   claudePreToolUse(sess, repo, "Bash", map[string]any{"command": "echo x > README"}),
		"another session":   claudePreToolUse("another", repo, "Edit", map[string]any{"file_path": filepath.Join(repo, "README")}),
		"a path of no type": claudePreToolUse(sess, repo, "Edit", map[string]any{"file_path": 42}),
		"not JSON":          "Edit README",
		"outside":           claudePreToolUse(sess, t.TempDir(), "Write", map[string]any{"file_path": filepath.Join(t.TempDir(), "x")}),
	} {
		if out, _ := guardRun(t, "claude", payload); out != "" {
			t.Errorf("%s: output %q, want none", name, out)
		}
	}
}

// install --guard adds the PreToolUse hook beside the session-start hook, once
// (idempotent); status reports it; uninstall takes both out, leaving the file as it
// was. Codex and Kimi Code are refused (exit 2), saying why, and nothing is written.
func TestAgentInstallGuard(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.json")
	_ = os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := "{\n  \"permissions\": {\"allow\": [\"Bash(make:*)\"]}\n}\n"
	_ = os.WriteFile(settings, []byte(orig), 0o644)

	atlas(t, repo, "agent", "install", "claude", "--guard")
	first, _ := os.ReadFile(settings)
	var got struct {
		Permissions json.RawMessage
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(first, &got); err != nil {
		t.Fatal(err)
	}
	pre := got.Hooks["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "Edit|Write|MultiEdit|NotebookEdit" || len(pre[0].Hooks) != 1 || pre[0].Hooks[0].Command != "git atlas agent guard claude" ||
		len(got.Hooks["SessionStart"]) != 1 || len(got.Permissions) == 0 {
		t.Fatalf("settings after install --guard:\n%s", first)
	}
	out := atlas(t, repo, "agent", "install", "claude", "--guard")
	if again, _ := os.ReadFile(settings); string(again) != string(first) || !strings.Contains(out, "nothing to change") {
		t.Fatalf("a second install changed the file:\n%s\n%s", again, out)
	}
	var st struct{ Agents []agent.Status }
	if err := json.Unmarshal([]byte(atlas(t, repo, "agent", "status", "claude", "--scope", "project", "--json")), &st); err != nil || len(st.Agents) != 1 || !st.Agents[0].Guard || !st.Agents[0].Installed {
		t.Fatalf("status: %v %+v", err, st)
	}
	atlas(t, repo, "agent", "uninstall", "claude")
	if data, _ := os.ReadFile(settings); string(data) != orig {
		t.Fatalf("settings.json after uninstall:\n%s", data)
	}

	var stdout, errb bytes.Buffer
	code := Main([]string{"-C", repo, "agent", "install", "kimi", "--guard"}, strings.NewReader(""), &stdout, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--guard is for claude and codex only") {
		t.Errorf("install kimi --guard: exit %d\n%s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(repo, ".kimi-code")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote .kimi-code")
	}

	atlas(t, repo, "agent", "install", "codex", "--guard")
	hooks, _ := os.ReadFile(filepath.Join(repo, ".codex", "hooks.json"))
	if err := json.Unmarshal(hooks, &got); err != nil {
		t.Fatal(err)
	}
	if pre := got.Hooks["PreToolUse"]; len(pre) != 1 || pre[0].Matcher != "^apply_patch$" || len(pre[0].Hooks) != 1 || pre[0].Hooks[0].Command != "git atlas agent guard codex" {
		t.Fatalf(".codex/hooks.json after install codex --guard:\n%s", hooks)
	}
	atlas(t, repo, "agent", "uninstall", "codex")
	if _, err := os.Stat(filepath.Join(repo, ".codex")); !os.IsNotExist(err) {
		t.Errorf(".codex left after uninstall: %v", err)
	}
}

// Codex's guard: an apply_patch whose patch touches the main checkout is denied with
// the decision Codex reads; one confined to the run's worktree gets no output.
func TestAgentGuardCodexPatch(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "fix", "--stages", "code", "--holder", "codex", "--session", "019a-th")
	atlas(t, repo, "transition", "fix", "code", "dispatched", "--holder", "codex")
	var wt struct{ Path string }
	if err := json.Unmarshal([]byte(atlas(t, repo, "worktree", "add", "fix", "code", "--holder", "codex", "--json")), &wt); err != nil {
		t.Fatal(err)
	}
	payload := func(cwd, patch string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "019a-th", "turn_id": "t-1", "cwd": cwd, "hook_event_name": "PreToolUse",
			"model": "gpt-5-codex", "permission_mode": "default", "tool_name": "apply_patch", "tool_use_id": "call-1",
			"tool_input": map[string]any{"command": patch}})
		return string(b)
	}
	patch := "*** Begin Patch\n*** Update File: README\n@@\n-a\n+b\n*** End Patch\n"
	out, _ := guardRun(t, "codex", payload(repo, patch))
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, filepath.Join(wt.Path, "README")) {
		t.Fatalf("a patch of the checkout: %q, want denied naming the worktree", out)
	}
	if out, _ := guardRun(t, "codex", payload(wt.Path, patch)); out != "" {
		t.Fatalf("a patch in the worktree: %q, want no output", out)
	}
}
