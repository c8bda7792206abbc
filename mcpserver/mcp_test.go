package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-atlas/git-atlas/internal/cli"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/internal/testknob"
	"github.com/git-atlas/git-atlas/mcpserver"
)

// childVar selects what this test binary is when a test starts it: "agent" is the
// scripted agent of TestMCPAgentSessionKilled.
const childVar = "GIT_ATLAS_MCP_TEST_CHILD"

// binVar hands the scripted agent the git-atlas binary it starts `mcp` from.
const binVar = "GIT_ATLAS_MCP_TEST_BIN"

// atlasBin is git-atlas as testenv builds it for every suite, built on first use (a
// fuzz worker, which runs TestMain too, never builds it): `git-atlas mcp` is a real
// stdio subprocess. The scripted agent child is handed its path (binVar).
func atlasBin() string {
	if p := os.Getenv(binVar); p != "" {
		return p
	}
	p, err := testenv.Build()
	if err != nil {
		panic(err)
	}
	return p
}

// The tests run in the pinned git environment (testenv.Pin), set once, and in
// parallel: each has its own repository, and its processes get their environment
// from newRepo, never from a variable a test sets.
func TestMain(m *testing.M) {
	testknob.NoRaceExitSleep()
	if os.Getenv(childVar) == "agent" {
		os.Exit(agentMain())
	}
	os.Exit(testenv.Pin(m))
}

// allTools are the tools the server must offer (docs/contract.md §12: one per operation).
var allTools = []string{"audit", "event", "finish", "job_add", "job_claim", "job_done", "job_list", "job_renew",
	"list", "log", "reap", "recover", "recovery_list", "recovery_restore", "recovery_show", "resume",
	"resume_detect", "resume_plan", "show", "start", "transition", "union", "worktree_add", "worktree_list",
	"worktree_remove"}

// newRepo makes a repository with one commit and the environment of the processes
// that work in it.
func newRepo(t *testing.T) (string, []string) {
	t.Helper()
	work := t.TempDir()
	env := append(os.Environ(), "HOME="+work, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.com", "ATLAS_SESSION=", "CI=")
	repo := filepath.Join(work, "repo")
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo}, {"-C", repo, "commit", "-q", "--allow-empty", "-m", "init"}} {
		testenv.GitEnv(t, "", env, "", args...)
	}
	return repo, env
}

// client is one MCP client session with a `git-atlas mcp` subprocess, and the output
// schemas of the server's tools.
type client struct {
	s       *mcp.ClientSession
	schemas map[string]*jsonschema.Resolved
	tools   []*mcp.Tool
}

// connect starts `git-atlas mcp` in dir and connects to it through the SDK's client.
func connect(ctx context.Context, dir string, env []string, extra ...string) (*client, error) {
	return connectTo(ctx, dir, env, os.Stderr, nil, extra...)
}

// connectTo is connect with the server's stderr going to stderr and the client's
// options (nil: the SDK's defaults).
func connectTo(ctx context.Context, dir string, env []string, stderr io.Writer, opt *mcp.ClientOptions, extra ...string) (*client, error) {
	cmd := exec.Command(atlasBin(), append([]string{"mcp"}, extra...)...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "git-atlas-test", Version: "1"}, opt)
	s, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	cl := &client{s: s, schemas: map[string]*jsonschema.Resolved{}}
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		cl.tools = append(cl.tools, tool)
		if tool.OutputSchema == nil {
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		r, err := resolvedSchema(b)
		if err != nil {
			return nil, fmt.Errorf("tool %s: output schema: %w", tool.Name, err)
		}
		cl.schemas[tool.Name] = r
	}
	return cl, nil
}

// resolved keeps the output schemas resolved so far by their JSON: every server of a
// test binary lists the same ones, and resolving them all again for each session was
// a third of the package's CPU under -race.
var resolved sync.Map // string (the schema's JSON) -> *jsonschema.Resolved

