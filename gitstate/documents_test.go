package gitstate

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
)

// Documents from a newer git-atlas: unknown fields at the top and inside every kind of
// nested object this version rewrites.
const (
	futureRun = `{"schema":1,"run_id":"r","kind":"single","created_at":"2026-01-01T00:00:00Z","baseline":"BASE",` +
		`"stages":[{"name":"code","max_retries":2,"future_stage_def":{"x":[1,2]}}],"future_header":"h"}`
	futureState = `{"schema":1,"run_id":"r","status":"running","seq":1,"epoch":0,"updated_at":"2026-01-01T00:00:00Z",` +
		`"stages":[{"name":"code","status":"pending","future_stage":true,` +
		`"attempts":[{"n":1,"started_at":"2026-01-01T00:00:00Z","baseline":"1111111111111111111111111111111111111111","future_attempt":1}],` +
		`"verify":{"command":"c","exit_code":0,"passed":true,"at":"2026-01-01T00:00:00Z","future_verify":"v"}}],` +
		`"jobs":[{"id":"j","state":"PENDING","needs":[],"attempts":0,"future_job":{"deep":{"er":null}}}],` +
		`"driver":{"holder":"h","expires_at":"2000-01-01T00:00:00Z","future_lease":1},` +
		`"worktrees":[{"node":"n","path":"p","branch":"b","baseline":"1111111111111111111111111111111111111111","head":"1111111111111111111111111111111111111111","future_wt":2}],` +
		`"snapshots":[{"id":"s","ref":"refs/atlas/recovery/r/s","commit":"1111111111111111111111111111111111111111","created_at":"2026-01-01T00:00:00Z","future_snap":3}],` +
		`"union":{"head":"1111111111111111111111111111111111111111","integrated":[],"at":"2026-01-01T00:00:00Z","future_union":4},` +
		`"replays":[{"stage":"code","branch":"b","baseline":"1111111111111111111111111111111111111111","future_replay":5}],` +
		`"future_state":{"a":"b"}}`
	futureEvent = `{"schema":1,"seq":1,"type":"run_started","time":"2026-01-01T00:00:00Z","epoch":0,"future_event":[true]}`
)

var futureFields = map[string][]string{
	"run.json":   {`"future_header":"h"`, `"future_stage_def":{"x":[1,2]}`},
	"state.json": {`"future_state":{"a":"b"}`, `"future_stage":true`, `"future_attempt":1`, `"future_verify":"v"`, `"future_job":{"deep":{"er":null}}`, `"future_lease":1`, `"future_wt":2`, `"future_snap":3`, `"future_union":4`, `"future_replay":5`},
	"event.json": {`"future_event":[true]`},
}

