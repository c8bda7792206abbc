package gitstate

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// The summary a listing reads (resume --brief, the hook, list) carries the driver's
// session and when the open attempt dies of idleness, whichever way it is read: the
// commit's summary line (fast parser or encoding/json) or the documents.
func TestSummaryCarriesDriverSessionAndIdleDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "r", ledger.StageDef{Name: "code", MaxRetries: 2, IdleBudget: "1m"})
	s.Writer = ledger.Writer{Holder: "d", Session: "S", TTL: time.Hour}
	if err := transition(s, "r", "code", ledger.StageDispatched); err != nil {
		t.Fatal(err)
	}
	full, err := s.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want := full.IdleDeadline()
	key, err := s.SessionKey()
	if err != nil {
		t.Fatal(err)
	}
	if want.IsZero() || full.State.Driver.Session != key.Seal("S") || !ledger.Sealed(full.State.Driver.Session) {
		t.Fatalf("documents: idle deadline %v, driver %+v", want, full.State.Driver)
	}
	line, err := summaryLine(full)
	if err != nil || line == nil {
		t.Fatalf("summary line: %v", err)
	}
	var viaJSON ledgerSummary
	if err := json.Unmarshal(line, &viaJSON); err != nil {
		t.Fatal(err)
	}
	var fast ledgerSummary
	if !fast.parseCanonical(string(line)) {
		t.Fatalf("the fast parser refused %s", line)
	}
	docs, err := decodeSummary("r", full.Tip, git.Blob{Data: mustMarshal(t, &full.Header)}, git.Blob{Data: mustMarshal(t, &full.State)})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*ledger.Run{
		"fast":      summaryRun(full.Tip, &fast.Run, &fast.State),
		"json":      summaryRun(full.Tip, &viaJSON.Run, &viaJSON.State),
		"documents": docs,
	} {
		if !r.IdleDeadline().Equal(want) || r.State.Driver == nil || r.State.Driver.Session != key.Seal("S") {
			t.Errorf("%s: idle deadline %v (want %v), driver %+v", name, r.IdleDeadline(), want, r.State.Driver)
		}
		if !r.Driven(want.Add(-time.Second)) || r.Driven(want) {
			t.Errorf("%s: driven just before the deadline %v, at it %v", name, r.Driven(want.Add(-time.Second)), r.Driven(want))
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