// resolvedSchema is the schema b resolved, once per distinct b.
func resolvedSchema(b []byte) (*jsonschema.Resolved, error) {
	if r, ok := resolved.Load(string(b)); ok {
		return r.(*jsonschema.Resolved), nil
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(b, &schema); err != nil {
		return nil, err
	}
	r, err := schema.Resolve(nil)
	if err != nil {
		return nil, err
	}
	resolved.Store(string(b), r)
	return r, nil
}

// close ends the session: the server sees its stdin close and must exit 0 (under
// -race, a race the server ran into makes it exit 66).
func (c *client) close(t *testing.T) {
	t.Helper()
	if err := c.s.Close(); err != nil {
		t.Errorf("git-atlas mcp did not exit cleanly: %v", err)
	}
}

// toolError is a tool error's content: the CLI's JSON error.
type toolError struct {
	Code    int    `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Hint    *string
}

// call calls a tool and returns its structured result, checked against the tool's
// output schema, or its tool error.
func (c *client) call(ctx context.Context, name string, args map[string]any) (map[string]any, *toolError, error) {
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		if len(res.Content) == 0 {
			return nil, nil, fmt.Errorf("%s: a tool error without content", name)
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			return nil, nil, fmt.Errorf("%s: a tool error whose content is not text", name)
		}
		var doc struct {
			Error *struct {
				toolError
				Hint *string `json:"hint"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(text.Text), &doc); err != nil || doc.Error == nil || doc.Error.Hint == nil || doc.Error.Kind == "" || doc.Error.Message == "" {
			return nil, nil, fmt.Errorf("%s: tool error content is not {\"error\": {code, kind, message, hint}}: %s", name, text.Text)
		}
		te := doc.Error.toolError
		te.Hint = doc.Error.Hint
		return nil, &te, nil
	}
	schema := c.schemas[name]
	if schema == nil {
		return nil, nil, fmt.Errorf("%s: no output schema", name)
	}
	out, ok := res.StructuredContent.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s: structured content is %T, want an object", name, res.StructuredContent)
	}
	if err := schema.Validate(out); err != nil {
		return nil, nil, fmt.Errorf("%s: result does not validate against its output schema: %w", name, err)
	}
	return out, nil, nil
}

// must calls a tool that must succeed.
func (c *client) must(t *testing.T, ctx context.Context, name string, args map[string]any) map[string]any {
	t.Helper()
	out, te, err := c.call(ctx, name, args)
	if err != nil {
		t.Fatal(err)
	}
	if te != nil {
		t.Fatalf("%s %v: tool error %+v", name, args, *te)
	}
	return out
}

