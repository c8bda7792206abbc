package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/agent"
	"github.com/git-atlas/git-atlas/internal/testenv"
)

// hookRun runs `git atlas agent hook AGENT` with payload on stdin, in dir.
func hookRun(t *testing.T, dir, name, payload string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	args := []string{"agent", "hook", name}
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	if code := Main(args, strings.NewReader(payload), &out, &errb); code != 0 {
		t.Fatalf("agent hook %s: exit %d (the hook must always exit 0)\n%s", name, code, errb.String())
	}
	return out.String(), errb.String()
}

// sessionStartOutput is the documented SessionStart output of Claude Code
// (code.claude.com/docs/en/hooks) and Codex (openai/codex
// codex-rs/hooks/schema/generated/session-start.command.output.schema.json:
// additionalProperties false at both levels; hookEventName the constant
// "SessionStart").
func parseSessionStart(t *testing.T, out string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var v struct {
		HookSpecificOutput *struct {
			HookEventName     string  `json:"hookEventName"`
			AdditionalContext *string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output is not the SessionStart shape: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout:\n%s", out)
	}
	h := v.HookSpecificOutput
	if h == nil || h.HookEventName != "SessionStart" || h.AdditionalContext == nil {
		t.Fatalf("output lacks hookSpecificOutput.hookEventName SessionStart or additionalContext:\n%s", out)
	}
	return *h.AdditionalContext
}

// parsePostCompact is Codex's PostCompact output schema: continue, stopReason,
// suppressOutput, systemMessage and nothing else
// (codex-rs/hooks/schema/generated/post-compact.command.output.schema.json).
func parsePostCompact(t *testing.T, out string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var v struct {
		Continue       *bool   `json:"continue"`
		StopReason     *string `json:"stopReason"`
		SuppressOutput *bool   `json:"suppressOutput"`
		SystemMessage  *string `json:"systemMessage"`
	}
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output is not Codex's PostCompact shape: %v\n%s", err, out)
	}
	if v.SystemMessage == nil {
		return ""
	}
	return *v.SystemMessage
}

