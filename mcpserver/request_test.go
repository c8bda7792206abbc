package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// decodeTool decodes args as tool name's input into its request, as a call does.
func decodeTool(t *testing.T, name, args, dir, session string) (any, error) {
	t.Helper()
	for _, tl := range tools() {
		if tl.name != name {
			continue
		}
		fields, err := wireFields(tl.in)
		if err != nil {
			t.Fatal(err)
		}
		s, err := inputSchema(tl.in)
		if err != nil {
			t.Fatal(err)
		}
		resolved, err := objectsOnly(s).Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		w, uerr := decodeInput(json.RawMessage(args), wireType(fields), fields, resolved)
		if uerr != nil {
			return nil, uerr
		}
		req, err := request(tl.in, fields, w, dir, session)
		return req.Interface(), err
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

// TestToolInputIsTheRequest: a tool's arguments decode straight into its operation's
// request: the shared parts inline, a duration and a size in their wire forms, a path
// made the repository's, an absent session the server's, JSON kept as given, and the
// front end's facts (an agent reads the result; no person stands behind the call).
func TestToolInputIsTheRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, args string
		want       any
	}{
		{"start", `{"id":"r","criterion":["c"],"stages":"a,b","pipeline":"p.json","config":["/abs/c.json","c.json"],"setup":"make","setup_timeout":"90s","holder":"me","ttl":"1h","take_over":true}`,
			ops.StartRequest{ID: "r", Criteria: []string{"c"}, StageList: "a,b", Pipeline: "/repo/p.json", ConfigFiles: []string{"/abs/c.json", "/repo/c.json"},
				Setup: "make", SetupTimeout: 90 * time.Second, Driver: ops.Driver{Holder: "me", Session: "s0", TakeOver: true, TTL: time.Hour}}},
		{"resume", `{"run":"r","verify_timeout":"2m","on_verify_fail":"stop","ignored_cap":"1KiB"}`,
			ops.ResumeRequest{RunID: "r", Session: "s0", VerifyTimeout: 2 * time.Minute, OnVerifyFail: "stop", ForAgent: true, Snapshot: ops.SnapshotOptions{IgnoredCap: 1024}}},
		{"job_done", `{"run":"g","job":"j","lease":"t","status":"ok","data":{"b":1,"a":"<"},"children":[{"id":"c1"}],"holder":"w","ttl":"5m"}`,
			ops.JobDoneRequest{Run: "g", Job: "j", Lease: "t", Status: "ok", Data: json.RawMessage(`{"a":"\u003c","b":1}`),
				ChildrenJSON: json.RawMessage(`[{"id":"c1"}]`), Worker: ops.Worker{Holder: "w", TTL: 5 * time.Minute}, ForAgent: true}},
		{"transition", `{"run":"r","stage":"a","status":"passed","session":"mine"}`,
			ops.TransitionRequest{Run: "r", Stage: "a", Status: "passed", Driver: ops.Driver{Session: "mine"}, Person: ops.Person{Via: ops.ViaMCP}, ForAgent: true}},
	} {
		got, err := decodeTool(t, tc.tool, tc.args, "/repo", "s0")
		if err != nil {
			t.Errorf("%s %s: %v", tc.tool, tc.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.tool, tc.args, got, tc.want)
		}
	}
}

// TestToolInputRefusals: what a request does not put on the wire is an unknown
// argument (a person's step, what the front end is), and a value in a wrong wire form
// is refused naming the argument.
func TestToolInputRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"union", `{"run":"r","allow_outside_scope":["j"]}`, `unknown argument "allow_outside_scope"`},
		{"finish", `{"run":"r","status":"completed","accept_unresolved":true}`, `unknown argument "accept_unresolved"`},
		{"transition", `{"run":"r","stage":"a","status":"passed","for_agent":false}`, `unknown argument "for_agent"`},
		{"start", `{"stages":"a","stage_list":"a"}`, `unknown argument "stage_list"`},
		{"job_claim", `{"run":"g","ttl":"soon"}`, `{ttl} must be a duration such as 10m or 90s (got "soon")`},
		{"union", `{"run":"r","verify_timeout":"0s"}`, `{verify_timeout} must be a positive duration (got 0s)`},
		{"recover", `{"run":"r","stage":"a","ignored_cap":"lots"}`, `{ignored_cap} must be a positive size`},
	} {
		_, err := decodeTool(t, tc.tool, tc.args, "/repo", "")
		msg := ""
		if err != nil {
			msg, _ = fault.Spelled(err, func(f string) string { return "{" + f + "}" })
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.tool, tc.args, err, tc.want)
		}
	}
}

// TestEveryToolHasItsRequest: every tool's request puts each argument on the wire
// once and describes it.
func TestEveryToolHasItsRequest(t *testing.T) {
	t.Parallel()
	for _, tl := range tools() {
		if _, err := inputSchema(tl.in); err != nil {
			t.Errorf("%s: %v", tl.name, err)
		}
	}
}
