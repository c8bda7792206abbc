package ledger

import (
	"testing"
	"time"
)

// TestClaimFinishedIsNotHalted: a graph whose jobs all ended says finished; one with
// nothing to claim for another reason (no jobs yet) says halted.
func TestClaimFinishedIsNotHalted(t *testing.T) {
	t.Parallel()
	h := &Header{RunID: "g", Kind: KindGraph}
	s := &State{RunID: "g"}
	if f := JobFrontier(h, s); f.Reason != ReasonHalted {
		t.Fatalf("no jobs: reason %q, want halted", f.Reason)
	}
	if err := AddJobs(s, []JobSpec{{ID: "a"}, {ID: "b", Needs: []string{"a"}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		g, err := Claim(h, s, "", "w", time.Now(), time.Hour, RandomNonce())
		if err != nil || g.Job == nil || g.Job.ID != id {
			t.Fatalf("claim: %+v, %v", g, err)
		}
		if f := JobFrontier(h, s); f.Reason != ReasonWaiting {
			t.Fatalf("while %s runs: reason %q", id, f.Reason)
		}
		if _, err := Done(h, s, id, g.Lease, ReceiptOK, nil); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Claim(h, s, "", "w", time.Now(), time.Hour, RandomNonce())
	if err != nil || g.Job != nil || g.Reason != ReasonFinished {
		t.Fatalf("claim on a finished graph: %+v, %v; want reason finished", g, err)
	}
}
