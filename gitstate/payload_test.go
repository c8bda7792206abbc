package gitstate

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

const sha40 = "0123456789abcdef0123456789abcdef01234567"

// oid40 is sha40 as the payloads hold it.
var oid40, _ = git.ParseOID(sha40)

// previousRelease is, for every event type the catalogue gives a payload, the data
// the release before typed payloads wrote (literal JSON, as its maps encoded it:
// keys sorted; undone and the driver changes as their structs did), and the struct
// it must decode into. A type written in several shapes has a line per shape.
var previousRelease = []struct {
	typ  ledger.EventType
	data string
	want any
}{
	{ledger.EventRunStarted, `{"baseline":"` + sha40 + `"}`, &ledger.RunStartedData{Baseline: oid40}},
	{ledger.EventRunStarted, `{"baseline":"","imported_from":"agenteam"}`, &ledger.RunStartedData{ImportedFrom: "agenteam"}},
	{ledger.EventRunFinished, `{"from":"running","reason":"","status":"failed"}`, &ledger.RunFinishedData{From: "running", Status: "failed"}},
	{ledger.EventRunFinished, `{"accepted_unresolved":["c1"],"approved_by":"pat","from":"running","outside_scope":{"a":["x.go"]},"reason":"ok","status":"completed","verdict":{"verdict":"unresolved","resolved":[],"unverified":[],"unresolved":["c1"]}}`,
		&ledger.RunFinishedData{AcceptedUnresolved: []string{"c1"}, ApprovedBy: "pat", From: "running", OutsideScope: map[string][]string{"a": {"x.go"}}, Reason: "ok", Status: "completed",
			Verdict: &ledger.Verdict{Verdict: "unresolved", Resolved: []string{}, Unverified: []string{}, Unresolved: []string{"c1"}}}},
	{ledger.EventStageTransition, `{"agent":"claude","attempt":1,"baseline":"` + sha40 + `","from":"pending","host":"box","lease":"code#1@1.a1","pid":42,"reason":"","thread_id":"t1","to":"dispatched"}`,
		&ledger.StageTransitionData{Agent: "claude", Attempt: 1, Baseline: oid40, From: "pending", Host: "box", Lease: "code#1@1.a1", PID: 42, ThreadID: "t1", To: "dispatched"}},
	{ledger.EventStageTransition, `{"allowed_outside_scope":["x.go"],"approved_by":"pat","from":"verifying","reason":"","run_reason":"","run_status":"completed","to":"passed","verified":false}`,
		&ledger.StageTransitionData{AllowedOutsideScope: []string{"x.go"}, ApprovedBy: "pat", From: "verifying", RunEnded: &ledger.RunEnded{RunStatus: "completed"}, To: "passed", Verified: new(false)}},
	{ledger.EventStageTransition, `{"from":"dispatched","reason":"","to":"passed","verified":true,"verify":{"command":"make test","exit_code":0,"passed":true,"at":"2026-01-01T00:00:00Z"}}`,
		&ledger.StageTransitionData{From: "dispatched", To: "passed", Verified: new(true), Verify: &ledger.VerifyResult{Command: "make test", Passed: true, At: "2026-01-01T00:00:00Z"}}},
	{ledger.EventJobAdded, `{"allow_overlap":false,"criteria":null,"kind":"","needs":["a"],"scope":["src/"],"verify":"make"}`,
		&ledger.JobAddedData{Needs: []string{"a"}, Scope: []string{"src/"}, Verify: "make"}},
	{ledger.EventJobClaimed, `{"agent":"codex","attempt":2,"expires_at":"2026-01-01T00:10:00Z","gas_limit":10,"gas_spent":3,"lease":"j#2@1.b2","thread_id":"t"}`,
		&ledger.JobClaimedData{Agent: "codex", Attempt: 2, ExpiresAt: "2026-01-01T00:10:00Z", GasLimit: 10, GasSpent: 3, Lease: "j#2@1.b2", ThreadID: "t"}},
	{ledger.EventJobRenewed, `{"expires_at":"2026-01-01T00:10:00Z","lease":"j#2@1.b2"}`, &ledger.JobRenewedData{ExpiresAt: "2026-01-01T00:10:00Z", Lease: "j#2@1.b2"}},
	{ledger.EventJobDone, `{"attempts":1,"cascaded":["c"],"children":["k"],"data":{"note":"x"},"from":"RUNNING","lease":"a#1@1.c","status":"ok","to":"DONE","verify_owed":true}`,
		&ledger.JobDoneData{Attempts: 1, Cascaded: []string{"c"}, Children: []string{"k"}, Data: json.RawMessage(`{"note":"x"}`), From: "RUNNING", Lease: "a#1@1.c", Status: "ok", To: "DONE", VerifyOwed: true}},
	{ledger.EventJobReaped, `{"jobs":[{"id":"a","lease":"a#1@1.c","to":"PENDING","attempts":1,"cascaded":[]}],"reason":"finish --force"}`,
		&ledger.JobReapedData{Jobs: []ledger.ReapedJob{{ID: "a", Lease: "a#1@1.c", To: "PENDING", Attempts: 1, Cascaded: []string{}}}, Reason: "finish --force"}},
	{ledger.EventJobVerified, `{"attempts":1,"exit_code":1,"lease":"a#1@1.c","passed":false,"tail":"boom\n","timed_out":false,"to":"FAILED"}`,
		&ledger.JobVerifiedData{Attempts: 1, ExitCode: 1, Lease: "a#1@1.c", Tail: "boom\n", To: "FAILED"}},
	{ledger.EventWorktreeAdded, `{"baseline":"` + sha40 + `","branch":"atlas/r/n","head":"` + sha40 + `","node":"n","path":"/w/n","ports":[4000],"recreated":true,"reset_from":"` + sha40 + `"}`,
		&ledger.WorktreeAddedData{Baseline: oid40, Branch: "atlas/r/n", Head: oid40, Node: "n", Path: "/w/n", Ports: []int{4000}, Recreated: true, ResetFrom: oid40}},
	{ledger.EventWorktreeRemoved, `{"ignored_deleted":[{"path":"node_modules","dir":true,"files":3,"size":10,"included":0}],"node":"n","path":"/w/n","reasons":null,"snapshot":"s1"}`,
		&ledger.WorktreeRemovedData{IgnoredDeleted: []ledger.IgnoredFile{{Path: "node_modules", Dir: true, Files: 3, Size: 10}}, Node: "n", Path: "/w/n", Snapshot: "s1"}},
	{ledger.EventWorktreeUntrusted, `{"branch":"atlas/r/n","checked_out":"main","head":"` + sha40 + `","node":"n","path":"/w/n","reason":"HEAD left its branch"}`,
		&ledger.WorktreeUntrustedData{Branch: "atlas/r/n", CheckedOut: "main", Head: oid40, Node: "n", Path: "/w/n", Reason: "HEAD left its branch"}},
	{ledger.EventWorktreeAdopted, `{"dirty":true,"path":"/src/wt","snapshot":""}`, &ledger.WorktreeAdoptedData{Dirty: true, Path: "/src/wt"}},
	{ledger.EventWorktreeSetup, `{"command":"npm ci","exit_code":0,"node":"n","outcome":"ok","tail":""}`, &ledger.WorktreeSetupData{Command: "npm ci", Node: "n", Outcome: "ok"}},
	{ledger.EventWorktreePorts, `{"node":"n","ports":[20000,20001]}`, &ledger.WorktreePortsData{Node: "n", Ports: []int{20000, 20001}}},
	{ledger.EventStageRecovered, `{"apply":true,"baseline":"` + sha40 + `","branch":"atlas/r/replay","ports":[20002],"snapshot":"s1","source":"worktree","worktree":"/w/r"}`,
		&ledger.StageRecoveredData{Apply: true, Baseline: oid40, Branch: "atlas/r/replay", Ports: []int{20002}, Snapshot: "s1", Source: "worktree", Worktree: "/w/r"}},
	{ledger.EventUnionBuilt, `{"conflicted":{},"head":"` + sha40 + `","integrated":["a"],"missing":[],"path":"/w/union","ports":[20004,20005]}`,
		&ledger.UnionBuiltData{Conflicted: map[string][]string{}, Head: oid40, Integrated: []string{"a"}, Missing: []string{}, Path: "/w/union", Ports: []int{20004, 20005}}},
	{ledger.EventSnapshot, `{"baseline":"` + sha40 + `","commit":"` + sha40 + `","head":"` + sha40 + `","id":"s1","node":"n","patch":"/p/s1.patch","reason":"remove","ref":"refs/atlas/snapshots/r/s1","source":"worktree"}`,
		&ledger.SnapshotData{Baseline: oid40, Commit: oid40, Head: oid40, ID: "s1", Node: "n", Patch: "/p/s1.patch", Reason: "remove", Ref: "refs/atlas/snapshots/r/s1", Source: "worktree"}},
	{ledger.EventStageRecovered, `{"apply":false,"baseline":"` + sha40 + `","branch":"atlas/r/replay","snapshot":"s1","source":"checkout","worktree":""}`,
		&ledger.StageRecoveredData{Baseline: oid40, Branch: "atlas/r/replay", Snapshot: "s1", Source: "checkout"}},
	{ledger.EventUnionBuilt, `{"allowed_outside_scope":{"a":["x"]},"approved_by":"pat","conflicted":{},"head":"` + sha40 + `","integrated":["a"],"kept":{},"missing":[],"outside_scope":{"b":["y"]},"path":"/w/union"}`,
		&ledger.UnionBuiltData{AllowedOutsideScope: map[string][]string{"a": {"x"}}, ApprovedBy: "pat", Conflicted: map[string][]string{}, Head: oid40, Integrated: []string{"a"},
			Kept: &ledger.KeptTip{}, Missing: []string{}, OutsideScope: map[string][]string{"b": {"y"}}, Path: "/w/union"}},
	{ledger.EventUnionBuilt, `{"conflicted":{},"head":"` + sha40 + `","integrated":[],"kept":{"commit":"` + sha40 + `","ref":"refs/atlas/snapshots/r/union-kept-0123456789ab"},"missing":[],"path":"/w/union"}`,
		&ledger.UnionBuiltData{Conflicted: map[string][]string{}, Head: oid40, Integrated: []string{}, Kept: &ledger.KeptTip{Commit: oid40, Ref: "refs/atlas/snapshots/r/union-kept-0123456789ab"}, Missing: []string{}, Path: "/w/union"}},
	{ledger.EventUnionBuilt, `{"conflicted":{"b":["f"]},"head":"` + sha40 + `","integrated":null,"missing":["c"],"path":"/w/union"}`,
		&ledger.UnionBuiltData{Conflicted: map[string][]string{"b": {"f"}}, Head: oid40, Missing: []string{"c"}, Path: "/w/union"}},
	{ledger.EventUnionVerified, `{"exit_code":0,"head":"` + sha40 + `","passed":true,"tail":"ok\n","timed_out":false}`, &ledger.UnionVerifiedData{Head: oid40, Passed: true, Tail: "ok\n"}},
	{ledger.EventUndone, `{"to":3,"from":7,"epoch":2,"reset_jobs":[],"kept":["gas_spent"]}`, &ledger.UndoneData{To: 3, From: 7, Epoch: 2, ResetJobs: []string{}, Kept: []string{"gas_spent"}}},
	{ledger.EventHeartbeat, `{}`, &ledger.HeartbeatData{}},
	{ledger.EventHeartbeat, `{"attempt":1,"expires_at":"2026-01-01T00:10:00Z"}`, &ledger.HeartbeatData{Attempt: 1, ExpiresAt: "2026-01-01T00:10:00Z"}},
	{ledger.EventDriverTakenOver, `{"old":{"holder":"a","session":"k","expires_at":"2026-01-01T00:10:00Z"},"new":{"holder":"b","expires_at":"2026-01-01T00:20:00Z"}}`,
		&ledger.DriverChangeData{Old: ledger.Lease{Holder: "a", Session: "k", ExpiresAt: "2026-01-01T00:10:00Z"}, New: ledger.Lease{Holder: "b", ExpiresAt: "2026-01-01T00:20:00Z"}}},
	{ledger.EventDriverRenamed, `{"old":{"holder":"a","expires_at":"2026-01-01T00:10:00Z"},"new":{"holder":"a-2","expires_at":"2026-01-01T00:20:00Z"}}`,
		&ledger.DriverChangeData{Old: ledger.Lease{Holder: "a", ExpiresAt: "2026-01-01T00:10:00Z"}, New: ledger.Lease{Holder: "a-2", ExpiresAt: "2026-01-01T00:20:00Z"}}},
	{ledger.EventResumed, `{"driver":{"holder":"a","expires_at":"2026-01-01T00:10:00Z"},"epoch":1,"from_epoch":1,"recreated_worktrees":[],"reset_jobs":[],"snapshots":[]}`,
		&ledger.ResumedData{Driver: &ledger.Lease{Holder: "a", ExpiresAt: "2026-01-01T00:10:00Z"}, Epoch: 1, FromEpoch: 1, RecreatedWorktrees: []string{}, ResetJobs: []string{}, Snapshots: []string{}}},
	{ledger.EventResumed, `{"driver_taken_over":{"holder":"b","expires_at":"2026-01-01T00:10:00Z"},"epoch":2,"from_epoch":1,"recreated_worktrees":null,"reset_jobs":["j"],"snapshots":["s"]}`,
		&ledger.ResumedData{DriverTakenOver: &ledger.Lease{Holder: "b", ExpiresAt: "2026-01-01T00:10:00Z"}, Epoch: 2, FromEpoch: 1, ResetJobs: []string{"j"}, Snapshots: []string{"s"}}},
	{ledger.EventStageResumed, `{"action":"no-verify"}`, &ledger.StageResumedData{Action: "no-verify"}},
	{ledger.EventStageResumed, `{"action":"advance","exit_code":0,"timed_out":false,"verify_result":"pass"}`,
		&ledger.StageResumedData{Action: "advance", StageVerified: &ledger.StageVerified{VerifyResult: "pass"}}},
	{ledger.EventImported, `{"current_state":"CODED","job_ids":{},"refine_passes":0,"reset_jobs":null,"source":"/k/r"}`,
		&ledger.ImportedData{ImportedKimi: &ledger.ImportedKimi{CurrentState: "CODED", JobIDs: map[string]string{}}, Source: "/k/r"}},
	{ledger.EventImported, `{"source":"/a/state/r.json","status":"running","verify_safe_in_source":null}`,
		&ledger.ImportedData{Source: "/a/state/r.json", ImportedAgenTeam: &ledger.ImportedAgenTeam{Status: "running"}}},
	{ledger.EventImportedStage, `{"source_stage":"VERIFIED","verdict":{"ok":true}}`, &ledger.ImportedStageData{SourceStage: "VERIFIED", Verdict: json.RawMessage(`{"ok":true}`)}},
	{ledger.EventImportedEvent, `{"source":null}`, &ledger.ImportedEventData{Source: json.RawMessage(`null`)}},
	{ledger.EventImportedEvent, `{"source":{"x":1}}`, &ledger.ImportedEventData{Source: json.RawMessage(`{"x":1}`)}},
	{ledger.EventRunTakenOver, `{"by":"pat","from":"agenteam","pipeline_mode":"standalone"}`, &ledger.RunTakenOverData{By: "pat", From: "agenteam", PipelineMode: "standalone"}},
	{ledger.EventLanded, `{"accepted_unresolved":[],"approved_by":"pat","branch":"main","how":"merge","new":"` + sha40 + `","old":"` + sha40 + `","union":"` + sha40 + `"}`,
		&ledger.LandedData{AcceptedUnresolved: []string{}, ApprovedBy: "pat", Branch: "main", How: "merge", New: oid40, Old: oid40, Union: oid40}},
}

