package gitstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// remoteClones makes a bare repository and n clones of it, each opened as a store
// writing through origin.
func remoteClones(t *testing.T, n int) (string, []*Store) {
	t.Helper()
	seed := newRepo(t, repoKinds[0])
	bare := filepath.Join(t.TempDir(), "remote.git")
	run(t, seed.TopLevel, "init", "-q", "--bare", "-b", "main", bare)
	run(t, seed.TopLevel, "push", "-q", bare, "main")
	var stores []*Store
	for range n {
		dir := filepath.Join(t.TempDir(), "clone")
		run(t, seed.TopLevel, "clone", "-q", bare, dir)
		repo, err := git.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		s := New(repo)
		s.Remote = &Remote{Name: "origin"}
		stores = append(stores, s)
	}
	return bare, stores
}

func note(s *Store, id, typ string, calls *int) (*ledger.Run, error) {
	return s.Update(context.Background(), id, func(r *ledger.Run) (*Change, error) {
		if calls != nil {
			*calls++
		}
		return &Change{Event: ledger.Event{Type: ledger.EventType(typ)}}, nil
	})
}

func eventTypes(t *testing.T, s *Store, id string) []string {
	t.Helper()
	evs, err := s.Log(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, string(e.Type))
	}
	return types
}

// A write made on a tip the remote has moved past loses its lease, fetches, runs fn
// again on the new tip and pushes that: both writes are on the remote, in one chain,
// and the local ref is the remote's tip.
func TestRemoteUpdateRerunsOnLostLease(t *testing.T) {
	t.Parallel()
	bare, st := remoteClones(t, 2)
	a, b := st[0], st[1]
	newRun(t, a, "r")
	if _, err := b.Load(context.Background(), "r"); err != nil { // b's view of the remote: the tip a made
		t.Fatal(err)
	}
	if _, err := note(a, "r", "from-a", nil); err != nil {
		t.Fatal(err)
	}
	calls := 0
	r, err := note(b, "r", "from-b", &calls)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("fn ran %d times, want 2 (once on the stale tip, once on the remote's)", calls)
	}
	remoteTip := run(t, bare, "rev-parse", RunRef("r"))
	if r.Tip != remoteTip {
		t.Errorf("the write's tip %s is not the remote's %s", r.Tip, remoteTip)
	}
	if local, _ := b.Repo.ReadRef(context.Background(), RunRef("r")); local != remoteTip {
		t.Errorf("b's ledger is at %s, the remote's at %s", local, remoteTip)
	}
	if got := eventTypes(t, b, "r"); len(got) != 3 || got[1] != "from-a" || got[2] != "from-b" {
		t.Errorf("events %v, want run_started, from-a, from-b", got)
	}
}

// A write that cannot reach the remote is not done: an error, and neither the remote
// nor the local ref moved.
func TestRemoteUnreachableWritesNothing(t *testing.T) {
	t.Parallel()
	bare, st := remoteClones(t, 1)
	a := st[0]
	newRun(t, a, "r")
	before, _ := a.Repo.ReadRef(context.Background(), RunRef("r"))
	if err := os.Rename(bare, bare+".gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := note(a, "r", "lost", nil); err == nil {
		t.Fatal("a write through an unreachable remote succeeded")
	}
	if after, _ := a.Repo.ReadRef(context.Background(), RunRef("r")); after != before {
		t.Errorf("the local ledger moved from %s to %s without the remote", before, after)
	}
	if err := os.Rename(bare+".gone", bare); err != nil {
		t.Fatal(err)
	}
	if got := run(t, bare, "rev-parse", RunRef("r")); got != before {
		t.Errorf("the remote moved to %s", got)
	}
}

// Two clones create the same run id: the second is refused with a conflict and
// writes nothing, locally or on the remote.
func TestRemoteCreateConflict(t *testing.T) {
	t.Parallel()
	bare, st := remoteClones(t, 2)
	newRun(t, st[0], "r")
	tip := run(t, bare, "rev-parse", RunRef("r"))
	base, _ := st[1].Repo.ResolveCommit(context.Background(), git.HeadRev())
	_, err := st[1].Create(context.Background(), ledger.Header{RunID: "r", Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(time.Now().UTC()), Baseline: base},
		ledger.State{RunID: "r", Status: ledger.RunRunning, Stages: []ledger.StageState{}}, ledger.Event{Type: "run_started"})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("second create: %v, want a conflict", err)
	}
	if got := run(t, bare, "rev-parse", RunRef("r")); got != tip {
		t.Errorf("the remote's run moved to %s", got)
	}
}

// A pin on the remote of a run it does not hold (a push whose receiving end was
// killed half-way, or a gc's) is left over: a start of that id through the remote
// takes it over, here and there.
func TestRemoteCreateAdoptsALeftoverPin(t *testing.T) {
	t.Parallel()
	bare, st := remoteClones(t, 1)
	ctx := context.Background()
	old := newRun(t, st[0], "old").Tip
	run(t, bare, "update-ref", PinRef("r", "baseline"), old)
	r := newRun(t, st[0], "r")
	base := r.Header.Baseline.String()
	if got := run(t, bare, "rev-parse", PinRef("r", "baseline")); got != base {
		t.Errorf("the remote's pin is %s, want %s", got, base)
	}
	if got := run(t, bare, "rev-parse", RunRef("r")); got != r.Tip {
		t.Errorf("the remote's run is at %s, want %s", got, r.Tip)
	}
	if pin, _ := st[0].Repo.ReadRef(ctx, PinRef("r", "baseline")); pin != base {
		t.Errorf("the local pin is %s, want %s", pin, base)
	}
}

