package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// checker is a request (docs/contract.md §4.6): Check fills its defaults and refuses
// what its operation cannot do.
type checker interface{ Check() error }

// TestRequestChecksRefuse: the checks that lived inline in the operations or in a
// front end are the requests' own, without a repository: each refusal is a usage
// error naming the request's fields ({field}), as every front end then spells them.
func TestRequestChecksRefuse(t *testing.T) {
	t.Parallel()
	keep := 2
	for _, tc := range []struct {
		name string
		req  checker
		want string // the message with fields as {field}
	}{
		{"log: a negative count", &LogRequest{Run: "r", Last: -1}, "{last} must not be negative"},
		{"log: a negative diverged chain", &LogRequest{Run: "r", Diverged: -2}, "{diverged} must not be negative"},
		{"show: a run id the ledger could not hold", &ShowRequest{Run: "../x"}, `invalid run name "../x"`},
		{"heartbeat: a token without its stage", &HeartbeatRequest{Run: "r", Lease: "a#1@1.x", Driver: Driver{Holder: "me"}}, "{lease} is a stage token: it goes with {stage}"},
		{"heartbeat: a negative ttl", &HeartbeatRequest{Run: "r", Driver: Driver{Holder: "me", TTL: -1}}, "{ttl} must be positive"},
		{"event: a type git-atlas writes", &EventRequest{Run: "r", Type: "run_started"}, `event type "run_started" is written by git-atlas itself`},
		{"event: data that is no object", &EventRequest{Run: "r", Type: "note", Data: []byte(`[1]`)}, "{data} must be a JSON object"},
		{"finish: a take-over without a name", &FinishRequest{Run: "r", Status: "stopped", Driver: Driver{TakeOver: true}}, "{take_over} needs {holder}"},
		{"job add: a reserved job name", &JobAddRequest{Run: "g", Job: "union"}, "union"},
		{"job add: a bad kind", &JobAddRequest{Run: "g", Job: "j", Kind: "a b"}, `invalid kind name "a b"`},
		{"job claim: an unknown agent", &JobClaimRequest{Run: "g", Agent: "nobody"}, "nobody"},
		{"job renew: a negative ttl", &JobRenewRequest{Run: "g", Job: "j", Worker: Worker{TTL: -1}}, "{ttl} must be positive"},
		{"reap: a run id the ledger could not hold", &ReapRequest{Run: "a..b"}, `invalid run name "a..b"`},
		{"worktree list: a run id the ledger could not hold", &WorktreeListRequest{Run: "-x"}, `invalid run name "-x"`},
		{"recovery show: no snapshot", &RecoveryShowRequest{}, "{snapshot} names no snapshot"},
		{"recovery restore: a relative destination", &RecoveryRestoreRequest{Snapshot: "x", To: "here"}, `{to} "here" is a relative path`},
		{"recover: a relative patch", &RecoverRequest{Run: "r", Stage: "a", PatchOut: "p.patch"}, `{patch_out} "p.patch" is a relative path`},
		{"transition: a thread of no dispatch", &TransitionRequest{Run: "r", Stage: "a", Status: "passed", ThreadID: "t"}, "{thread_id}, {agent} and {pid} describe a new attempt"},
		{"transition: a negative pid", &TransitionRequest{Run: "r", Stage: "a", Status: "dispatched", PID: -1}, "{pid} must be a process id"},
		{"gc: a size budget without recoveries", &GCRequest{MaxSize: 10}, "{max_size} needs {recoveries}"},
		{"gc: a negative before", &GCRequest{Before: new(-time.Second)}, "{before} must not be negative"},
		{"heartbeat: no holder", &HeartbeatRequest{Run: "r"}, "heartbeat needs {holder}"},
		{"undo: no holder", &UndoRequest{Run: "r", To: 1}, "undo needs {holder}"},
		{"gc: a negative keep-last", &GCRequest{KeepLast: func() *int { n := -1; return &n }()}, "{keep_last} must not be negative"},
		{"land: onto an atlas branch", &LandRequest{Run: "g", Onto: "atlas/g/union"}, "{onto} atlas/g/union: atlas/ branches are git-atlas's own"},
		{"trust: no run", &TrustRevokeRequest{}, "name the run whose commands to trust"},
		{"import: an unknown system", &ImportRequest{System: "other"}, `unknown system "other"`},
		{"path: a run id the ledger could not hold", &PathRequest{Run: ""}, `invalid run name ""`},
		{"gc: keeps a valid request", &GCRequest{KeepLast: &keep, MaxSize: 10, Recoveries: true}, ""},
	} {
		err := tc.req.Check()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%s: got %v, want a usage error", tc.name, err)
			continue
		}
		if msg, _ := fault.Spelled(err, func(f string) string { return "{" + f + "}" }); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %q, want it to hold %q", tc.name, msg, tc.want)
		}
	}
}

