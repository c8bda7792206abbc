package ledger

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger/ledgertest"
)

// Documents from a newer git-atlas (ledgertest, which the store's tests read too).
const (
	futureRun   = ledgertest.FutureRun
	futureState = ledgertest.FutureState
	futureEvent = ledgertest.FutureEvent
)

var futureFields = ledgertest.FutureFields

func TestDocumentsKeepUnknownFields(t *testing.T) {
	t.Parallel()
	for doc, v := range map[string]any{"run.json": &Header{}, "state.json": &State{}, "event.json": &Event{}} {
		t.Run(doc, func(t *testing.T) {
			src := map[string]string{"run.json": strings.Replace(futureRun, "BASE", strings.Repeat("1", 40), 1), "state.json": futureState, "event.json": futureEvent}[doc]
			if err := DecodeDoc([]byte(src), v); err != nil {
				t.Fatal(err)
			}
			out, err := EncodeDoc(v)
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
			again, _ := EncodeDoc(v)
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
	if err := DecodeDoc([]byte(futureState), &st); err != nil {
		t.Fatal(err)
	}
	st.Driver = nil
	st.Stages[0].Verify = nil
	st.Status = RunStopped
	out, err := EncodeDoc(&st)
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
	out, err := EncodeDoc(&st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":1,"run_id":"r","status":"running","seq":0,"epoch":0,"updated_at":"","stages":[{"name":"a","status":"pending"}]}` + "\n"
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var back State
	if err := DecodeDoc(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Extra != nil || back.Stages[0].Extra != nil {
		t.Fatalf("extra fields out of nowhere: %+v", back)
	}
	for _, bad := range []string{`{"schema":1,`, `[]`, `{"schema":"one"}`, `{"schema":1} {"x":1}`} {
		if err := DecodeDoc([]byte(bad), &State{}); err == nil {
			t.Errorf("decodeDoc(%s) accepted it", bad)
		}
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
