package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// cliResult is what the command line gave with --json: its document or its error.
type cliResult struct {
	code int
	doc  map[string]any
	err  *toolError
}

// atlasJSON runs `git atlas --json ARGS` in dir and reads its document or its error.
func atlasJSON(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(atlasBin(), append([]string{"--json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r cliResult
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("git atlas %v: %v", args, err)
	}
	if r.code == 0 {
		if err := json.Unmarshal(stdout.Bytes(), &r.doc); err != nil {
			t.Fatalf("git atlas %v: %v\n%s", args, err, stdout.Bytes())
		}
		return r
	}
	var e struct {
		Error *struct {
			toolError
			Hint *string `json:"hint"`
		} `json:"error"`
	}
	if err := json.Unmarshal(stderr.Bytes(), &e); err != nil || e.Error == nil {
		t.Fatalf("git atlas %v: exit %d without a JSON error: %s", args, r.code, stderr.Bytes())
	}
	r.err = &e.Error.toolError
	r.err.Hint = e.Error.Hint
	return r
}

// asFields is a command line's text with every flag spelled as MCP spells the field:
// --verify-timeout is verify_timeout.
func asFields(s string) string {
	return regexp.MustCompile(`--([a-z][a-z0-9-]*)`).ReplaceAllStringFunc(s, func(m string) string {
		return strings.ReplaceAll(m[2:], "-", "_")
	})
}

// TestFrontEndsAgree runs the same inputs through the command line and through MCP:
// both build the same request of the same operation, so they give the same result, or
// the same error (kind, exit code, message and hint, each naming the request's fields
// in the front end's own spelling), except where a rule names the front end (a
// person's step is refused through MCP). A hint that names a step to take names it as
// each front end runs it: a command line, or a tool and its arguments, never a flag
// over MCP.
func TestFrontEndsAgree(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	atlas(t, repo, env, "", "start", "--id", "r", "--stages", "a,b", "--holder", "me")
	atlas(t, repo, env, "", "start", "--id", "g", "--graph", "--holder", "me")
	atlas(t, repo, env, "", "job", "add", "g", "j1", "--holder", "me")
	pipeline := filepath.Join(repo, "p.json")
	if err := os.WriteFile(pipeline, []byte(`{"stages": [{"name": "check", "gate": "human"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	atlas(t, repo, env, "", "start", "--id", "h", "--pipeline", "p.json", "--holder", "me")
	if err := os.WriteFile(filepath.Join(repo, "kids.json"), []byte(`[{"id": "c1", "bogus": 1}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"dispatched", "passed", "gated"} {
		atlas(t, repo, env, "", "transition", "h", "check", to, "--holder", "me")
	}
	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		argv []string
		// frontEnd: a rule names the front end; only the kind and code agree.
		frontEnd bool
		// cliHint and mcpHint: the hint names a step, as each front end runs it.
		cliHint, mcpHint string
	}{
		{name: "show", tool: "show", args: map[string]any{"run": "r"}, argv: []string{"show", "r"}},
		{name: "job list", tool: "job_list", args: map[string]any{"run": "g"}, argv: []string{"job", "list", "g"}},
		{name: "unknown run", tool: "show", args: map[string]any{"run": "nope"}, argv: []string{"show", "nope"},
			cliHint: "`git atlas list --all` shows every run", mcpHint: "`list {\"all\":true}` shows every run"},
		{name: "heartbeat without a holder", tool: "heartbeat", args: map[string]any{"run": "r"}, argv: []string{"heartbeat", "r"},
			cliHint: "git atlas heartbeat r --holder NAME", mcpHint: `heartbeat {"run":"r","holder":"<NAME>"}`},
		{name: "negative ttl", tool: "transition", args: map[string]any{"run": "r", "stage": "a", "status": "dispatched", "holder": "me", "ttl": "-5s"},
			argv: []string{"transition", "r", "a", "dispatched", "--holder", "me", "--ttl=-5s"}},
		{name: "negative verify timeout (the request's check)", tool: "job_done",
			args: map[string]any{"run": "g", "job": "j1", "lease": "j1#1@1.x", "status": "ok", "verify_timeout": "-1s"},
			argv: []string{"job", "done", "g", "j1", "--lease", "j1#1@1.x", "--status", "ok", "--verify-timeout=-1s"}},
		{name: "take over without a holder", tool: "transition", args: map[string]any{"run": "r", "stage": "a", "status": "dispatched", "take_over": true},
			argv: []string{"transition", "r", "a", "dispatched", "--take-over"}},
		{name: "graph limits of a single run", tool: "start", args: map[string]any{"id": "x", "gas": 3, "holder": "me"},
			argv: []string{"start", "--id", "x", "--gas", "3", "--holder", "me"}},
		{name: "stages and pipeline", tool: "start", args: map[string]any{"id": "y", "stages": "a", "pipeline": "p.json"},
			argv: []string{"start", "--id", "y", "--stages", "a", "--pipeline", "p.json"}},
		// The requests that check themselves (ops/check.go): the same refusal either way.
		{name: "a stage token without its stage", tool: "heartbeat", args: map[string]any{"run": "r", "holder": "me", "lease": "a#1@1.x"},
			argv: []string{"heartbeat", "r", "--holder", "me", "--lease", "a#1@1.x"}},
		{name: "an event type git-atlas writes", tool: "event", args: map[string]any{"run": "r", "type": "run_started", "holder": "me"},
			argv: []string{"event", "r", "run_started", "--holder", "me"}, cliHint: "use `git atlas start`", mcpHint: "use `start {}`"},
		{name: "a reserved job name", tool: "job_add", args: map[string]any{"run": "g", "job": "union", "holder": "me"},
			argv: []string{"job", "add", "g", "union", "--holder", "me"}},
		{name: "a thread of no dispatch", tool: "transition", args: map[string]any{"run": "r", "stage": "a", "status": "passed", "thread_id": "t", "holder": "me"},
			argv: []string{"transition", "r", "a", "passed", "--thread-id", "t", "--holder", "me"}},
		{name: "a run id the ledger could not hold", tool: "reap", args: map[string]any{"run": "a..b"}, argv: []string{"reap", "a..b"}},
		{name: "log of a run id the ledger could not hold", tool: "log", args: map[string]any{"run": "a..b"}, argv: []string{"log", "a..b"}},
		{name: "finish by a take-over without a name", tool: "finish", args: map[string]any{"run": "r", "status": "stopped", "take_over": true},
			argv: []string{"finish", "r", "--status", "stopped", "--take-over"}},
		{name: "worktrees of a run id the ledger could not hold", tool: "worktree_list", args: map[string]any{"run": "a..b"}, argv: []string{"worktree", "list", "a..b"}},
		{name: "jobs of a single run", tool: "job_claim", args: map[string]any{"run": "r", "holder": "w"}, argv: []string{"job", "claim", "r", "--holder", "w"},
			cliHint: "start a graph run with `git atlas start --graph`", mcpHint: "start a graph run with `start {\"graph\":true}`"},
		// The input decoded straight into the request: its Check reads what a front end
		// passed as it was given (children as JSON) and names the request's fields.
		{name: "children the request's check refuses", tool: "job_done",
			args: map[string]any{"run": "g", "job": "j1", "lease": "j1#1@1.x", "status": "ok", "children": []any{map[string]any{"id": "c1", "bogus": 1}}},
			argv: []string{"job", "done", "g", "j1", "--lease", "j1#1@1.x", "--status", "ok", "--children", "kids.json"}},
		{name: "a setup time limit without setup", tool: "start", args: map[string]any{"id": "z", "setup_timeout": "1m", "holder": "me"},
			argv: []string{"start", "--id", "z", "--setup-timeout", "1m", "--holder", "me"}},
		{name: "resume of a run id the ledger could not hold", tool: "resume", args: map[string]any{"run": "a..b"}, argv: []string{"resume", "a..b"}},
		{name: "a heartbeat of a stage without its holder", tool: "heartbeat", args: map[string]any{"run": "r", "stage": "a"}, argv: []string{"heartbeat", "r", "--stage", "a"},
			cliHint: "git atlas heartbeat r --holder NAME", mcpHint: `heartbeat {"run":"r","holder":"<NAME>"}`},
		{name: "a person's step", tool: "transition", args: map[string]any{"run": "h", "stage": "check", "status": "completed", "holder": "me"},
			argv: []string{"transition", "h", "check", "completed", "--holder", "me"}, frontEnd: true},
	} {
		cli := atlasJSON(t, repo, env, tc.argv...)
		doc, te, err := c.call(ctx, tc.tool, tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		switch {
		case cli.err == nil && te == nil:
			if !reflect.DeepEqual(cli.doc, doc) {
				t.Errorf("%s: results differ\ncli %v\nmcp %v", tc.name, cli.doc, doc)
			}
		case cli.err == nil || te == nil:
			t.Errorf("%s: cli %+v %v, mcp %+v %v: one failed", tc.name, cli.err, cli.doc, te, doc)
		case cli.err.Kind != te.Kind || cli.err.Code != te.Code || cli.code != te.Code:
			t.Errorf("%s: cli %s (%d, exit %d), mcp %s (%d)", tc.name, cli.err.Kind, cli.err.Code, cli.code, te.Kind, te.Code)
		case strings.Contains(*te.Hint, "--"):
			t.Errorf("%s: mcp's hint names a flag: %q", tc.name, *te.Hint)
		case tc.frontEnd:
			if !strings.Contains(te.Message, "through MCP") {
				t.Errorf("%s: mcp %q does not name the front end", tc.name, te.Message)
			}
		case tc.mcpHint != "":
			if asFields(cli.err.Message) != te.Message || *cli.err.Hint != tc.cliHint || *te.Hint != tc.mcpHint {
				t.Errorf("%s: errors differ\ncli %q / %q\nmcp %q / %q\nwant hints %q / %q", tc.name, cli.err.Message, *cli.err.Hint, te.Message, *te.Hint, tc.cliHint, tc.mcpHint)
			}
		case asFields(cli.err.Message) != te.Message || asFields(*cli.err.Hint) != asFields(*te.Hint):
			t.Errorf("%s: errors differ\ncli %q / %q\nmcp %q / %q", tc.name, cli.err.Message, *cli.err.Hint, te.Message, *te.Hint)
		case strings.Contains(te.Message, "--"):
			t.Errorf("%s: mcp names a flag: %q", tc.name, te.Message)
		}
	}
}
