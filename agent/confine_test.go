package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestProjectLinksOutRefused: at project scope no file install or uninstall reads
// or writes may be reached through a symbolic link that leaves the working tree
// (the file itself, a directory on its way, or a dangling link): install and
// uninstall are refused (a fault.ErrRefused), nothing outside changes, and status
// says "outside", never installed.
func TestProjectLinksOutRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		agent string
		link  string // in the tree
		to    string // relative to the tree, out of it
	}{
		{"instructions file", "codex", "AGENTS.md", "../outside/notes.md"},
		{"settings directory", "claude", ".claude", "../outside"},
		{"hook file", "codex", ".codex/hooks.json", "../../outside/hooks.json"},
		{"dangling link", "codex", "AGENTS.md", "../outside/missing.md"},
		{"kimi directory", "kimi", ".kimi-code", "../outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			tree, outside := filepath.Join(base, "tree"), filepath.Join(base, "outside")
			for _, d := range []string{tree, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(outside, "notes.md"), []byte("my notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "hooks.json"), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(tree, tc.link)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.to, link); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, outside)
			_, err := Install(tc.agent, ScopeProject, tree)
			if !errors.Is(err, fault.ErrRefused) {
				t.Fatalf("install: err = %v, want a refusal", err)
			}
			if _, err := Install(tc.agent, ScopeProject, tree); err == nil || !strings.Contains(err.Error(), tc.link) {
				t.Errorf("install: %v, want the link %s named", err, tc.link)
			}
			if _, err := Uninstall(tc.agent, ScopeProject, tree); !errors.Is(err, fault.ErrRefused) {
				t.Errorf("uninstall: err = %v, want a refusal", err)
			}
			if _, err := InstallMCP(tc.agent, ScopeProject, tree); tc.link == ".kimi-code" && !errors.Is(err, fault.ErrRefused) {
				t.Errorf("install --mcp: err = %v, want a refusal", err)
			}
			st, err := Inspect(tc.agent, ScopeProject, tree)
			if err != nil || st.Installed {
				t.Fatalf("status: %+v %v", st, err)
			}
			found := false
			for _, f := range st.Files {
				found = found || f.State == "outside"
			}
			if !found {
				t.Errorf("status names no file outside: %+v", st.Files)
			}
			if diff := compareSnapshots(before, snapshot(t, outside)); diff != "" {
				t.Fatalf("a file outside the tree changed:\n%s", diff)
			}
		})
	}
}