// A chain written locally only while the remote moved is kept under
// refs/atlas/diverged/<run>/1 by the next sync, which gives the run the remote's
// chain; the write is then made on the remote's tip.
func TestRemoteKeepsDivergedChain(t *testing.T) {
	t.Parallel()
	_, st := remoteClones(t, 2)
	a, b := st[0], st[1]
	newRun(t, a, "r")
	if _, err := b.Load(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	local := New(b.Repo) // b offline
	offline, err := note(local, "r", "offline", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note(a, "r", "online", nil); err != nil {
		t.Fatal(err)
	}
	fresh := New(b.Repo)
	fresh.Remote = &Remote{Name: "origin"}
	if _, err := note(fresh, "r", "after", nil); err != nil {
		t.Fatal(err)
	}
	kept := fresh.Kept()
	if len(kept) != 1 || kept[0].Ref != DivergedRef("r", 1) || kept[0].Local != offline.Tip {
		t.Fatalf("kept %+v, want the offline chain %s as %s", kept, offline.Tip, DivergedRef("r", 1))
	}
	if got := eventTypes(t, fresh, "r"); len(got) != 3 || got[1] != "online" || got[2] != "after" {
		t.Errorf("events %v, want run_started, online, after", got)
	}
	evs, err := fresh.LogDiverged(context.Background(), "r", 1)
	if err != nil || len(evs) != 2 || evs[1].Type != "offline" {
		t.Errorf("the kept chain reads %v, %v; want run_started, offline", evs, err)
	}
}

// When the local compare-and-swap after a push loses to a local writer, the local
// ledger follows the remote's tip: never back to an older tip, and a local chain that
// diverged is kept under DivergedRef first.
func TestRemoteFollowAfterLostLocalCAS(t *testing.T) {
	t.Parallel()
	_, st := remoteClones(t, 1)
	a := st[0]
	ctx := context.Background()
	first := newRun(t, a, "r").Tip
	pushed, err := note(a, "r", "pushed", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A local-only writer that wrote on the older tip: the chains diverged.
	run(t, a.Repo.CommonDir, "update-ref", RunRef("r"), first)
	local, err := note(New(a.Repo), "r", "local", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.follow(ctx, "r", pushed.Tip, nil, "test")
	if got, _ := a.Repo.ReadRef(ctx, RunRef("r")); got != pushed.Tip {
		t.Errorf("the ledger is at %s, want the remote's %s", got, pushed.Tip)
	}
	if got, _ := a.Repo.ReadRef(ctx, DivergedRef("r", 1)); got != local.Tip {
		t.Errorf("%s is %q, want the local chain %s", DivergedRef("r", 1), got, local.Tip)
	}
	// A newer tip already here (another writer brought the remote's) is left alone.
	newer, err := note(New(a.Repo), "r", "newer", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.follow(ctx, "r", pushed.Tip, nil, "test")
	if got, _ := a.Repo.ReadRef(ctx, RunRef("r")); got != newer.Tip {
		t.Errorf("follow moved the ledger back from %s to %s", newer.Tip, got)
	}
}

// A remote tip whose commit is here but whose tree and blobs are not yet is fetched,
// not read: a fetch running beside the command (another worker of the same clone)
// writes a pack's objects one by one, commits first. Before Reaches, the read moved
// the ledger ref to that commit and reported the run as a corrupt ledger (seen in
// TestRemoteFleet's full sweep).
func TestRemoteReadFetchesATipNotWholeHere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, st := remoteClones(t, 2)
	a, b := st[0], st[1]
	newRun(t, a, "r")
	if _, err := b.Load(ctx, "r"); err != nil { // b has the run at its first tip
		t.Fatal(err)
	}
	if _, err := note(a, "r", "from-a", nil); err != nil {
		t.Fatal(err)
	}
	tip := run(t, bare, "rev-parse", RunRef("r"))
	// The new commit alone, as the other fetch wrote it first (the push left it loose
	// on the remote: fewer objects than receive.unpackLimit).
	rel := filepath.Join("objects", tip[:2], tip[2:])
	data, err := os.ReadFile(filepath.Join(bare, rel))
	if err != nil {
		t.Fatalf("the remote's tip is not a loose object: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(b.Repo.CommonDir, rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Repo.CommonDir, rel), data, 0o444); err != nil {
		t.Fatal(err)
	}
	// The next command in b reads the run through the remote.
	repo, err := git.Open(ctx, b.Repo.TopLevel)
	if err != nil {
		t.Fatal(err)
	}
	next := New(repo)
	next.Remote = &Remote{Name: "origin"}
	r, err := next.Load(ctx, "r")
	if err != nil {
		t.Fatalf("read through the remote: %v", err)
	}
	if r.Tip != tip {
		t.Errorf("read at %s, want the remote's tip %s", r.Tip, tip)
	}
	if got := eventTypes(t, next, "r"); len(got) != 2 || got[1] != "from-a" {
		t.Errorf("events %v, want run_started, from-a", got)
	}
	run(t, b.Repo.TopLevel, "fsck", "--no-dangling")
}
