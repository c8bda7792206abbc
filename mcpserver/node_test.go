package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// tsSDK is the official TypeScript MCP SDK the client test installs from npm
// (pinned: the test is about git-atlas's answers, not the SDK's releases).
const tsSDK = "@modelcontextprotocol/sdk@1.32.2"

// nodeRequired makes the TypeScript client test fail, rather than skip, when node,
// npm or the package cannot be had (.ci/run sets it: CI has them).
const nodeRequired = "ATLAS_MCP_NODE_REQUIRED"

// TestMCPTypeScriptClient runs a session of the official TypeScript SDK's client
// (the one most MCP clients are built on) against `git-atlas mcp` in a test
// repository: listTools must succeed (the SDK checks every tool against MCP's Tool
// shape, and refuses boolean subschemas) and a few tool calls return results that
// validate against their output schemas. It needs node and npm and installs the SDK
// outside the repository, under the user's cache directory; without them, or without
// a network for the first install, it is skipped (unless ATLAS_MCP_NODE_REQUIRED).
func TestMCPTypeScriptClient(t *testing.T) {
	t.Parallel()
	modules := installTSSDK(t)
	repo, env := newRepo(t)

	// The script finds the SDK through a node_modules link beside it.
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "tsclient.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tsclient.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	command, _ := json.Marshal([]string{atlasBin(), "mcp"})
	calls, _ := json.Marshal([][]any{
		{"start", map[string]any{"id": "ts", "stages": "plan,code", "intent": "typescript client", "holder": "ts", "session": "s-ts"}},
		{"heartbeat", map[string]any{"run": "ts", "holder": "ts", "session": "s-ts"}},
		{"transition", map[string]any{"run": "ts", "stage": "plan", "status": "dispatched", "holder": "ts", "session": "s-ts"}},
		{"list", map[string]any{}},
		{"show", map[string]any{"run": "ts"}},
		{"log", map[string]any{"run": "ts"}},
		{"resume_plan", map[string]any{"run": "ts"}},
		{"worktree_list", map[string]any{}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "tsclient.mjs"))
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), "ATLAS_MCP_COMMAND="+string(command),
		"ATLAS_MCP_CALLS="+string(calls), "ATLAS_MCP_DIR="+repo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct {
		Tools []string `json:"tools"`
		Calls []struct {
			Name              string          `json:"name"`
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           json.RawMessage `json:"content"`
		} `json:"calls"`
		Error string `json:"error"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("the TypeScript client: %v (output not JSON: %v)\n%s\n%s", err, jerr, out, stderr.String())
	}
	if res.Error != "" || err != nil {
		t.Fatalf("the TypeScript SDK's client failed: %s (%v)\nstderr:\n%s", res.Error, err, stderr.String())
	}
	for _, want := range allTools {
		if !slices.Contains(res.Tools, want) {
			t.Errorf("listTools: no tool %s (got %v)", want, res.Tools)
		}
	}
	if len(res.Calls) != 8 {
		t.Fatalf("%d calls answered, want 8", len(res.Calls))
	}
	for _, c := range res.Calls {
		if c.IsError || len(c.StructuredContent) == 0 || string(c.StructuredContent) == "null" {
			t.Errorf("callTool %s: isError %v, structured content %s, content %s", c.Name, c.IsError, c.StructuredContent, c.Content)
		}
	}
	var show struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(res.Calls[4].StructuredContent, &show); err != nil || show.RunID != "ts" {
		t.Errorf("show: %s", res.Calls[4].StructuredContent)
	}
}

// installTSSDK returns the node_modules directory that holds tsSDK, installing it
// with npm once per user cache (in a temporary directory, renamed into place, so
// that two test binaries at once do not share a half-made install).
func installTSSDK(t *testing.T) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv(nodeRequired) != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip("%s is not installed: the official TypeScript MCP client is not tried", tool)
		}
	}
	base := testenv.CacheDir() // the npm install is kept there between runs
	if base == "" {
		base = filepath.Join(t.TempDir(), "git-atlas-test")
	}
	dir := filepath.Join(base, "npm-"+strings.NewReplacer("@", "", "/", "-").Replace(tsSDK))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return modules
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(base, "installing-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "--ignore-scripts",
		"--cache", filepath.Join(base, "npm-cache"), "--prefix", tmp, tsSDK)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		if regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network`).Match(out) || ctx.Err() != nil {
			skip("npm cannot fetch %s (no network?): %v\n%s", tsSDK, err, out)
		}
		t.Fatalf("npm install %s: %v\n%s", tsSDK, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Stat(dir); serr != nil { // not another binary's install
			t.Fatal(err)
		}
	}
	return modules
}
