package git

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// A leased, atomic push moves every ref or none: one stale lease (the remote is not at
// the expected tip, or a must-not-exist ref exists) rejects the whole push.
func TestPushAtomicLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	remote := filepath.Join(t.TempDir(), "remote.git")
	g("", "init", "-q", "--bare", remote)
	g("", "remote", "add", "origin", remote)
	first := g("", "rev-parse", "HEAD")
	g("", "commit", "-q", "--allow-empty", "-m", "second")
	second := g("", "rev-parse", "HEAD")
	g("", "commit", "-q", "--allow-empty", "-m", "third")
	third := g("", "rev-parse", "HEAD")

	if err := r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: first}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.LsRemote(ctx, "origin", "refs/atlas/")
	if err != nil || len(got) != 1 || got[0].ID != first {
		t.Fatalf("LsRemote = %v, %v", got, err)
	}
	// b would be created, but a's lease says "must not exist": nothing moves.
	err = r.PushAtomic(ctx, "origin", []PushRef{
		{Name: "refs/atlas/runs/b", ID: first},
		{Name: "refs/atlas/runs/a", ID: second},
	})
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("stale must-not-exist lease: err = %v, want ErrPushRejected", err)
	}
	// A stale expected tip is rejected too.
	err = r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: third, Expect: second}})
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("stale lease: err = %v, want ErrPushRejected", err)
	}
	got, _ = r.LsRemote(ctx, "origin", "refs/atlas/")
	if len(got) != 1 || got[0].ID != first {
		t.Fatalf("after rejected pushes the remote has %v, want only a at %s", got, first)
	}
	// The right lease moves it.
	if err := r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: second, Expect: first}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.IsAncestor(ctx, OID{first}, OID{second}); !ok || err != nil {
		t.Fatalf("IsAncestor(first, second) = %v, %v", ok, err)
	}
	if ok, _ := r.IsAncestor(ctx, OID{second}, OID{first}); ok {
		t.Fatal("IsAncestor(second, first) = true")
	}
	if ok, err := r.IsAncestor(ctx, OID{"1111111111111111111111111111111111111111"}, OID{first}); ok || err != nil {
		t.Fatalf("IsAncestor(missing, first) = %v, %v", ok, err)
	}
}
