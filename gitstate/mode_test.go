package gitstate

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// A header written before pipeline modes (no mode fields) is standalone; a managed
// or dispatch-only one hands off until taken over.
func TestModeOfOldAndNewHeaders(t *testing.T) {
	t.Parallel()
	var h Header
	if err := json.Unmarshal([]byte(`{"schema":1,"run_id":"r","kind":"single","baseline":"1111111111111111111111111111111111111111","stages":[]}`), &h); err != nil {
		t.Fatal(err)
	}
	r := &Run{Header: h}
	if h.Mode() != ModeStandalone || r.HandsOff() || h.CheckMode() != nil {
		t.Fatalf("old header: mode %q, hands off %v", h.Mode(), r.HandsOff())
	}
	r.Header.PipelineMode, r.Header.ManagedBy = ModeManaged, "hotl"
	if !r.HandsOff() || r.Header.CheckMode() != nil {
		t.Fatal("a managed run does not hand off")
	}
	r.State.TakenOver = "me"
	if r.HandsOff() {
		t.Fatal("a run taken over still hands off")
	}
	for _, bad := range []Header{
		{PipelineMode: "other"},
		{PipelineMode: ModeManaged},
		{PipelineMode: ModeManaged, ManagedBy: "a b"},
		{ManagedBy: "hotl"},
		{ResumeWith: "x"},
		{PipelineMode: ModeDispatchOnly, ManagedBy: "hotl"},
	} {
		if err := bad.CheckMode(); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("CheckMode(%+v) = %v, want usage", bad, err)
		}
	}
}

// A summary line carries the mode fields and the take-over, read the fast way.
func TestSummaryLineCarriesMode(t *testing.T) {
	t.Parallel()
	r := &Run{Header: Header{Schema: 1, RunID: "m", Kind: KindSingle, Baseline: testOID("a"), CreatedAt: "t",
		PipelineMode: ModeManaged, ManagedBy: "hotl", ResumeWith: "/hotl:resume <workflow-file>", ResumeWithText: true},
		State: State{Schema: 1, RunID: "m", Status: RunRunning, UpdatedAt: "t", Stages: []StageState{}, TakenOver: "me"}}
	doc, err := summaryOf(r).encode()
	if err != nil {
		t.Fatal(err)
	}
	var fast, slow ledgerSummary
	if !fast.parseCanonical(string(doc)) {
		t.Fatalf("parseCanonical refused %s", doc)
	}
	if err := json.Unmarshal(doc, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s: fast %+v, slow %+v, %v", doc, fast, slow, err)
	}
	got := summaryRun("tip", &fast.Run, &fast.State)
	if got.Header.ManagedBy != "hotl" || got.Header.Mode() != ModeManaged || !got.Header.ResumeWithText || got.Header.ResumeWith != r.Header.ResumeWith || got.State.TakenOver != "me" {
		t.Fatalf("summary run: %+v %+v", got.Header, got.State)
	}
}