// TestProjectLinkInsideFollowed: a link that stays in the tree is followed; the
// change names the resolved file (what --dry-run prints), the link is kept, and
// uninstall gives the target back byte for byte.
func TestProjectLinkInsideFollowed(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(tree, "docs", "agents.md")
	if err := os.WriteFile(target, []byte("# Agents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/agents.md", filepath.Join(tree, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	ch, err := Install("codex", ScopeProject, tree)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(target)
	named := false
	var paths []string
	for _, c := range ch {
		named = named || (c.Path == real && c.Action == "update")
		paths = append(paths, c.Action+" "+c.Path)
	}
	if !named {
		t.Fatalf("changes %v do not name the resolved %s", paths, real)
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(tree, "AGENTS.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is gone: %v", err)
	}
	ch, err = Uninstall("codex", ScopeProject, tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(ch); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "# Agents\n" {
		t.Fatalf("after uninstall: %q", b)
	}
}

// TestApplyRefusesLinkMadeMeanwhile: a link that appears between computing and
// applying a change is not written through.
func TestApplyRefusesLinkMadeMeanwhile(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	tree, outside := filepath.Join(base, "tree"), filepath.Join(base, "outside")
	for _, d := range []string{tree, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := Install("claude", ScopeProject, tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tree, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := Apply(ch); !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("apply: err = %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("written outside the tree: %v", entries)
	}
}

// TestDuplicateKeysRefused: a key that appears twice on the path install edits
// (the root's "hooks", an event under it, a group's "hooks", "mcpServers" or the
// server's name under it) is refused with the file's line and the key, for install,
// uninstall and status alike: readers keep the last, the editor would edit the first.
func TestDuplicateKeysRefused(t *testing.T) {
	t.Parallel()
	hook := `{"type": "command", "command": "git atlas agent hook claude", "timeout": 10}`
	for _, tc := range []struct {
		name, agent, file, content, key string
		mcp                             bool
	}{
		{"hooks", "claude", ".claude/settings.json", "{\n  \"hooks\": {},\n  \"model\": \"x\",\n  \"hooks\": {\"SessionStart\": []}\n}\n", "hooks", false},
		{"escaped hooks", "claude", ".claude/settings.json", "{\n  \"hooks\": {},\n  \"ho\\u006fks\": {}\n}\n", "hooks", false},
		{"event", "claude", ".claude/settings.json", "{\"hooks\": {\n\"SessionStart\": [],\n\"SessionStart\": [{\"matcher\": \"startup|resume|clear|compact\", \"hooks\": [" + hook + "]}]}}\n", "SessionStart", false},
		{"group hooks", "claude", ".claude/settings.json", "{\"hooks\": {\"SessionStart\": [{\"matcher\": \"startup|resume|clear|compact\", \"hooks\": [" + hook + "],\n\"hooks\": []}]}}\n", "hooks", false},
		{"codex event", "codex", ".codex/hooks.json", "{\"hooks\": {\"PostCompact\": [],\n\"PostCompact\": []}}\n", "PostCompact", false},
		{"mcpServers", "claude", ".mcp.json", "{\"mcpServers\": {},\n\"mcpServers\": {}}\n", "mcpServers", true},
		{"server", "kimi", ".kimi-code/mcp.json", "{\"mcpServers\": {\"git-atlas\": {},\n\"git-atlas\": {}}}\n", "git-atlas", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := t.TempDir()
			p := filepath.Join(tree, tc.file)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			want := func(what string, err error) {
				t.Helper()
				var se *SyntaxError
				var fe *FileError
				if !errors.As(err, &se) || !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.file) ||
					!strings.Contains(err.Error(), `"`+tc.key+`" appears 2 times`) {
					t.Errorf("%s: err = %v, want a syntax error naming %s and %q", what, err, tc.file, tc.key)
				}
			}
			if tc.mcp {
				_, err := InstallMCP(tc.agent, ScopeProject, tree)
				want("install --mcp", err)
			} else {
				_, err := Install(tc.agent, ScopeProject, tree)
				want("install", err)
			}
			_, err := Uninstall(tc.agent, ScopeProject, tree)
			want("uninstall", err)
			st, err := Inspect(tc.agent, ScopeProject, tree)
			if err != nil || st.Installed || st.MCP {
				t.Fatalf("status: %+v %v", st, err)
			}
			malformed := false
			for _, f := range st.Files {
				malformed = malformed || (f.State == "malformed" && strings.Contains(f.Error, tc.key))
			}
			if !malformed {
				t.Errorf("status does not call the file malformed: %+v", st.Files)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.content {
				t.Fatalf("the file changed: %q", b)
			}
		})
	}
}

// TestDuplicateSectionRefused: two git-atlas sections in a Markdown or TOML file are
// refused, with their lines.
func TestDuplicateSectionRefused(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	sec := section("AGENTS.md", "codex").(*block)
	content := "# Mine\n\n" + sec.text("\n") + "\nmore\n\n" + sec.text("\n")
	if err := os.WriteFile(filepath.Join(tree, "AGENTS.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"install":   func() error { _, err := Install("codex", ScopeProject, tree); return err }(),
		"uninstall": func() error { _, err := Uninstall("codex", ScopeProject, tree); return err }(),
	} {
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "appears twice") {
			t.Errorf("%s: err = %v, want the section named twice", what, err)
		}
	}
}

// TestBOMKept: a JSON file that starts with a UTF-8 byte order mark is edited after
// it (not "invalid character 'ï'"), and uninstall gives it back byte for byte, BOM
// included; so for the TOML and Markdown files.
func TestBOMKept(t *testing.T) {
	t.Parallel()
	roundTrip(t, "claude", ScopeProject, map[string]string{
		".claude/settings.json": utf8BOM + "{\n  \"model\": \"opus\"\n}\n",
		".mcp.json":             utf8BOM + "{\n  \"mcpServers\": {}\n}\n",
	}, func(t *testing.T, root string) {
		b, err := os.ReadFile(filepath.Join(root, ".claude", "settings.json"))
		if err != nil || !strings.HasPrefix(string(b), utf8BOM+"{") || !strings.Contains(string(b), "git atlas agent hook claude") {
			t.Fatalf("settings.json after install: %q %v", b, err)
		}
	})
	roundTrip(t, "codex", ScopeProject, map[string]string{"AGENTS.md": utf8BOM + "# Agents\n", ".codex/hooks.json": utf8BOM + "{}"}, nil)
	roundTrip(t, "kimi", ScopeUser, map[string]string{".kimi-code/config.toml": utf8BOM + "model = \"k2\"\n"}, nil)
	// A syntax error after a BOM is on the line it is on.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(utf8BOM+"{\n  \"a\": 1,\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Install("claude", ScopeProject, root)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || strings.Contains(err.Error(), "ï") {
		t.Fatalf("a syntax error after a BOM: %v", err)
	}
}

const utf8BOM = "\xef\xbb\xbf"