// TestPreviousReleasePayloadsRead: a ledger the previous release wrote, one event of
// every payload shape, still reads: each event's data decodes into its catalogue
// struct with the same values, and that struct encodes back to the same bytes (what
// the constructors now write is what the maps wrote). Every type with a payload is
// in the table.
func TestPreviousReleasePayloadsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "old")
	seen := map[ledger.EventType]bool{}
	for _, tc := range previousRelease {
		seen[tc.typ] = true
		if _, err := s.Update(ctx, "old", func(r *ledger.Run) (*Change, error) {
			return &Change{Event: ledger.Event{Type: tc.typ, Data: json.RawMessage(tc.data)}}, nil
		}); err != nil {
			t.Fatalf("%s %s: %v", tc.typ, tc.data, err)
		}
	}
	for _, e := range ledger.Events() {
		if e.Payload != nil && !seen[e.Type] {
			t.Errorf("%s has no payload in the previous release's table", e.Type)
		}
	}
	events, err := s.Log(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	events = events[1:] // run_started of newRun
	if len(events) != len(previousRelease) {
		t.Fatalf("%d events, want %d", len(events), len(previousRelease))
	}
	for i, tc := range previousRelease {
		e := &events[i]
		if string(e.Data) != tc.data {
			t.Errorf("%s data read back as %s", tc.typ, e.Data)
		}
		got, err := e.Payload()
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.data, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s decoded as %+v, want %+v", tc.typ, tc.data, got, tc.want)
		}
		b, err := json.Marshal(reflect.ValueOf(got).Elem().Interface())
		if err != nil || string(b) != tc.data {
			t.Errorf("%s encodes as %s (%v), the previous release wrote %s", tc.typ, b, err, tc.data)
		}
	}
}

