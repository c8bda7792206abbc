package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// roundTrip installs agent at scope into a root holding files, checks the result,
// installs again (no change), uninstalls, and checks every file is back byte for
// byte (and files install created are gone).
func roundTrip(t *testing.T, agent, scope string, files map[string]string, check func(t *testing.T, root string)) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, root)
	ch, err := Install(agent, scope, root)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	if check != nil {
		check(t, root)
	}
	st, err := Inspect(agent, scope, root)
	if err != nil || !st.Installed {
		t.Fatalf("status after install: %+v %v", st, err)
	}
	afterOnce := snapshot(t, root)
	ch, err = Install(agent, scope, root)
	if err != nil {
		t.Fatalf("second install: %v", err)
	}
	for _, c := range ch {
		if c.Action != "unchanged" {
			t.Errorf("second install changes %s: %s", c.Path, c.Action)
		}
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	if diff := compareSnapshots(afterOnce, snapshot(t, root)); diff != "" {
		t.Fatalf("second install changed files:\n%s", diff)
	}
	ch, err = Uninstall(agent, scope, root)
	if err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	if diff := compareSnapshots(before, snapshot(t, root)); diff != "" {
		t.Fatalf("uninstall did not restore the files:\n%s", diff)
	}
	st, _ = Inspect(agent, scope, root)
	for _, f := range st.Files {
		if f.State == "installed" {
			t.Errorf("after uninstall %s is still installed", f.Path)
		}
	}
}

// snapshot maps every file and directory under root to its content and mode.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if info.IsDir() {
			m[rel+"/"] = info.Mode().String()
			return nil
		}
		data, err := os.ReadFile(p)
		m[rel] = info.Mode().String() + " " + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func compareSnapshots(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "missing "+k)
		} else if w != v {
			out = append(out, "changed "+k+":\n"+v+"\n--- now ---\n"+w)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "new "+k)
		}
	}
	return strings.Join(out, "\n")
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s is not JSON after install: %v\n%s", path, err, data)
	}
	return v
}

// hasGroup reports whether hooks[event] holds a group that runs command with matcher.
func hasGroup(v map[string]any, event, matcher, command string) bool {
	hooks, _ := v["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		if m, _ := gm["matcher"].(string); m != matcher {
			continue
		}
		hs, _ := gm["hooks"].([]any)
		for _, h := range hs {
			hm, _ := h.(map[string]any)
			if hm["type"] == "command" && hm["command"] == command {
				return true
			}
		}
	}
	return false
}

func TestClaudeSettingsMerge(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"absent": "",
		"other keys, no hooks": `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "env": {"A": "1e10", "B": "\u00e9"}
}
`,
		"other events and a SessionStart group": `{
	"hooks": {
		"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}],
		"SessionStart": [
			{"matcher": "startup", "hooks": [{"type": "command", "command": "hello.sh", "timeout": 5}]}
		]
	},
	"statusLine": {"type": "command", "command": "line.sh"}
}`,
		"empty object on one line":     `{}`,
		"empty containers by a person": `{"hooks": {"SessionStart": []}}` + "\n",
		"empty hooks object":           "{\n  \"hooks\": {}\n}\n",
		"compact":                      `{"a":1,"b":[1,2,{"c":null}],"hooks":{"Stop":[]}}`,
		"crlf":                         "{\r\n  \"model\": \"opus\"\r\n}\r\n",
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			if name != "absent" {
				files[".claude/settings.json"] = content
			}
			roundTrip(t, "claude", ScopeProject, files, func(t *testing.T, root string) {
				v := readJSON(t, filepath.Join(root, ".claude/settings.json"))
				if !hasGroup(v, "SessionStart", "startup|resume|clear|compact", "git atlas agent hook claude") {
					t.Errorf("no SessionStart group: %v", v)
				}
				if content != "" {
					var orig map[string]any
					_ = json.Unmarshal([]byte(content), &orig)
					for k := range orig {
						if _, ok := v[k]; !ok {
							t.Errorf("key %s lost", k)
						}
					}
				}
				if strings.Contains(content, "\r\n") {
					data, _ := os.ReadFile(filepath.Join(root, ".claude/settings.json"))
					if strings.Count(string(data), "\n") != strings.Count(string(data), "\r\n") {
						t.Errorf("CRLF file got bare line feeds:\n%q", data)
					}
				}
				skill, err := os.ReadFile(filepath.Join(root, ".claude/skills/git-atlas/SKILL.md"))
				if err != nil || !strings.HasPrefix(string(skill), "---\nname: git-atlas\ndescription: Use when") {
					t.Errorf("skill: %v %.80q", err, skill)
				}
			})
		})
	}
}

func TestCodexHooksMerge(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".codex/hooks.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]}}`,
		"AGENTS.md":         "# Project\n\nBuild with make.", // no final newline
	}
	roundTrip(t, "codex", ScopeProject, files, func(t *testing.T, root string) {
		v := readJSON(t, filepath.Join(root, ".codex/hooks.json"))
		if !hasGroup(v, "SessionStart", "startup|resume|clear", "git atlas agent hook codex") || !hasGroup(v, "PostCompact", "", "git atlas agent hook codex") {
			t.Errorf("hooks: %v", v)
		}
		md, _ := os.ReadFile(filepath.Join(root, "AGENTS.md"))
		if !strings.HasPrefix(string(md), "# Project\n\nBuild with make.\n<!-- git-atlas:begin") || !strings.Contains(string(md), "# Driving a run with git-atlas") {
			t.Errorf("AGENTS.md: %q", md)
		}
	})
	roundTrip(t, "codex", ScopeUser, nil, nil)
	for _, md := range []string{"# Rules\r\n\r\nBe kind.\r\n", "# Rules\r\nno final newline", ""} {
		roundTrip(t, "codex", ScopeUser, map[string]string{".codex/AGENTS.md": md}, func(t *testing.T, root string) {
			data, _ := os.ReadFile(filepath.Join(root, ".codex/AGENTS.md"))
			if strings.Contains(md, "\r\n") && strings.Count(string(data), "\n") != strings.Count(string(data), "\r\n") {
				t.Errorf("CRLF file got bare line feeds:\n%q", data)
			}
		})
	}
}

