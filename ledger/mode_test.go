package ledger

import (
	"encoding/json"
	"errors"
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