// The hook, fed each agent's event payloads (the fields each documents), prints that
// agent's shape carrying the brief of the session's interrupted run; garbage, no
// repository and an unknown agent give the empty valid output and exit 0.
func TestAgentHookOutput(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	// The session's run is the older one: only the session puts it first.
	atlas(t, repo, "start", "--id", "mine", "--stages", "code,test", "--session", "sess-1", "--intent", "fix login")
	atlas(t, repo, "transition", "mine", "code", "dispatched")
	atlas(t, repo, "start", "--id", "other", "--stages", "code")
	atlas(t, repo, "transition", "other", "code", "dispatched")
	outside := t.TempDir()

	enc := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	claude := func(source, cwd string) string {
		return enc(map[string]any{"session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "hook_event_name": "SessionStart", "source": source, "model": "claude-opus"})
	}
	codex := func(source, cwd string) string {
		return enc(map[string]any{"session_id": "sess-1", "transcript_path": nil, "cwd": cwd, "hook_event_name": "SessionStart", "model": "gpt-5", "permission_mode": "default", "source": source})
	}
	codexCompact := enc(map[string]any{"session_id": "sess-1", "transcript_path": nil, "cwd": repo, "hook_event_name": "PostCompact", "model": "gpt-5", "trigger": "auto", "turn_id": "t1"})
	kimi := func(event, cwd string) string {
		return enc(map[string]any{"hook_event_name": event, "session_id": "sess-1", "cwd": cwd, "session_dir": "/tmp/s"})
	}
	// The session's own run comes first, and the session id is handed back.
	wantBrief := func(t *testing.T, ctx string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(ctx), "\n")
		if len(lines) < 2 || !strings.Contains(lines[0], "run mine [fix login] was interrupted at stage code") || !strings.Contains(ctx, "run other") ||
			!strings.Contains(ctx, "--session sess-1") {
			t.Fatalf("context lacks the session's run first:\n%s", ctx)
		}
	}
	for _, source := range []string{"startup", "resume", "clear", "compact"} {
		out, _ := hookRun(t, outside, "claude", claude(source, repo)) // -C elsewhere: the event's cwd decides
		wantBrief(t, parseSessionStart(t, out))
	}
	for _, source := range []string{"startup", "resume", "clear"} {
		out, _ := hookRun(t, outside, "codex", codex(source, repo))
		wantBrief(t, parseSessionStart(t, out))
	}
	out, _ := hookRun(t, outside, "codex", codexCompact)
	wantBrief(t, parsePostCompact(t, out))
	for _, event := range []string{"SessionStart", "PostCompact"} {
		out, _ := hookRun(t, outside, "kimi", kimi(event, repo))
		wantBrief(t, out) // Kimi Code: plain text
	}
	// No cwd in the event: the working directory (-C) is the repository.
	out, _ = hookRun(t, repo, "claude", `{"session_id": "sess-1", "source": "startup", "hook_event_name": "SessionStart"}`)
	wantBrief(t, parseSessionStart(t, out))

	// Nothing to say: empty valid output, exit 0, one line on stderr when something was wrong.
	for _, c := range []struct{ payload, why string }{
		{"not json at all", "not a JSON event"},
		{`["an", "array"]`, "not a JSON event"},
		{"", "not a JSON event"},
		{claude("startup", outside), "not in a git repository"},
		{claude("startup", filepath.Join(outside, "missing")), "not in a git repository"},
	} {
		out, errs := hookRun(t, repo, "claude", c.payload)
		if ctx := parseSessionStart(t, out); ctx != "" {
			t.Errorf("%q: context %q, want empty", c.payload, ctx)
		}
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.why) {
			t.Errorf("%q: stderr %q, want one line saying %q", c.payload, errs, c.why)
		}
		out, _ = hookRun(t, repo, "codex", c.payload)
		if ctx := parseSessionStart(t, out); ctx != "" {
			t.Errorf("codex %q: context %q", c.payload, ctx)
		}
		if out, _ := hookRun(t, repo, "kimi", c.payload); out != "" {
			t.Errorf("kimi %q: output %q, want none", c.payload, out)
		}
	}
	out, errs := hookRun(t, repo, "codex", `{"hook_event_name": "PostCompact", "cwd": "`+outside+`"}`)
	if parsePostCompact(t, out) != "" || errs == "" {
		t.Errorf("codex PostCompact outside a repository: %q %q", out, errs)
	}
	if out, errs := hookRun(t, repo, "someday", claude("startup", repo)); out != "" || !strings.Contains(errs, "unknown agent") {
		t.Errorf("unknown agent: %q %q", out, errs)
	}

	// A corrupt run (its ref names a blob) hides nothing and fails nothing.
	blob := testenv.Git(t, repo, "", "hash-object", "-w", "--stdin")
	testenv.Git(t, repo, "", "update-ref", "refs/atlas/runs/corrupt", blob)
	out, _ = hookRun(t, outside, "claude", claude("startup", repo))
	wantBrief(t, parseSessionStart(t, out))
	out, _ = hookRun(t, outside, "kimi", kimi("SessionStart", repo))
	wantBrief(t, out)

	// A run the session does not own, and nothing else: no session line pointing at it,
	// and a finished ledger gives an empty context.
	atlas(t, repo, "finish", "mine", "--status", "failed")
	atlas(t, repo, "finish", "other", "--status", "failed")
	out, _ = hookRun(t, outside, "claude", claude("compact", repo))
	if ctx := parseSessionStart(t, out); ctx != "" {
		t.Errorf("nothing interrupted, context %q", ctx)
	}
}

