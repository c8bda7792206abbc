package gitstate

import (
	"encoding/json"
	"github.com/git-atlas/git-atlas/ledger"
	"reflect"
	"testing"
)

// A summary line carries the mode fields and the take-over, read the fast way.
func TestSummaryLineCarriesMode(t *testing.T) {
	t.Parallel()
	r := &ledger.Run{Header: ledger.Header{Schema: 1, RunID: "m", Kind: ledger.KindSingle, Baseline: testOID("a"), CreatedAt: "t",
		PipelineMode: ledger.ModeManaged, ManagedBy: "hotl", ResumeWith: "/hotl:resume <workflow-file>", ResumeWithText: true},
		State: ledger.State{Schema: 1, RunID: "m", Status: ledger.RunRunning, UpdatedAt: "t", Stages: []ledger.StageState{}, TakenOver: "me"}}
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
	if got.Header.ManagedBy != "hotl" || got.Header.Mode() != ledger.ModeManaged || !got.Header.ResumeWithText || got.Header.ResumeWith != r.Header.ResumeWith || got.State.TakenOver != "me" {
		t.Fatalf("summary run: %+v %+v", got.Header, got.State)
	}
}