// TestRequestChecksFill: Check fills what the operation needs and a front end used
// to fill (the lease's TTL, the verify time limit, the ignored files' cap) and puts
// what it takes into the form the operation writes (a scope canonical, data compact).
func TestRequestChecksFill(t *testing.T) {
	t.Parallel()
	hb := HeartbeatRequest{Run: "r", Driver: Driver{Holder: "me"}}
	fin := FinishRequest{Run: "r", Status: "stopped"}
	renew := JobRenewRequest{Run: "g", Job: "j"}
	ev := EventRequest{Run: "r", Type: "note", Data: []byte(` {"b": 1,  "a": 2} `)}
	add := JobAddRequest{Run: "g", Job: "j", Scope: []string{"./src/"}}
	gc := GCRequest{}
	for _, c := range []checker{&hb, &fin, &renew, &ev, &add, &gc} {
		if err := c.Check(); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	if hb.Driver.TTL != ledger.DefaultDriverTTL || fin.Driver.TTL != ledger.DefaultDriverTTL || renew.Worker.TTL != ledger.DefaultDriverTTL {
		t.Errorf("lease TTLs %s, %s, %s: want the default %s", hb.Driver.TTL, fin.Driver.TTL, renew.Worker.TTL, ledger.DefaultDriverTTL)
	}
	if string(ev.Data) != `{"a":2,"b":1}` {
		t.Errorf("event data %s: want the object, compact", ev.Data)
	}
	want, err := ledger.CanonicalScope([]string{"./src/"})
	if err != nil || strings.Join(add.Scope, ",") != strings.Join(want, ",") || add.Scope[0] == "./src/" {
		t.Errorf("job scope %q: want it canonical (%q, %v)", add.Scope, want, err)
	}
	if gc.Snapshot.IgnoredCap <= 0 {
		t.Errorf("gc's ignored cap %d: want the default", gc.Snapshot.IgnoredCap)
	}
}

// TestHolderChecksNameTheirStep: heartbeat and undo need a named driver, and their
// requests' Check says so with the step to take, whichever front end calls.
func TestHolderChecksNameTheirStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		req  checker
		want string
	}{
		{&HeartbeatRequest{Run: "r"}, "heartbeat run=r holder=NAME"},
		{&UndoRequest{Run: "r", To: 3}, "undo run=r to=3 holder=NAME"},
	} {
		err := tc.req.Check()
		_, hint := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }, Step: stepWords})
		if !errors.Is(err, fault.ErrUsage) || hint != tc.want {
			t.Errorf("%T: %v, hint %q; want a usage error with the hint %q", tc.req, err, hint, tc.want)
		}
	}
}

// stepWords is a step as its operation and fields, name=value.
func stepWords(s fault.Step) string {
	out := s.Op
	for _, f := range s.Fields {
		out += fmt.Sprintf(" %s=%v", f.Name, f.Value)
	}
	return out
}
