package gitstate

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
)

const sha40 = "0123456789abcdef0123456789abcdef01234567"

// oid40 is sha40 as the payloads hold it.
var oid40, _ = git.ParseOID(sha40)

// previousRelease is, for every event type the catalogue gives a payload, the data
// the release before typed payloads wrote (literal JSON, as its maps encoded it:
// keys sorted; undone and the driver changes as their structs did), and the struct
// it must decode into. A type written in several shapes has a line per shape.
var previousRelease = []struct {
	typ  EventType
	data string
	want any
}{
	{EventRunStarted, `{"baseline":"` + sha40 + `"}`, &RunStartedData{Baseline: oid40}},
	{EventRunStarted, `{"baseline":"","imported_from":"agenteam"}`, &RunStartedData{ImportedFrom: "agenteam"}},
	{EventRunFinished, `{"from":"running","reason":"","status":"failed"}`, &RunFinishedData{From: "running", Status: "failed"}},
	{EventRunFinished, `{"accepted_unresolved":["c1"],"approved_by":"pat","from":"running","outside_scope":{"a":["x.go"]},"reason":"ok","status":"completed","verdict":{"verdict":"unresolved","resolved":[],"unverified":[],"unresolved":["c1"]}}`,
		&RunFinishedData{AcceptedUnresolved: []string{"c1"}, ApprovedBy: "pat", From: "running", OutsideScope: map[string][]string{"a": {"x.go"}}, Reason: "ok", Status: "completed",
			Verdict: &Verdict{Verdict: "unresolved", Resolved: []string{}, Unverified: []string{}, Unresolved: []string{"c1"}}}},
	{EventStageTransition, `{"agent":"claude","attempt":1,"baseline":"` + sha40 + `","from":"pending","host":"box","lease":"code#1@1.a1","pid":42,"reason":"","thread_id":"t1","to":"dispatched"}`,
		&StageTransitionData{Agent: "claude", Attempt: 1, Baseline: oid40, From: "pending", Host: "box", Lease: "code#1@1.a1", PID: 42, ThreadID: "t1", To: "dispatched"}},
	{EventStageTransition, `{"allowed_outside_scope":["x.go"],"approved_by":"pat","from":"verifying","reason":"","run_reason":"","run_status":"completed","to":"passed","verified":false}`,
		&StageTransitionData{AllowedOutsideScope: []string{"x.go"}, ApprovedBy: "pat", From: "verifying", RunEnded: &RunEnded{RunStatus: "completed"}, To: "passed", Verified: new(false)}},
	{EventStageTransition, `{"from":"dispatched","reason":"","to":"passed","verified":true,"verify":{"command":"make test","exit_code":0,"passed":true,"at":"2026-01-01T00:00:00Z"}}`,
		&StageTransitionData{From: "dispatched", To: "passed", Verified: new(true), Verify: &VerifyResult{Command: "make test", Passed: true, At: "2026-01-01T00:00:00Z"}}},
	{EventJobAdded, `{"allow_overlap":false,"criteria":null,"kind":"","needs":["a"],"scope":["src/"],"verify":"make"}`,
		&JobAddedData{Needs: []string{"a"}, Scope: []string{"src/"}, Verify: "make"}},
	{EventJobClaimed, `{"agent":"codex","attempt":2,"expires_at":"2026-01-01T00:10:00Z","gas_limit":10,"gas_spent":3,"lease":"j#2@1.b2","thread_id":"t"}`,
		&JobClaimedData{Agent: "codex", Attempt: 2, ExpiresAt: "2026-01-01T00:10:00Z", GasLimit: 10, GasSpent: 3, Lease: "j#2@1.b2", ThreadID: "t"}},
	{EventJobRenewed, `{"expires_at":"2026-01-01T00:10:00Z","lease":"j#2@1.b2"}`, &JobRenewedData{ExpiresAt: "2026-01-01T00:10:00Z", Lease: "j#2@1.b2"}},
	{EventJobDone, `{"attempts":1,"cascaded":["c"],"children":["k"],"data":{"note":"x"},"from":"RUNNING","lease":"a#1@1.c","status":"ok","to":"DONE","verify_owed":true}`,
		&JobDoneData{Attempts: 1, Cascaded: []string{"c"}, Children: []string{"k"}, Data: json.RawMessage(`{"note":"x"}`), From: "RUNNING", Lease: "a#1@1.c", Status: "ok", To: "DONE", VerifyOwed: true}},
	{EventJobReaped, `{"jobs":[{"id":"a","lease":"a#1@1.c","to":"PENDING","attempts":1,"cascaded":[]}],"reason":"finish --force"}`,
		&JobReapedData{Jobs: []ReapedJob{{ID: "a", Lease: "a#1@1.c", To: "PENDING", Attempts: 1, Cascaded: []string{}}}, Reason: "finish --force"}},
	{EventJobVerified, `{"attempts":1,"exit_code":1,"lease":"a#1@1.c","passed":false,"tail":"boom\n","timed_out":false,"to":"FAILED"}`,
		&JobVerifiedData{Attempts: 1, ExitCode: 1, Lease: "a#1@1.c", Tail: "boom\n", To: "FAILED"}},
	{EventWorktreeAdded, `{"baseline":"` + sha40 + `","branch":"atlas/r/n","head":"` + sha40 + `","node":"n","path":"/w/n","ports":[4000],"recreated":true,"reset_from":"` + sha40 + `"}`,
		&WorktreeAddedData{Baseline: oid40, Branch: "atlas/r/n", Head: oid40, Node: "n", Path: "/w/n", Ports: []int{4000}, Recreated: true, ResetFrom: oid40}},
	{EventWorktreeRemoved, `{"ignored_deleted":[{"path":"node_modules","dir":true,"files":3,"size":10,"included":0}],"node":"n","path":"/w/n","reasons":null,"snapshot":"s1"}`,
		&WorktreeRemovedData{IgnoredDeleted: []IgnoredFile{{Path: "node_modules", Dir: true, Files: 3, Size: 10}}, Node: "n", Path: "/w/n", Snapshot: "s1"}},
	{EventWorktreeUntrusted, `{"branch":"atlas/r/n","checked_out":"main","head":"` + sha40 + `","node":"n","path":"/w/n","reason":"HEAD left its branch"}`,
		&WorktreeUntrustedData{Branch: "atlas/r/n", CheckedOut: "main", Head: oid40, Node: "n", Path: "/w/n", Reason: "HEAD left its branch"}},
	{EventWorktreeAdopted, `{"dirty":true,"path":"/src/wt","snapshot":""}`, &WorktreeAdoptedData{Dirty: true, Path: "/src/wt"}},
	{EventWorktreeSetup, `{"command":"npm ci","exit_code":0,"node":"n","outcome":"ok","tail":""}`, &WorktreeSetupData{Command: "npm ci", Node: "n", Outcome: "ok"}},
	{EventWorktreePorts, `{"node":"n","ports":[20000,20001]}`, &WorktreePortsData{Node: "n", Ports: []int{20000, 20001}}},
	{EventStageRecovered, `{"apply":true,"baseline":"` + sha40 + `","branch":"atlas/r/replay","ports":[20002],"snapshot":"s1","source":"worktree","worktree":"/w/r"}`,
		&StageRecoveredData{Apply: true, Baseline: oid40, Branch: "atlas/r/replay", Ports: []int{20002}, Snapshot: "s1", Source: "worktree", Worktree: "/w/r"}},
	{EventUnionBuilt, `{"conflicted":{},"head":"` + sha40 + `","integrated":["a"],"missing":[],"path":"/w/union","ports":[20004,20005]}`,
		&UnionBuiltData{Conflicted: map[string][]string{}, Head: oid40, Integrated: []string{"a"}, Missing: []string{}, Path: "/w/union", Ports: []int{20004, 20005}}},
	{EventSnapshot, `{"baseline":"` + sha40 + `","commit":"` + sha40 + `","head":"` + sha40 + `","id":"s1","node":"n","patch":"/p/s1.patch","reason":"remove","ref":"refs/atlas/snapshots/r/s1","source":"worktree"}`,
		&SnapshotData{Baseline: oid40, Commit: oid40, Head: oid40, ID: "s1", Node: "n", Patch: "/p/s1.patch", Reason: "remove", Ref: "refs/atlas/snapshots/r/s1", Source: "worktree"}},
	{EventStageRecovered, `{"apply":false,"baseline":"` + sha40 + `","branch":"atlas/r/replay","snapshot":"s1","source":"checkout","worktree":""}`,
		&StageRecoveredData{Baseline: oid40, Branch: "atlas/r/replay", Snapshot: "s1", Source: "checkout"}},
	{EventUnionBuilt, `{"allowed_outside_scope":{"a":["x"]},"approved_by":"pat","conflicted":{},"head":"` + sha40 + `","integrated":["a"],"kept":{},"missing":[],"outside_scope":{"b":["y"]},"path":"/w/union"}`,
		&UnionBuiltData{AllowedOutsideScope: map[string][]string{"a": {"x"}}, ApprovedBy: "pat", Conflicted: map[string][]string{}, Head: oid40, Integrated: []string{"a"},
			Kept: &KeptTip{}, Missing: []string{}, OutsideScope: map[string][]string{"b": {"y"}}, Path: "/w/union"}},
	{EventUnionBuilt, `{"conflicted":{},"head":"` + sha40 + `","integrated":[],"kept":{"commit":"` + sha40 + `","ref":"refs/atlas/snapshots/r/union-kept-0123456789ab"},"missing":[],"path":"/w/union"}`,
		&UnionBuiltData{Conflicted: map[string][]string{}, Head: oid40, Integrated: []string{}, Kept: &KeptTip{Commit: oid40, Ref: "refs/atlas/snapshots/r/union-kept-0123456789ab"}, Missing: []string{}, Path: "/w/union"}},
	{EventUnionBuilt, `{"conflicted":{"b":["f"]},"head":"` + sha40 + `","integrated":null,"missing":["c"],"path":"/w/union"}`,
		&UnionBuiltData{Conflicted: map[string][]string{"b": {"f"}}, Head: oid40, Missing: []string{"c"}, Path: "/w/union"}},
	{EventUnionVerified, `{"exit_code":0,"head":"` + sha40 + `","passed":true,"tail":"ok\n","timed_out":false}`, &UnionVerifiedData{Head: oid40, Passed: true, Tail: "ok\n"}},
	{EventUndone, `{"to":3,"from":7,"epoch":2,"reset_jobs":[],"kept":["gas_spent"]}`, &UndoneData{To: 3, From: 7, Epoch: 2, ResetJobs: []string{}, Kept: []string{"gas_spent"}}},
	{EventHeartbeat, `{}`, &HeartbeatData{}},
	{EventHeartbeat, `{"attempt":1,"expires_at":"2026-01-01T00:10:00Z"}`, &HeartbeatData{Attempt: 1, ExpiresAt: "2026-01-01T00:10:00Z"}},
	{EventDriverTakenOver, `{"old":{"holder":"a","session":"k","expires_at":"2026-01-01T00:10:00Z"},"new":{"holder":"b","expires_at":"2026-01-01T00:20:00Z"}}`,
		&DriverChangeData{Old: Lease{Holder: "a", Session: "k", ExpiresAt: "2026-01-01T00:10:00Z"}, New: Lease{Holder: "b", ExpiresAt: "2026-01-01T00:20:00Z"}}},
	{EventDriverRenamed, `{"old":{"holder":"a","expires_at":"2026-01-01T00:10:00Z"},"new":{"holder":"a-2","expires_at":"2026-01-01T00:20:00Z"}}`,
		&DriverChangeData{Old: Lease{Holder: "a", ExpiresAt: "2026-01-01T00:10:00Z"}, New: Lease{Holder: "a-2", ExpiresAt: "2026-01-01T00:20:00Z"}}},
	{EventResumed, `{"driver":{"holder":"a","expires_at":"2026-01-01T00:10:00Z"},"epoch":1,"from_epoch":1,"recreated_worktrees":[],"reset_jobs":[],"snapshots":[]}`,
		&ResumedData{Driver: &Lease{Holder: "a", ExpiresAt: "2026-01-01T00:10:00Z"}, Epoch: 1, FromEpoch: 1, RecreatedWorktrees: []string{}, ResetJobs: []string{}, Snapshots: []string{}}},
	{EventResumed, `{"driver_taken_over":{"holder":"b","expires_at":"2026-01-01T00:10:00Z"},"epoch":2,"from_epoch":1,"recreated_worktrees":null,"reset_jobs":["j"],"snapshots":["s"]}`,
		&ResumedData{DriverTakenOver: &Lease{Holder: "b", ExpiresAt: "2026-01-01T00:10:00Z"}, Epoch: 2, FromEpoch: 1, ResetJobs: []string{"j"}, Snapshots: []string{"s"}}},
	{EventStageResumed, `{"action":"no-verify"}`, &StageResumedData{Action: "no-verify"}},
	{EventStageResumed, `{"action":"advance","exit_code":0,"timed_out":false,"verify_result":"pass"}`,
		&StageResumedData{Action: "advance", StageVerified: &StageVerified{VerifyResult: "pass"}}},
	{EventImported, `{"current_state":"CODED","job_ids":{},"refine_passes":0,"reset_jobs":null,"source":"/k/r"}`,
		&ImportedData{ImportedKimi: &ImportedKimi{CurrentState: "CODED", JobIDs: map[string]string{}}, Source: "/k/r"}},
	{EventImported, `{"source":"/a/state/r.json","status":"running","verify_safe_in_source":null}`,
		&ImportedData{Source: "/a/state/r.json", ImportedAgenTeam: &ImportedAgenTeam{Status: "running"}}},
	{EventImportedStage, `{"source_stage":"VERIFIED","verdict":{"ok":true}}`, &ImportedStageData{SourceStage: "VERIFIED", Verdict: json.RawMessage(`{"ok":true}`)}},
	{EventImportedEvent, `{"source":null}`, &ImportedEventData{Source: json.RawMessage(`null`)}},
	{EventImportedEvent, `{"source":{"x":1}}`, &ImportedEventData{Source: json.RawMessage(`{"x":1}`)}},
	{EventRunTakenOver, `{"by":"pat","from":"agenteam","pipeline_mode":"standalone"}`, &RunTakenOverData{By: "pat", From: "agenteam", PipelineMode: "standalone"}},
	{EventLanded, `{"accepted_unresolved":[],"approved_by":"pat","branch":"main","how":"merge","new":"` + sha40 + `","old":"` + sha40 + `","union":"` + sha40 + `"}`,
		&LandedData{AcceptedUnresolved: []string{}, ApprovedBy: "pat", Branch: "main", How: "merge", New: oid40, Old: oid40, Union: oid40}},
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
	seen := map[EventType]bool{}
	for _, tc := range previousRelease {
		seen[tc.typ] = true
		if _, err := s.Update(ctx, "old", func(r *Run) (*Change, error) {
			return &Change{Event: Event{Type: tc.typ, Data: json.RawMessage(tc.data)}}, nil
		}); err != nil {
			t.Fatalf("%s %s: %v", tc.typ, tc.data, err)
		}
	}
	for _, e := range Events() {
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

// DecodeData gives the typed payload and refuses a type whose payload is another.
func TestDecodeData(t *testing.T) {
	t.Parallel()
	ev := JobClaimedEvent(About{Job: "a", Holder: "w"}, JobClaimedData{Lease: "a#1@1.c", Attempt: 1, ExpiresAt: "2026-01-01T00:10:00Z"})
	if ev.Type != EventJobClaimed || ev.Job != "a" || ev.Holder != "w" {
		t.Fatalf("event %+v", ev)
	}
	d, err := DecodeData[JobClaimedData](&ev)
	if err != nil || d.Lease != "a#1@1.c" || d.Attempt != 1 {
		t.Fatalf("DecodeData = %+v, %v", d, err)
	}
	if _, err := DecodeData[JobRenewedData](&ev); err == nil || !strings.Contains(err.Error(), "job_claimed") {
		t.Fatalf("DecodeData of another type = %v", err)
	}
	note := UserEvent(About{}, EventNote, json.RawMessage(`{"anything":[1]}`))
	if p, err := note.Payload(); p != nil || err != nil {
		t.Fatalf("a note's data is the person's own: %v, %v", p, err)
	}
}

// Members a newer git-atlas added to a payload, at the top or in a nested item, are
// kept when it is decoded and written back unchanged.
func TestPayloadKeepsNewerMembers(t *testing.T) {
	t.Parallel()
	data := `{"jobs":[{"attempts":1,"cascaded":[],"id":"a","lease":"a#1@1.c","next":{"n":1},"to":"PENDING"}],"reason":"finish --force","why":"newer"}`
	ev := Event{Type: EventJobReaped, Data: json.RawMessage(data)}
	d, err := DecodeData[JobReapedData](&ev)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Extra["why"]) != `"newer"` || string(d.Jobs[0].Extra["next"]) != `{"n":1}` {
		t.Fatalf("kept %v and %v", d.Extra, d.Jobs[0].Extra)
	}
	again := JobReapedEvent(About{}, *d)
	if string(again.Data) != data {
		t.Fatalf("written back as %s, want %s", again.Data, data)
	}
	// Through an embedded part too: a member of it is known, not kept twice.
	data = `{"action":"advance","exit_code":3,"later":true,"timed_out":false,"verify_result":"fail"}`
	ev = Event{Type: EventStageResumed, Data: json.RawMessage(data)}
	sr, err := DecodeData[StageResumedData](&ev)
	if err != nil || sr.StageVerified == nil || sr.ExitCode != 3 || len(sr.Extra) != 1 || string(sr.Extra["later"]) != "true" {
		t.Fatalf("stage_resumed = %+v, %v", sr, err)
	}
	if again := StageResumedEvent(About{}, *sr); string(again.Data) != data {
		t.Fatalf("written back as %s, want %s", again.Data, data)
	}
}

// Data of the wrong shape for its type is an error naming the type and the member.
func TestPayloadOfTheWrongShape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ        EventType
		data, want string
	}{
		{EventJobClaimed, `{"attempt":1,"expires_at":"x"}`, "job_claimed data has no lease"},
		{EventJobClaimed, `{"lease":5,"expires_at":"x"}`, "job_claimed data member lease is number, not a string"},
		{EventJobReaped, `{"jobs":[{"id":7}]}`, "job_reaped data member jobs.id is number, not a string"},
		{EventStageTransition, `[1,2]`, "stage_transition data is array, not a JSON object"},
		{EventStageTransition, `{"from":"a","to":"b","verified":"yes"}`, "stage_transition data member verified is string, not true or false"},
		{EventDriverTakenOver, `{"new":{"holder":"b","expires_at":"x"}}`, "driver_taken_over data has no old"},
		{EventWorktreeAdded, ``, "worktree_added data has no branch"},
	} {
		ev := Event{Type: tc.typ, Data: json.RawMessage(tc.data)}
		if _, err := ev.Payload(); err == nil || err.Error() != tc.want {
			t.Errorf("%s %s: %v, want %q", tc.typ, tc.data, err, tc.want)
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
	_, err := s.Update(ctx, "r", func(r *Run) (*Change, error) {
		return &Change{Event: JobClaimedEvent(About{Job: "a"}, JobClaimedData{Attempt: 1, ExpiresAt: "2026-01-01T00:10:00Z"})}, nil
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

// A payload's members are declared in sorted order of their JSON names, as the maps
// that wrote them before encoded them (and as a payload with kept members encodes):
// only undone and the driver changes keep the order of the structs they came from.
func TestPayloadMembersSorted(t *testing.T) {
	t.Parallel()
	for _, e := range Events() {
		if e.Payload == nil || e.Type == EventUndone || e.Type == EventDriverTakenOver || e.Type == EventDriverRenamed {
			continue
		}
		var names []string
		var walk func(reflect.Type)
		walk = func(t reflect.Type) {
			for f := range t.Fields() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				switch {
				case name == "-":
				case f.Anonymous:
					walk(embeddedStruct(f.Type))
				default:
					names = append(names, name)
				}
			}
		}
		walk(e.Payload)
		if !slices.IsSorted(names) {
			t.Errorf("%s: members %v are not sorted", e.Type, names)
		}
	}
}