// A constructor given a payload without a required member makes an event no write
// accepts: the store refuses it and nothing is written.
func TestWriteRefusesMissingMember(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	before := newRun(t, s, "r")
	_, err := s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
		return &Change{Event: ledger.JobClaimedEvent(ledger.About{Job: "a"}, ledger.JobClaimedData{Attempt: 1, ExpiresAt: "2026-01-01T00:10:00Z"})}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "job_claimed data has no lease") {
		t.Fatalf("Update = %v", err)
	}
	after, err := s.Load(ctx, "r")
	if err != nil || after.Tip != before.Tip {
		t.Fatalf("the run moved from %s to %s (%v)", before.Tip, after.Tip, err)
	}
}

// An event whose data has the wrong shape (written by hand, or by a broken release)
// makes that run's log unreadable, naming the event and the member; other runs read.
func TestLogReportsPayloadOfTheWrongShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t, repoKinds[0])
	s := New(repo)
	newRun(t, s, "good")
	bad := newRun(t, s, "bad")
	blob, err := repo.WriteBlob(ctx, []byte(`{"schema":1,"seq":2,"type":"job_claimed","time":"2026-01-01T00:00:00Z","epoch":0,"data":{"expires_at":"x","lease":["l"]}}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	hdr := run(t, repo.TopLevel, "rev-parse", bad.Tip+":run.json")
	st := run(t, repo.TopLevel, "rev-parse", bad.Tip+":state.json")
	tree, err := repo.WriteTree(ctx, []git.TreeEntry{{Name: "run.json", Blob: hdr}, {Name: "state.json", Blob: st}, {Name: "event.json", Blob: blob.String()}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.WriteCommit(ctx, tree, []git.OID{mustOID(t, bad.Tip)}, "atlas: job_claimed bad")
	if err != nil {
		t.Fatal(err)
	}
	run(t, repo.TopLevel, "update-ref", RunRef("bad"), c.String())
	_, err = s.Log(ctx, "bad")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "run bad is unreadable: event 2: job_claimed data member lease is array, not a string") {
		t.Fatalf("Log = %v", err)
	}
	if _, err := s.Log(ctx, "good"); err != nil {
		t.Fatalf("the healthy run: %v", err)
	}
}