// --scope project writes under the working tree's root (from a subdirectory too),
// and uninstall gives every file back byte for byte.
func TestAgentInstallProjectScope(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	sub := filepath.Join(repo, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(repo, ".claude", "settings.json")
	_ = os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := "{\n  \"permissions\": {\"allow\": [\"Bash(make:*)\"]}\n}\n"
	_ = os.WriteFile(settings, []byte(orig), 0o644)
	agentsMD := filepath.Join(repo, "AGENTS.md")
	_ = os.WriteFile(agentsMD, []byte("# Rules\n"), 0o644)

	for _, name := range agent.Agents {
		atlas(t, sub, "agent", "install", name)
	}
	for _, p := range []string{".claude/skills/git-atlas/SKILL.md", ".codex/hooks.json", ".kimi-code/AGENTS.md"} {
		if _, err := os.Stat(filepath.Join(repo, p)); err != nil {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	var st struct {
		Agents []agent.Status `json:"agents"`
	}
	if err := json.Unmarshal([]byte(atlas(t, sub, "agent", "status", "--scope", "project", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Agents) != 3 {
		t.Fatalf("status: %+v", st)
	}
	for _, s := range st.Agents {
		if !s.Installed {
			t.Errorf("%s not installed: %+v", s.Agent, s)
		}
	}
	if notes := strings.Join(st.Agents[1].Notes, "\n"); !strings.Contains(notes, "not trusted") {
		t.Errorf("codex status does not say the project is untrusted: %q", notes)
	}
	for _, name := range agent.Agents {
		atlas(t, sub, "agent", "uninstall", name)
	}
	if data, _ := os.ReadFile(settings); string(data) != orig {
		t.Errorf("settings.json not restored:\n%s", data)
	}
	if data, _ := os.ReadFile(agentsMD); string(data) != "# Rules\n" {
		t.Errorf("AGENTS.md not restored:\n%s", data)
	}
	for _, p := range []string{".claude/skills", ".codex", ".kimi-code"} {
		if _, err := os.Stat(filepath.Join(repo, p)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	out, err := testenv.GitErr(repo, "", "status", "--porcelain", "--untracked-files=all")
	if err != nil || len(out) != 0 && !regexp.MustCompile(`^(\?\? (\.claude/settings\.json|AGENTS\.md)\n)+$`).MatchString(out) {
		t.Errorf("working tree after uninstall: %v\n%s", err, out)
	}
}

// Every command in the protocol's examples works against this git-atlas: each fenced
// `sh` block runs, line by line, in a fresh repository.
func TestProtocolExamplesRun(t *testing.T) {
	t.Parallel()
	blocks := 0
	sc := bufio.NewScanner(strings.NewReader(agent.Protocol))
	var lines []string
	in := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "```sh":
			in, lines = true, nil
		case l == "```" && in:
			in = false
			blocks++
			runExample(t, lines)
		case in && strings.HasPrefix(l, "git atlas "):
			lines = append(lines, l)
		case in && !strings.HasPrefix(l, "#"):
			t.Fatalf("example line is neither a git atlas command nor a comment: %q", l)
		}
	}
	if blocks != 2 {
		t.Fatalf("the protocol has %d examples, want a single run's and a graph run's", blocks)
	}
}

func runExample(t *testing.T, lines []string) {
	t.Helper()
	repo := newRepo(t)
	lease := "" // "$LEASE" in an example: the lease the last claim printed
	for _, l := range lines {
		args, err := shellWords(strings.ReplaceAll(strings.TrimPrefix(l, "git atlas "), "$LEASE", lease))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		var out, errb bytes.Buffer
		if code := Main(append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d\n%s", l, code, errb.String())
		}
		if len(args) > 1 && args[0] == "job" && args[1] == "claim" {
			var g struct {
				Lease string `json:"lease"`
			}
			if err := json.Unmarshal(out.Bytes(), &g); err != nil || g.Lease == "" {
				t.Fatalf("%s: no lease in its output (%v):\n%s", l, err, out.String())
			}
			lease = g.Lease
		}
	}
	if len(lines) == 0 {
		t.Fatal("an example with no commands")
	}
	var out bytes.Buffer
	id := strings.Fields(lines[0])[4] // git atlas start --id ID
	if Main([]string{"-C", repo, "show", id, "--json"}, strings.NewReader(""), &out, &out) != 0 || !strings.Contains(out.String(), `"status": "completed"`) {
		t.Fatalf("run %s did not end completed:\n%s", id, out.String())
	}
}

// shellWords splits a command line the way sh does for the quoting the examples use:
// single and double quotes, no expansions.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	have := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ':
			if have {
				words, have = append(words, cur.String()), false
				cur.Reset()
			}
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, os.ErrInvalid
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			have = true
		case '$', '`', '\\':
			return nil, os.ErrInvalid // an expansion the test would not reproduce
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words, nil
}

// Run by hand on a terminal, the hook does not wait for an event that never comes.
func TestAgentHookOnATerminal(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	out, stderr, code := onTerminal(t, repo, nil, "agent", "hook", "claude")
	if code != 0 || parseSessionStart(t, out) != "" || !strings.Contains(stderr, "reads the agent's event on stdin") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
