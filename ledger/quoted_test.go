package ledger

import (
	"encoding/json"
	"testing"
)

// The members of an event's data that quote the ledger (a replaced lease, a record's
// path, the header's owner, a completed run's reason) are not the writer's words:
// WrittenData leaves them out and keeps the rest.
func TestWrittenDataLeavesOutWhatTheEventQuotes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e          Event
		gone, kept string
	}{
		{DriverChangeEvent(About{}, &TakeOver{Old: Lease{Holder: "quoted"}, New: Lease{Holder: "mine"}}), "old", "new"},
		{StageTransitionEvent(About{}, StageTransitionData{From: "a", To: "b", Reason: "mine", RunEnded: &RunEnded{RunReason: "quoted", RunStatus: RunCompleted}}), "run_reason", "reason"},
		{RunTakenOverEvent(About{}, RunTakenOverData{From: "quoted", By: "mine"}), "from", "by"},
		{WorktreeRemovedEvent(About{}, WorktreeRemovedData{Node: "n", Path: "quoted", Reasons: []string{"mine"}}), "path", "reasons"},
		{ResumedEvent(About{}, ResumedData{DriverTakenOver: &Lease{Holder: "quoted"}, Driver: &Lease{Holder: "mine"}}), "driver_taken_over", "driver"},
	} {
		data, err := WrittenData(&c.e)
		if err != nil {
			t.Fatal(err)
		}
		obj, _ := data.(map[string]any)
		if _, ok := obj[c.gone]; ok || obj[c.kept] == nil {
			b, _ := json.Marshal(data)
			t.Errorf("%s: want %s left out and %s kept: %s", c.e.Type, c.gone, c.kept, b)
		}
	}
}
