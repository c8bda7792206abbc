package ledger

import "testing"

// go test -bench CheckDocuments -benchmem ./ledger: the check every read applies, on a
// run as a listing meets it (three stages, one attempt, a driver).
func BenchmarkCheckDocuments(b *testing.B) {
	h := &Header{RunID: "20260101T000000Z-000000", CreatedAt: "2026-01-01T00:00:00Z",
		Stages: []StageDef{{Name: "plan"}, {Name: "code", ReworkTo: "plan"}, {Name: "check"}}}
	st := &State{RunID: h.RunID, Status: RunRunning, UpdatedAt: "2026-01-01T00:00:50Z",
		Driver: &Lease{ExpiresAt: "2026-01-01T00:10:01Z"},
		Stages: []StageState{
			{Name: "plan", Status: StageCompleted, UpdatedAt: "2026-01-01T00:00:10Z"},
			{Name: "code", Status: StageCompleted, UpdatedAt: "2026-01-01T00:00:20Z"},
			{Name: "check", Status: StageDispatched, UpdatedAt: "2026-01-01T00:00:30Z",
				Attempts: []Attempt{{N: 1, StartedAt: "2026-01-01T00:00:30Z", Lease: "check#1@0.0123456789abcdef"}}},
		}}
	if err := CheckDocuments(h, st); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := CheckDocuments(h, st); err != nil {
			b.Fatal(err)
		}
	}
}