func TestKimiConfigMerge(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"absent": "",
		"empty":  "",
		"tables and comments, no final newline": `# my config
default_model = "kimi-code/k3"

[[hooks]]
event = "PreToolUse"
matcher = "Bash"
command = "node check.mjs"   # keep me
timeout = 5

[thinking]
enabled = true`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			if name != "absent" {
				files[".kimi-code/config.toml"] = content
			}
			roundTrip(t, "kimi", ScopeUser, files, func(t *testing.T, root string) {
				var cfg struct {
					Hooks []struct{ Event, Matcher, Command string }
				}
				data, _ := os.ReadFile(filepath.Join(root, ".kimi-code/config.toml"))
				if _, err := toml.Decode(string(data), &cfg); err != nil {
					t.Fatalf("config.toml after install: %v\n%s", err, data)
				}
				var events []string
				for _, h := range cfg.Hooks {
					if h.Command == "git atlas agent hook kimi" {
						events = append(events, h.Event)
					}
				}
				if strings.Join(events, ",") != "SessionStart,PostCompact" {
					t.Errorf("hooks: %+v", cfg.Hooks)
				}
			})
		})
	}
	roundTrip(t, "kimi", ScopeProject, map[string]string{".kimi-code/AGENTS.md": "local notes\n"}, nil)
}

func TestMalformedRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		agent, scope, file, content string
		line                        int
	}{
		{"claude", ScopeProject, ".claude/settings.json", "{\n  \"a\": 1,\n  \"b\": \n}\n", 4},
		{"claude", ScopeProject, ".claude/settings.json", "{\n  \"hooks\": [\n  ]\n}\n", 2},
		{"claude", ScopeProject, ".claude/settings.json", "[1]\n", 1},
		{"codex", ScopeProject, ".codex/hooks.json", "{\"hooks\": {\n\"SessionStart\": {}}}", 2},
		{"kimi", ScopeUser, ".kimi-code/config.toml", "a = 1\nb = = 2\n", 2},
	}
	for _, c := range cases {
		root := t.TempDir()
		p := filepath.Join(root, c.file)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(c.content), 0o644)
		_, err := Install(c.agent, c.scope, root)
		var fe *FileError
		var se *SyntaxError
		if !errors.As(err, &fe) || !errors.As(err, &se) || se.Line != c.line || fe.Path != p {
			t.Errorf("%s %q: got %v, want a syntax error at line %d", c.file, c.content, err, c.line)
		}
		if _, err := Uninstall(c.agent, c.scope, root); err == nil {
			t.Errorf("%s %q: uninstall accepted a malformed file", c.file, c.content)
		}
	}
}

// A TOML file that defines hooks as an inline array cannot take [[hooks]] tables:
// install refuses rather than write an invalid file.
func TestKimiInlineHooksRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p := filepath.Join(root, ".kimi-code/config.toml")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte("hooks = []\n"), 0o644)
	if _, err := Install("kimi", ScopeUser, root); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Fatalf("got %v", err)
	}
}

// A SKILL.md that is not git-atlas's is never overwritten; one git-atlas wrote and a
// person edited is left by uninstall.
func TestSkillOwnership(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p := filepath.Join(root, ".claude/skills/git-atlas/SKILL.md")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte("my own skill\n"), 0o644)
	if _, err := Install("claude", ScopeProject, root); err == nil {
		t.Fatal("install overwrote a foreign skill")
	}
	_ = os.Remove(p)
	ch, err := Install("claude", ScopeProject, root)
	if err != nil {
		t.Fatal(err)
	}
	_ = Apply(ch)
	data, _ := os.ReadFile(p)
	_ = os.WriteFile(p, append(data, "my note\n"...), 0o644)
	ch, err = Uninstall("claude", ScopeProject, root)
	if err != nil {
		t.Fatal(err)
	}
	_ = Apply(ch)
	if data, _ := os.ReadFile(p); !strings.HasSuffix(string(data), "my note\n") {
		t.Fatal("uninstall removed an edited skill")
	}
}

func TestProtocolLength(t *testing.T) {
	t.Parallel()
	if n := len(strings.Fields(Protocol)); n > 1500 {
		t.Fatalf("the protocol has %d words; at most 1,500 fit an agent's context", n)
	}
}

// A group that a person changed after install (a handler of theirs beside git-atlas's)
// loses only git-atlas's handler on uninstall.
func TestUninstallKeepsHandlersAddedToOurGroup(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ch, err := Install("claude", ScopeUser, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".claude/settings.json")
	data, _ := os.ReadFile(p)
	edited := strings.Replace(string(data), `"timeout": 10
          }`, `"timeout": 10
          },
          {"type": "command", "command": "mine.sh"}`, 1)
	if edited == string(data) {
		t.Fatalf("fixture did not apply:\n%s", data)
	}
	_ = os.WriteFile(p, []byte(edited), 0o644)
	ch, err = Uninstall("claude", ScopeUser, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	v := readJSON(t, p)
	if !hasGroup(v, "SessionStart", "startup|resume|clear|compact", "mine.sh") || hasGroup(v, "SessionStart", "startup|resume|clear|compact", "git atlas agent hook claude") {
		t.Fatalf("after uninstall: %v", v)
	}
}
