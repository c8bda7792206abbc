package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/agent"
	"github.com/git-atlas/git-atlas/internal/testenv"
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
	wt := claudeDrivesRun(t, repo, sess)

	why := guardDenied(t, claudePreToolUse(sess, repo, "Edit", map[string]any{"file_path": filepath.Join(repo, "README"), "old_string": "a", "new_string": "b"}))
	if !strings.Contains(why, "run fix") || !strings.Contains(why, filepath.Join(wt, "README")) {
		t.Fatalf("reason %q does not name the run and the file in its worktree %s", why, wt)
	}
	guardDenied(t, claudePreToolUse(sess, repo, "Write", map[string]any{"file_path": filepath.Join(repo, "new", "dir", "x.go"), "content": "package x\n"}))
	guardDenied(t, claudePreToolUse(sess, repo, "NotebookEdit", map[string]any{"notebook_path": "nb.ipynb", "new_source": "1"}))
	guardDenied(t, claudePreToolUse(sess, repo, "MultiEdit", map[string]any{"file_path": "../" + filepath.Base(repo) + "/README", "edits": []any{}}))

	for name, payload := range map[string]string{
		"in the worktree":   claudePreToolUse(sess, wt, "Edit", map[string]any{"file_path": filepath.Join(wt, "README"), "old_string": "a", "new_string": "b"}),
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

// claudeDrivesRun starts run fix in repo, driven by Claude Code session sess, with
// its stage code dispatched and given a worktree; it returns the worktree's path.
func claudeDrivesRun(t *testing.T, repo, sess string) string {
	t.Helper()
	atlas(t, repo, "start", "--id", "fix", "--stages", "code,test", "--holder", "claude", "--session", sess)
	atlas(t, repo, "transition", "fix", "code", "dispatched", "--holder", "claude", "--agent", "claude", "--thread-id", sess)
	var wt struct{ Path string }
	if err := json.Unmarshal([]byte(atlas(t, repo, "worktree", "add", "fix", "code", "--holder", "claude", "--json")), &wt); err != nil || wt.Path == "" {
		t.Fatalf("worktree add: %v %+v", err, wt)
	}
	return wt.Path
}

// guardDenied runs Claude Code's guard on payload, checks that it prints exactly
// Claude Code's deny decision, and returns the reason.
func guardDenied(t *testing.T, payload string) string {
	t.Helper()
	out, errs := guardRun(t, "claude", payload)
	var got map[string]map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
		t.Fatalf("%s\noutput %q (%v), want a deny decision; stderr %s", payload, out, err, errs)
	}
	d := got["hookSpecificOutput"]
	if len(d) != 3 || d["hookEventName"] != "PreToolUse" || d["permissionDecision"] != "deny" {
		t.Fatalf("decision %v", got)
	}
	return d["permissionDecisionReason"]
}

// The guard judges a path by the repositories that hold it, not by the event's cwd:
// an agent whose shell went outside any repository, or into another one, is still
// denied a write into the checkout, into a clone nested in it, and into its git
// directory; a write into another repository, where the session drives nothing, is
// allowed from the checkout.
func TestAgentGuardJudgesThePathNotTheCwd(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	sess := "5d1e7c2a-3b4f-4a6e-8c9d-0e1f2a3b4c5d"
	wt := claudeDrivesRun(t, repo, sess)
	other := newRepo(t)
	nested := filepath.Join(repo, "vendor", "lib")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, nested, "", "init", "-q")
	write := func(cwd, path string) string {
		return claudePreToolUse(sess, cwd, "Write", map[string]any{"file_path": path, "content": "x\n"})
	}
	for _, cwd := range []string{t.TempDir(), other, wt} {
		for _, path := range []string{filepath.Join(repo, "a.txt"), filepath.Join(nested, "new", "b.txt"), filepath.Join(repo, ".git", "hooks", "pre-commit")} {
			if why := guardDenied(t, write(cwd, path)); !strings.Contains(why, "run fix") {
				t.Errorf("cwd %s, %s: reason %q does not name the run", cwd, path, why)
			}
		}
	}
	for name, payload := range map[string]string{
		"another repository, from the checkout": write(repo, filepath.Join(other, "a.txt")),
		"the worktree, from elsewhere":          write(t.TempDir(), filepath.Join(wt, "a.txt")),
	} {
		if out, errs := guardRun(t, "claude", payload); out != "" {
			t.Errorf("%s: output %q, want none; stderr %s", name, out, errs)
		}
	}
}

// A symbolic link in the worktree that leads into the checkout is written through:
// the guard judges where it leads, a dangling link (whose target a write creates)
// and a chain of them included, while a dangling link that stays in the worktree is
// allowed.
func TestAgentGuardFollowsDanglingLinks(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	sess := "9a8b7c6d-5e4f-4321-8765-43210fedcba9"
	wt := claudeDrivesRun(t, repo, sess)
	link := func(name, target string) string { return testenv.Symlink(t, wt, name, target) }
	up, err := filepath.Rel(wt, filepath.Join(repo, "newfile.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dangle := link("dangle", up)
	chain := link("chain", "dangle")
	absolute := link("absolute", filepath.Join(repo, "new", "dir", "x.go"))
	inside := link("inside", "later.txt")
	write := func(path string) string {
		return claudePreToolUse(sess, wt, "Write", map[string]any{"file_path": path, "content": "x\n"})
	}
	real, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dangle, chain, absolute} {
		if why := guardDenied(t, write(p)); !strings.Contains(why, "a link to "+real) {
			t.Errorf("%s: reason %q does not say where the link leads", p, why)
		}
	}
	if out, errs := guardRun(t, "claude", write(inside)); out != "" {
		t.Errorf("a dangling link inside the worktree: output %q, want none; stderr %s", out, errs)
	}
	if _, err := os.Lstat(filepath.Join(repo, "newfile.txt")); !os.IsNotExist(err) {
		t.Fatalf("the guard created the link's target: %v", err)
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