// atlas runs git-atlas in dir and returns its stdout.
func atlas(t *testing.T, dir string, env []string, stdin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(atlasBin(), args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git atlas %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// TestMCPEndToEnd drives a graph run through the SDK's own client over a real stdio
// subprocess: every tool has both schemas, every result validates against its
// tool's output schema, a stale lease is a conflict tool error, and resume's plan is
// read back.
func TestMCPEndToEnd(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)

	var names []string
	for _, tool := range c.tools {
		names = append(names, tool.Name)
		if tool.Description == "" || strings.Contains(tool.Description, "\n") {
			t.Errorf("tool %s: description %q is not one line", tool.Name, tool.Description)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var schema jsonschema.Schema
		if err := json.Unmarshal(in, &schema); err != nil || schema.Type != "object" {
			t.Errorf("tool %s: input schema %s is not an object schema", tool.Name, in)
		}
		if c.schemas[tool.Name] == nil {
			t.Errorf("tool %s has no output schema", tool.Name)
		}
	}
	sort.Strings(names)
	for _, want := range allTools {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %s (tools: %v)", want, names)
		}
	}

	// No holder on any write (a holder on a job write also takes the run's driver
	// lease): the run has no live driver, so it is interrupted and resume takes it up.
	run := c.must(t, ctx, "start", map[string]any{"id": "g", "graph": true, "intent": "e2e", "session": "s-e2e"})
	if run["run_id"] != "g" || run["kind"] != "graph" {
		t.Fatalf("start: %v", run)
	}
	for _, j := range []string{"a", "b", "c"} {
		args := map[string]any{"run": "g", "job": j}
		if j == "c" {
			args["needs"] = []string{"a", "b"}
		}
		c.must(t, ctx, "job_add", args)
	}
	first := c.must(t, ctx, "job_claim", map[string]any{"run": "g", "job": "a", "ttl": "1h"})
	stale, _ := first["lease"].(string)
	if stale == "" {
		t.Fatalf("claim: no lease: %v", first)
	}
	c.must(t, ctx, "job_renew", map[string]any{"run": "g", "job": "a", "lease": stale})
	c.must(t, ctx, "job_done", map[string]any{"run": "g", "job": "a", "lease": stale, "status": "timeout"})
	again := c.must(t, ctx, "job_claim", map[string]any{"run": "g", "job": "a", "agent": "codex", "thread_id": "th-9"})
	if again["lease"] == stale {
		t.Fatalf("the second claim got the first lease again: %v", again)
	}
	if j, _ := again["job"].(map[string]any); j["agent"] != "codex" || j["thread_id"] != "th-9" {
		t.Fatalf("a claim naming its agent: %v", again["job"])
	}
	_, te, err := c.call(ctx, "job_done", map[string]any{"run": "g", "job": "a", "lease": stale, "status": "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if te == nil || te.Kind != "conflict" || te.Code != cli.ExitConflict {
		t.Fatalf("job_done with a stale lease: %+v, want a conflict tool error (code 3)", te)
	}
	c.must(t, ctx, "job_claim", map[string]any{"run": "g", "job": "b"})
	list := c.must(t, ctx, "job_list", map[string]any{"run": "g"})
	if n := len(list["jobs"].([]any)); n != 3 {
		t.Fatalf("job_list: %d jobs", n)
	}

	detect := c.must(t, ctx, "resume_detect", map[string]any{})
	if rr := detect["resumable_runs"].([]any); len(rr) != 1 || rr[0].(map[string]any)["run_id"] != "g" {
		t.Fatalf("resume_detect: %v", detect)
	}
	resumed := c.must(t, ctx, "resume", map[string]any{"run": "g", "session": "s-e2e"})
	reset, _ := resumed["reset_jobs"].([]any)
	if len(reset) != 2 {
		t.Fatalf("resume reset %v, want the two running jobs a and b", resumed["reset_jobs"])
	}
	plan := c.must(t, ctx, "resume_plan", map[string]any{"run": "g"})
	next := plan["next_action"].(map[string]any)
	if next["action"] == "" {
		t.Fatalf("resume_plan: no next action: %v", plan)
	}
	// The jobs a and b were reset: both are ready again, c still waits on them.
	ready := c.must(t, ctx, "job_list", map[string]any{"run": "g", "ready": true})
	if got := fmt.Sprint(ready["ready"]); got != "[a b]" {
		t.Fatalf("ready after resume: %s, want [a b]", got)
	}
	// One session's calls at once: the server serves them concurrently, each through
	// its own in-process command.
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i, name := range []string{"list", "show", "log", "worktree_list", "recovery_list", "audit", "job_list", "resume_plan", "show", "log", "job_list", "list"} {
		args := map[string]any{}
		if name == "show" || name == "log" || name == "job_list" || name == "resume_plan" {
			args["run"] = "g"
		}
		wg.Go(func() {
			if _, te, err := c.call(ctx, name, args); err != nil || te != nil {
				errs <- fmt.Errorf("call %d (%s): %w %+v", i, name, err, te)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMCPBadInput: an unknown field or an invalid run id is a usage tool error
// (code 2), and nothing is written.
func TestMCPBadInput(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	c.must(t, ctx, "start", map[string]any{"id": "r", "stages": "a,b", "holder": "me"})
	refs := func() string { return string(atlasGit(t, repo, env, "for-each-ref")) }
	before := refs()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"transition", map[string]any{"run": "r", "stage": "a", "status": "dispatched", "holder": "me", "bogus": 1}, `unknown argument "bogus"`},
		{"start", map[string]any{"id": "bad id!", "stages": "a"}, `invalid run name`},
		{"transition", map[string]any{"run": "no/such..run", "stage": "a", "status": "dispatched", "holder": "me"}, `invalid run name`},
		{"job_add", map[string]any{"run": "r", "job": 7}, `want "string"`},
		{"finish", map[string]any{"run": "r", "status": "done"}, `status`},
		{"transition", map[string]any{"run": "r", "stage": "a"}, `status`},
		{"event", map[string]any{"run": "r", "type": "note", "data": "not an object", "holder": "me"}, `data`},
		{"transition", map[string]any{"run": "r", "stage": "a", "status": "dispatched", "holder": "me", "ttl": "-5s"}, `ttl`},
		{"show", map[string]any{"run": "-C/tmp"}, `invalid run name`},
		// A relative place to write means nothing to a server (it once resolved to the
		// repository, and a restore deleted it).
		{"recovery_restore", map[string]any{"snapshot": "x", "to": "restored"}, `"restored" is a relative path`},
		{"recovery_restore", map[string]any{"snapshot": "x", "to": "."}, `relative path`},
		{"recover", map[string]any{"run": "r", "stage": "a", "patch_out": "p.patch", "holder": "me"}, `relative path`},
		// start's run-owner arguments are checked as the command line's flags are, the
		// error naming the tool's fields.
		{"start", map[string]any{"id": "h", "dispatch_only": true, "managed_by": "hotl"}, `takes no managed_by`},
		{"start", map[string]any{"id": "h", "resume_with": "/hotl:resume"}, `resume_with needs managed_by`},
	} {
		_, te, err := c.call(ctx, tc.tool, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if te == nil || te.Kind != "usage" || te.Code != cli.ExitUsage || !strings.Contains(te.Message, tc.want) {
			t.Errorf("%s %v: %+v, want a usage tool error containing %q", tc.tool, tc.args, te, tc.want)
		}
	}
	if after := refs(); after != before {
		t.Fatalf("a refused call wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	// docs/contract.md §5.4: a run another engine owns can be started over MCP too.
	if m := c.must(t, ctx, "start", map[string]any{"id": "m", "stages": "a", "managed_by": "hotl", "resume_with": "/hotl:resume", "holder": "me"}); m["pipeline_mode"] != "managed" || m["managed_by"] != "hotl" || m["resume_with"] != "/hotl:resume" {
		t.Errorf("start managed_by: %v", m)
	}
	if d := c.must(t, ctx, "start", map[string]any{"id": "d", "stages": "a", "dispatch_only": true, "holder": "me"}); d["pipeline_mode"] != "dispatch-only" {
		t.Errorf("start dispatch_only: %v", d)
	}
}

// TestMCPStartHasEveryFlag: the start tool takes every flag the command line's start
// takes (a flag added to one and not the other left MCP clients short of it).
func TestMCPStartHasEveryFlag(t *testing.T) {
	t.Parallel()
	var ref bytes.Buffer
	if err := cli.WriteMarkdownReference(&ref); err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(ref.String(), "\n## git atlas start\n")
	if !ok {
		t.Fatal("the reference has no start section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	fields := map[string]bool{}
	for _, name := range mcpserver.ToolArguments("start") {
		fields[name] = true
	}
	n := 0
	for line := range strings.SplitSeq(section, "\n") {
		flag, ok := strings.CutPrefix(line, "- `--")
		if !ok {
			continue
		}
		n++
		flag, _, _ = strings.Cut(flag, "`")
		flag, _, _ = strings.Cut(flag, "=")
		if name := strings.ReplaceAll(flag, "-", "_"); !fields[name] {
			t.Errorf("start --%s has no field %q in the MCP start tool", flag, name)
		}
	}
	if n == 0 {
		t.Fatal("no flags found in the start section of the reference")
	}
}

func atlasGit(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	out, err := testenv.GitEnvErr(dir, env, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(out)
}

// TestMCPConcurrentClaims: 8 MCP clients, each its own `git-atlas mcp` process,
// claim from one 40-job graph run (16 without the sweeps build tag: every job is a
// `job add` process, and 16 still give the eight clients two each to race for) until
// nothing is left: no job is granted twice (the ledger's job_claimed events say who
// got what) and every job ends DONE.
func TestMCPConcurrentClaims(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	jobs := testenv.Rounds(16, 40)
	const clients, maxWaits = 8, 2000
	atlas(t, repo, env, "", "start", "--id", "g", "--graph")
	for i := range jobs {
		atlas(t, repo, env, "", "job", "add", "g", fmt.Sprintf("j%02d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	done := make([][]string, clients)
	for n := range clients {
		c, err := connect(ctx, repo, env)
		if err != nil {
			t.Fatal(err)
		}
		defer c.close(t)
		wg.Add(1)
		go func(n int, c *client) {
			defer wg.Done()
			holder := fmt.Sprintf("w%d", n)
			waits := 0
			for {
				g, te, err := c.call(ctx, "job_claim", map[string]any{"run": "g", "holder": holder})
				switch {
				case err != nil:
					errs <- err
					return
				case te != nil && te.Kind == "conflict":
					if waits++; waits > maxWaits {
						errs <- fmt.Errorf("%s: %d conflicts in a row: %+v", holder, maxWaits, *te)
						return
					}
					continue // another client's claim won the write
				case te != nil && te.Kind == "refused" && strings.Contains(te.Message, "nothing is left to claim"):
					return
				case te != nil:
					errs <- fmt.Errorf("%s: claim: %+v", holder, *te)
					return
				case g["job"] == nil:
					// waiting: jobs are running, claim again. A job nobody holds any more
					// (a lost write) would keep every client waiting for ever: a bound on
					// polls in a row, far above what the last running jobs take, says so.
					if waits++; waits > maxWaits {
						errs <- fmt.Errorf("%s: still waiting after %d claims in a row: %v", holder, maxWaits, g)
						return
					}
					continue
				}
				waits = 0
				job := g["job"].(map[string]any)["id"].(string)
				// A receipt that loses the write to another is retried; a stale lease
				// (also a conflict) never succeeds, hence the bound.
				for try := 1; ; try++ {
					_, te, err := c.call(ctx, "job_done", map[string]any{"run": "g", "job": job, "lease": g["lease"], "status": "ok", "holder": holder})
					if err != nil {
						errs <- err
						return
					}
					if te == nil {
						break
					}
					if te.Kind != "conflict" || try == 10 {
						errs <- fmt.Errorf("%s: done %s (try %d): %+v", holder, job, try, *te)
						return
					}
				}
				done[n] = append(done[n], job)
			}
		}(n, c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var log struct {
		Events []struct {
			Job    string `json:"job"`
			Holder string `json:"holder"`
		} `json:"events"`
	}
	if err := json.Unmarshal(atlas(t, repo, env, "", "--json", "log", "g", "--type", "job_claimed"), &log); err != nil {
		t.Fatal(err)
	}
	granted := map[string][]string{}
	for _, e := range log.Events {
		granted[e.Job] = append(granted[e.Job], e.Holder)
	}
	for i := range jobs {
		if j := fmt.Sprintf("j%02d", i); len(granted[j]) != 1 {
			t.Errorf("job %s granted %d times (%v)", j, len(granted[j]), granted[j])
		}
	}
	var list struct {
		Jobs []struct{ ID, State string } `json:"jobs"`
	}
	if err := json.Unmarshal(atlas(t, repo, env, "", "--json", "job", "list", "g"), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Jobs) != jobs {
		t.Fatalf("%d jobs, want %d", len(list.Jobs), jobs)
	}
	for _, j := range list.Jobs {
		if j.State != "DONE" {
			t.Errorf("job %s is %s, want DONE", j.ID, j.State)
		}
	}
	total := 0
	for _, d := range done {
		total += len(d)
	}
	if total != jobs {
		t.Errorf("the clients finished %d jobs, want %d", total, jobs)
	}
}

// The scripted agent of TestMCPAgentSessionKilled: its session id, its run and the
// file it leaves dirty in its stage's worktree.
const (
	agentSession = "sess-7f3a"
	agentRun     = "feature"
	dirtyName    = "work-in-progress.txt"
)

var dirtyBytes = []byte("half-done work\x00 with a NUL, \xff a stray byte\nand no final newline")

// agentMain is the "agent": it drives one single run over MCP (its own `git-atlas
// mcp` subprocess), dispatches a stage, makes its worktree, writes a file there,
// says READY and waits to be killed.
func agentMain() int {
	ctx := context.Background()
	repo, _ := os.Getwd()
	env := os.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, childVar+"=") {
			env = append(env[:i:i], env[i+1:]...)
			break
		}
	}
	c, err := connect(ctx, repo, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	// The default ten-minute driver lease: the run is still live when the agent dies,
	// and the next session, with the same session id, takes it back at once (docs/contract.md §5.1).
	driver := map[string]any{"holder": "agent-1", "session": agentSession}
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"start", map[string]any{"id": agentRun, "stages": "build,test", "intent": "a feature", "session": agentSession}},
		{"transition", map[string]any{"run": agentRun, "stage": "build", "status": "dispatched"}},
		{"worktree_add", map[string]any{"run": agentRun, "node": "build"}},
	}
	var path string
	for _, s := range steps {
		maps.Copy(s.args, driver)
		out, te, err := c.call(ctx, s.tool, s.args)
		if err != nil || te != nil {
			fmt.Fprintf(os.Stderr, "agent: %s: %v %+v\n", s.tool, err, te)
			return 1
		}
		if s.tool == "worktree_add" {
			path, _ = out["path"].(string)
		}
	}
	if err := os.WriteFile(filepath.Join(path, dirtyName), dirtyBytes, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	fmt.Println("READY " + path)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // mid-stage: wait for the kill
	return 0
}

// TestMCPAgentSessionKilled: an agent drives a single run over MCP and is killed
// (SIGKILL) mid-stage with a dirty worktree. The next session's SessionStart hook
// (a compaction) tells it which run to resume; it resumes over MCP, finds the dirty
// work in a recovery snapshot (restored byte for byte) and finishes the run.
func TestMCPAgentSessionKilled(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()

	agent := exec.Command(os.Args[0])
	agent.Dir = repo
	agent.Env = append(append([]string{}, env...), childVar+"=agent", binVar+"="+atlasBin())
	agent.Stderr = os.Stderr
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := agent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := agent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY ") {
		_ = agent.Process.Kill()
		_ = agent.Wait()
		t.Fatalf("the agent did not get to its stage: %q %v", line, err)
	}
	// The agent and its MCP server die together, as when the agent's process group is
	// killed.
	if err := syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()

	// A new session after a compaction: the hook says what to do.
	payload := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/tmp/t.jsonl","source":"compact","hook_event_name":"SessionStart","cwd":%q}`, agentSession, repo)
	var hook struct {
		Out struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	raw := atlas(t, repo, env, payload, "agent", "hook", "claude")
	if err := json.Unmarshal(raw, &hook); err != nil || hook.Out.Event != "SessionStart" {
		t.Fatalf("hook output %q is not Claude Code's SessionStart output (%v)", raw, err)
	}
	// Its first line is the pointer a compacted session needs (docs/contract.md §6): the run it
	// is still driving, the stage and attempt, and what to do next.
	if !strings.HasPrefix(hook.Out.Context, "git-atlas: you are driving run "+agentRun+" ") || !strings.Contains(hook.Out.Context, "stage build (dispatched), attempt 1; work in ") || !strings.Contains(hook.Out.Context, "; next: ") || !strings.Contains(hook.Out.Context, agentSession) {
		t.Fatalf("the hook does not point the session at its run %s: %q", agentRun, hook.Out.Context)
	}

	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	// As the hook says: resume (the run chosen by the session), over MCP.
	res := c.must(t, ctx, "resume", map[string]any{"session": agentSession})
	if res["run_id"] != agentRun {
		t.Fatalf("resume took run %v, want %s", res["run_id"], agentRun)
	}
	if snaps, _ := res["snapshots"].([]any); len(snaps) != 1 {
		t.Fatalf("resume snapshots %v, want the dirty worktree's", res["snapshots"])
	}
	list := c.must(t, ctx, "recovery_list", map[string]any{"run": agentRun})
	snaps := list["snapshots"].([]any)
	if len(snaps) != 1 {
		t.Fatalf("recovery_list: %v", list)
	}
	id := snaps[0].(map[string]any)["id"].(string)
	show := c.must(t, ctx, "recovery_show", map[string]any{"snapshot": id})
	if !strings.Contains(fmt.Sprint(show["changes"]), dirtyName) {
		t.Fatalf("recovery_show does not list %s: %v", dirtyName, show["changes"])
	}
	to := filepath.Join(t.TempDir(), "restored")
	c.must(t, ctx, "recovery_restore", map[string]any{"snapshot": id, "to": to})
	got, err := os.ReadFile(filepath.Join(to, dirtyName))
	if err != nil || !bytes.Equal(got, dirtyBytes) {
		t.Fatalf("restored %s = %q (%v), want %q", dirtyName, got, err, dirtyBytes)
	}

	next := res["next_action"].(map[string]any)
	if next["action"] != "continue" || next["stage"] != "build" {
		t.Fatalf("next_action %v, want to continue stage build", next)
	}
	// Over MCP the next action's step is a tool call: its tool and arguments, and its
	// command spelled as that call, never a command line (docs/contract.md §4.6).
	args, _ := next["arguments"].(map[string]any)
	if cmd, _ := next["command"].(string); next["tool"] != "transition" || args["run"] != agentRun || args["stage"] != "build" ||
		args["status"] != "passed" || args["lease"] != next["lease"] || !strings.HasPrefix(cmd, `transition {"run":`) || strings.Contains(cmd, "-"+"-") {
		t.Fatalf("next_action %v, want the transition tool call that reports the attempt", next)
	}
	// The compacted session comes back under a new holder name but the same session
	// id: its writes renew the lease it still holds, and the stage token of its
	// attempt is what it reports with.
	driver := map[string]any{"holder": "agent-2", "session": agentSession, "lease": next["lease"]}
	for _, status := range []string{"passed", "completed"} {
		args := map[string]any{"run": agentRun, "stage": "build", "status": status}
		maps.Copy(args, driver)
		c.must(t, ctx, "transition", args)
	}
	fin := c.must(t, ctx, "finish", map[string]any{"run": agentRun, "status": "completed", "reason": "done after a resume", "holder": "agent-2", "session": agentSession})
	if fin["status"] != "completed" {
		t.Fatalf("finish: %v", fin)
	}
	if d := c.must(t, ctx, "resume_detect", map[string]any{}); len(d["resumable_runs"].([]any)) != 0 {
		t.Fatalf("a finished run is still resumable: %v", d)
	}
}

// TestMCPEveryFieldIsAFlag: every input field of every tool becomes a flag or an
// argument its command accepts. Each tool is called with every field set; whatever the
// command then says of the values, the command line must parse (no unknown flag, no
// unexpected argument).
func TestMCPEveryFieldIsAFlag(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	for _, tool := range c.tools {
		var schema jsonschema.Schema
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		args := map[string]any{}
		for name, p := range schema.Properties {
			args[name] = sample(name, p)
		}
		_, te, err := c.call(ctx, tool.Name, args)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if te != nil && te.Kind == "usage" && (strings.Contains(te.Message, "unknown flag") ||
			strings.Contains(te.Message, "unexpected argument") || strings.Contains(te.Message, "expected ") ||
			strings.HasPrefix(te.Message, "invalid arguments")) {
			t.Errorf("%s %v: the command line does not parse: %s", tool.Name, args, te.Message)
		}
	}
}

// sample is a value of the property's type (the first of an enum).
func sample(name string, p *jsonschema.Schema) any {
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	typ := p.Type
	if typ == "" {
		for _, t := range p.Types {
			if t != "null" {
				typ = t
			}
		}
	}
	switch typ {
	case "boolean":
		return true
	case "integer":
		return 1
	case "array":
		if p.Items != nil && p.Items.Type == "object" {
			return []any{map[string]any{"id": "c1"}}
		}
		return []any{"x1"}
	case "object":
		return map[string]any{"k": "v"}
	}
	switch name {
	case "ttl", "verify_timeout", "setup_timeout":
		return "1m"
	case "ignored_cap":
		return "1MiB"
	}
	return "x1"
}

// TestMCPBadLines: malformed lines on the wire (not JSON, a wrong "jsonrpc", a batch,
// an object without method) are each answered with a JSON-RPC parse or
// invalid-request error, and the server keeps serving the requests after them (the
// SDK's own stdio transport ends the connection on the first: go-sdk#1209).
func TestMCPBadLines(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	cmd := exec.Command(atlasBin(), "mcp")
	cmd.Dir = repo
	cmd.Env = env
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not JSON`,
		`{"jsonrpc":"1.0","id":2,"method":"tools/list"}`,
		`[]`,
		`{"jsonrpc":"2.0","id":3}`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list","arguments":{}}}`,
	}
	go func() {
		for _, l := range lines {
			_, _ = io.WriteString(stdin, l+"\n")
		}
	}()
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	// The bad lines are answered in order, each before the next line is read; the
	// good requests' answers may come in any order.
	wantErrors := []struct {
		id   string
		code int
	}{{"null", -32700}, {"2", -32600}, {"null", -32600}, {"3", -32600}, {"null", -32600}, {"null", -32600}}
	var errs []answer
	results := map[string]answer{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for (len(errs) < len(wantErrors) || len(results) < 3) && sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", sc.Text())
		}
		if a.Error != nil {
			errs = append(errs, a)
		} else {
			results[string(a.ID)] = a
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("git-atlas mcp: %v", err)
	}
	if len(errs) != len(wantErrors) {
		t.Fatalf("%d error answers, want %d: %+v", len(errs), len(wantErrors), errs)
	}
	for i, w := range wantErrors {
		if string(errs[i].ID) != w.id || errs[i].Error.Code != w.code {
			t.Errorf("answer %d: id %s code %d, want id %s code %d", i, errs[i].ID, errs[i].Error.Code, w.id, w.code)
		}
	}
	for _, id := range []string{"1", "5", "6"} {
		if results[id].Result == nil {
			t.Errorf("request %s after the bad lines got no result (answers: %v)", id, results)
		}
	}
	var listed struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(results["5"].Result, &listed); err != nil || len(listed.Tools) < len(allTools) {
		t.Errorf("tools/list after the bad lines: %s", results["5"].Result)
	}
}

// TestMCPToolShape checks every tool as tools/list serves it against the MCP
// specification's Tool shape: a name, an inputSchema and an outputSchema that are
// object schemas ("type": "object"), and every subschema at every depth (properties,
// items, additionalProperties, anyOf, ...) a JSON object, never the boolean schemas
// true/false that the official TypeScript SDK's tools/list validation refuses, and
// each naming its type (no schema that allows anything by saying nothing).
func TestMCPToolShape(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	if len(c.tools) < len(allTools) {
		t.Fatalf("%d tools, want %d", len(c.tools), len(allTools))
	}
	for _, tool := range c.tools {
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range toolShapeProblems(doc) {
			t.Errorf("tool %s: %s", tool.Name, p)
		}
	}
}

// toolShapeProblems lists where a tool (as JSON) departs from MCP's Tool shape.
func toolShapeProblems(tool map[string]any) []string {
	var out []string
	if name, _ := tool["name"].(string); name == "" {
		out = append(out, "no name")
	}
	for _, key := range []string{"inputSchema", "outputSchema"} {
		s, present := tool[key]
		if !present && key == "outputSchema" {
			continue
		}
		obj, ok := s.(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%s is %s, not an object", key, jsonOf(s)))
			continue
		}
		if obj["type"] != "object" {
			out = append(out, fmt.Sprintf(`%s has "type" %s, not "object"`, key, jsonOf(obj["type"])))
		}
		if p, ok := obj["properties"]; ok {
			if _, ok := p.(map[string]any); !ok {
				out = append(out, fmt.Sprintf("%s.properties is %s, not an object", key, jsonOf(p)))
			}
		}
		out = append(out, subschemaProblems(key, obj)...)
	}
	return out
}

// subschemaProblems walks every JSON Schema keyword that holds schemas and lists
// those that are not objects.
func subschemaProblems(at string, s map[string]any) []string {
	var out []string
	check := func(where string, v any) {
		obj, ok := v.(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%s is %s, not an object schema", where, jsonOf(v)))
			return
		}
		if typelessSchema(obj) {
			out = append(out, fmt.Sprintf("%s is %s, a schema that names no type", where, jsonOf(v)))
		}
		out = append(out, subschemaProblems(where, obj)...)
	}
	for _, k := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		if m, ok := s[k].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(m)) {
				check(at+"."+k+"."+name, m[name])
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if a, ok := s[k].([]any); ok {
			for i, v := range a {
				check(fmt.Sprintf("%s.%s[%d]", at, k, i), v)
			}
		}
	}
	for _, k := range []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"} {
		v, ok := s[k]
		if !ok {
			continue
		}
		if a, isArray := v.([]any); isArray && k == "items" {
			for i, e := range a {
				check(fmt.Sprintf("%s.items[%d]", at, i), e)
			}
			continue
		}
		check(at+"."+k, v)
	}
	return out
}

// typelessSchema reports whether a schema names no type and combines none that do
// (what jsonschema-go infers for an interface, and marshals as true when it holds
// nothing else).
func typelessSchema(s map[string]any) bool {
	for _, k := range []string{"type", "anyOf", "oneOf", "allOf", "not", "$ref", "enum", "const"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	return true
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A worktree whose setup failed is not ready, and the next action an agent on MCP gets
// is the worktree_setup tool, with the arguments it needs: called as given, once what
// the setup lacked is there, it runs the setup again and the worktree is ready.
func TestMCPSetupRetryIsATool(t *testing.T) {
	t.Parallel()
	dir, env := newRepo(t)
	atlas(t, dir, env, "", "start", "--id", "s", "--stages", "code", "--setup", "test -e go-ahead", "--holder", "me")
	ctx := context.Background()
	c, err := connect(ctx, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	if _, te, err := c.call(ctx, "worktree_add", map[string]any{"run": "s", "node": "code", "holder": "me"}); err != nil || te == nil {
		t.Fatalf("worktree_add with a failing setup: %v %v, want a tool error", te, err)
	}
	plan := c.must(t, ctx, "resume_plan", map[string]any{"run": "s", "holder": "me"})
	next := plan["next_action"].(map[string]any)
	args, _ := next["arguments"].(map[string]any)
	if next["tool"] != "worktree_setup" || args["run"] != "s" || args["node"] != "code" || args["holder"] != "me" {
		t.Fatalf("next_action %v, want the worktree_setup tool for s code as me", next)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "atlas", "worktrees", "s", "code", "go-ahead"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := c.must(t, ctx, "worktree_setup", args)
	if s, _ := res["setup"].(map[string]any); s["outcome"] != "ok" {
		t.Fatalf("worktree_setup as the next action gave it: %v", res)
	}
}