func TestDocumentsKeepUnknownFields(t *testing.T) {
	t.Parallel()
	for doc, v := range map[string]any{"run.json": &Header{}, "state.json": &State{}, "event.json": &Event{}} {
		t.Run(doc, func(t *testing.T) {
			src := map[string]string{"run.json": strings.Replace(futureRun, "BASE", strings.Repeat("1", 40), 1), "state.json": futureState, "event.json": futureEvent}[doc]
			if err := decodeDoc([]byte(src), v); err != nil {
				t.Fatal(err)
			}
			out, err := encodeDoc(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range futureFields[doc] {
				if !bytes.Contains(out, []byte(f)) {
					t.Errorf("rewritten %s lost %s:\n%s", doc, f, out)
				}
			}
			if !jsonEqual(t, []byte(src), out) {
				t.Errorf("round trip changed %s:\n in: %s\nout: %s", doc, src, out)
			}
			// Encoding is deterministic: the same document is the same blob.
			again, _ := encodeDoc(v)
			if !bytes.Equal(out, again) {
				t.Errorf("two encodings differ")
			}
		})
	}
}

// A known field wins over a kept one, and a cleared field stays cleared: the kept
// fields are only the ones this version does not know.
func TestKnownFieldsAreNotResurrected(t *testing.T) {
	t.Parallel()
	var st State
	if err := decodeDoc([]byte(futureState), &st); err != nil {
		t.Fatal(err)
	}
	st.Driver = nil
	st.Stages[0].Verify = nil
	st.Status = RunStopped
	out, err := encodeDoc(&st)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{`"driver"`, `"future_lease"`, `"future_verify"`, `"running"`} {
		if bytes.Contains(out, []byte(gone)) {
			t.Errorf("%s came back: %s", gone, out)
		}
	}
	if !bytes.Contains(out, []byte(`"status":"stopped"`)) || !bytes.Contains(out, []byte(`"future_stage":true`)) {
		t.Errorf("out = %s", out)
	}
}

func TestDocumentsWithoutUnknownFieldsAreCanonical(t *testing.T) {
	t.Parallel()
	st := State{Schema: 1, RunID: "r", Status: RunRunning, Stages: []StageState{{Name: "a", Status: StagePending}}}
	out, err := encodeDoc(&st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":1,"run_id":"r","status":"running","seq":0,"epoch":0,"updated_at":"","stages":[{"name":"a","status":"pending"}]}` + "\n"
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var back State
	if err := decodeDoc(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Extra != nil || back.Stages[0].Extra != nil {
		t.Fatalf("extra fields out of nowhere: %+v", back)
	}
	for _, bad := range []string{`{"schema":1,`, `[]`, `{"schema":"one"}`, `{"schema":1} {"x":1}`} {
		if err := decodeDoc([]byte(bad), &State{}); err == nil {
			t.Errorf("decodeDoc(%s) accepted it", bad)
		}
	}
}

// TestStoreKeepsUnknownFields goes through the store: a ledger written by a newer
// git-atlas (same schema, more fields) gets an event appended by this one.
func TestStoreKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t, kind)
			baseID, _ := repo.ResolveCommit(ctx, git.HeadRev())
			base := baseID.String()
			blob := func(s string) string {
				id, err := repo.WriteBlob(ctx, []byte(s+"\n"))
				if err != nil {
					t.Fatal(err)
				}
				return id.String()
			}
			runBlob := blob(strings.Replace(futureRun, "BASE", base, 1))
			tree, err := repo.WriteTree(ctx, []git.TreeEntry{{Name: "run.json", Blob: runBlob}, {Name: "state.json", Blob: blob(futureState)}, {Name: "event.json", Blob: blob(futureEvent)}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := repo.WriteCommit(ctx, tree, nil, "atlas: run_started r\n")
			if err != nil {
				t.Fatal(err)
			}
			if err := repo.UpdateRefs(ctx, "", git.RefUpdate{Name: RunRef("r"), New: c.String(), Old: git.ZeroID}); err != nil {
				t.Fatal(err)
			}
			s := New(repo)
			r, err := s.Update(ctx, "r", func(r *Run) (*Change, error) {
				r.State.Stages[0].Status = StageDispatched
				r.State.Jobs[0].Attempts = 1
				return &Change{Event: Event{Type: "note"}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			blobs, err := repo.BlobsAt(ctx, []git.BlobSpec{at(t, r.Tip, "run.json"), at(t, r.Tip, "state.json"), {Commit: c, Path: "event.json"}})
			if err != nil {
				t.Fatal(err)
			}
			if blobs[0].ID != runBlob {
				t.Errorf("run.json was rewritten: %s, want the original blob %s", blobs[0].ID, runBlob)
			}
			for i, doc := range []string{"run.json", "state.json", "event.json"} {
				for _, f := range futureFields[doc] {
					if !bytes.Contains(blobs[i].Data, []byte(f)) {
						t.Errorf("%s lost %s:\n%s", doc, f, blobs[i].Data)
					}
				}
			}
			if !bytes.Contains(blobs[1].Data, []byte(`"status":"dispatched"`)) || !bytes.Contains(blobs[1].Data, []byte(`"seq":2`)) {
				t.Errorf("state.json did not take the change: %s", blobs[1].Data)
			}
			// log re-encodes events for --json: the first one keeps its unknown field.
			events, err := s.Log(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			doc, _ := MarshalEvent(&events[0])
			if len(events) != 2 || !bytes.Contains(doc, []byte(`"future_event":[true]`)) {
				t.Errorf("log: %d events, first %s", len(events), doc)
			}
			hdr, _ := MarshalHeader(&r.Header)
			if !bytes.Contains(hdr, []byte(`"future_header":"h"`)) {
				t.Errorf("show --json header lost a field: %s", hdr)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
