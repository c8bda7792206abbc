package gitstate

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// noteAs is a plain driver's write: one note event.
func noteAs(s *Store, id string) (*ledger.Run, error) {
	return s.Update(context.Background(), id, func(r *ledger.Run) (*Change, error) {
		return &Change{Event: ledger.Event{Type: ledger.EventNote}}, nil
	})
}

// The ledger keeps a keyed hash of the driver's session, never the id; the key is made
// once, in local state. A renewal by the session under a new holder name is recorded
// with both names (driver_renamed). A lease an earlier release wrote with the plain id
// still renews by it, and the next write keeps it hashed.
func TestSessionIsKeptAsAKeyedHash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "r", ledger.StageDef{Name: "code"})
	s.Writer = ledger.Writer{Holder: "alice", Session: "sess-1", TTL: time.Hour}
	r, err := noteAs(s, "r")
	if err != nil {
		t.Fatal(err)
	}
	key, err := s.SessionKey()
	if err != nil {
		t.Fatal(err)
	}
	if d := r.State.Driver; d == nil || d.Session != key.Seal("sess-1") || !ledger.Sealed(d.Session) || strings.Contains(d.Session, "sess-1") {
		t.Fatalf("driver %+v: want the session's keyed hash", r.State.Driver)
	}
	keyFile := s.Repo.LocalPath(sessionKeyFile)
	before, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatalf("no key in local state: %v", err)
	}
	if again, err := LoadSessionKey(s.Repo); err != nil || again.Seal("x") != key.Seal("x") {
		t.Fatalf("the key changed on a second load: %v", err)
	}
	if after, _ := os.ReadFile(keyFile); string(after) != string(before) {
		t.Fatal("the key file was rewritten")
	}

	// The session, restarted under another name: renewed, recorded with both names.
	s2 := New(s.Repo)
	s2.Writer = ledger.Writer{Holder: "alice-2", Session: "sess-1", TTL: time.Hour}
	if r, err = noteAs(s2, "r"); err != nil {
		t.Fatal(err)
	}
	if r.State.Driver.Holder != "alice-2" {
		t.Fatalf("driver %+v", r.State.Driver)
	}
	evs, err := s.Log(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	var renamed *ledger.Event
	for i := range evs {
		if evs[i].Type == ledger.EventDriverRenamed {
			renamed = &evs[i]
		}
	}
	if renamed == nil {
		t.Fatalf("no %s event in %+v", ledger.EventDriverRenamed, evs)
	}
	if took, err := ledger.DecodeData[ledger.DriverChangeData](renamed); err != nil || took.Old.Holder != "alice" || took.New.Holder != "alice-2" {
		t.Fatalf("%s data %s: want both names", ledger.EventDriverRenamed, renamed.Data)
	}

	// The hash shown in the ledger, presented as a session, is refused; the refusal
	// names holder and expiry, never a session.
	s3 := New(s.Repo)
	s3.Writer = ledger.Writer{Holder: "mallory", Session: r.State.Driver.Session, TTL: time.Hour}
	_, err = noteAs(s3, "r")
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("the stored hash as a session: %v, want a conflict", err)
	}
	if f := fault.FieldsOf(err)["driver"]; strings.Contains(err.Error(), "hmac") || strings.Contains(err.Error(), "session ") || f == nil {
		t.Fatalf("refusal %q (driver %v)", err, f)
	}
	if d, ok := fault.FieldsOf(err)["driver"].(map[string]string); !ok || d["holder"] != "alice-2" || d["expires_at"] == "" || d["session"] != "" {
		t.Fatalf("refusal's driver %v: want holder and expiry only", fault.FieldsOf(err)["driver"])
	}
}

// A ledger an earlier release wrote keeps the plain session id in the lease: the
// session still takes its run back by it, and that write stores it hashed.
func TestPlainSessionOfAnEarlierReleaseStillMatches(t *testing.T) {
	t.Parallel()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "r", ledger.StageDef{Name: "code"})
	// As an earlier release wrote it: the plain id in the lease.
	raw := New(s.Repo)
	raw.Writer = ledger.Writer{Holder: "old", Role: ledger.RoleObserver}
	if _, err := raw.Update(context.Background(), "r", func(r *ledger.Run) (*Change, error) {
		r.State.Driver = &ledger.Lease{Holder: "old", Session: "legacy-sess", ExpiresAt: ledger.Stamp(time.Now().Add(time.Hour))}
		return &Change{Event: ledger.Event{Type: ledger.EventNote}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Writer = ledger.Writer{Holder: "new-name", Session: "legacy-sess", TTL: time.Hour}
	r, err := noteAs(s, "r")
	if err != nil {
		t.Fatalf("the plain session of an earlier release: %v", err)
	}
	key, _ := s.SessionKey()
	if d := r.State.Driver; d.Holder != "new-name" || d.Session != key.Seal("legacy-sess") {
		t.Fatalf("driver %+v: want the session kept hashed from now on", d)
	}
	// And a write by holder alone (no session) also rewrites a plain one hashed.
	if _, err := raw.Update(context.Background(), "r", func(r *ledger.Run) (*Change, error) {
		r.State.Driver = &ledger.Lease{Holder: "old", Session: "legacy-2", ExpiresAt: ledger.Stamp(time.Now().Add(time.Hour))}
		return &Change{Event: ledger.Event{Type: ledger.EventNote}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Writer = ledger.Writer{Holder: "old", TTL: time.Hour}
	if r, err = noteAs(s, "r"); err != nil {
		t.Fatal(err)
	}
	if d := r.State.Driver; d.Session != key.Seal("legacy-2") {
		t.Fatalf("driver %+v: the plain id stayed", d)
	}
}
