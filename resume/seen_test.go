package resume

import (
	"context"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// interruptedRun writes run id, running with no driver (interrupted), dated at.
func interruptedRun(t *testing.T, repo *git.Repository, id string, at time.Time) {
	t.Helper()
	s := gitstate.New(repo)
	s.Clock = func() time.Time { return at }
	h := ledger.Header{RunID: id, Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(at), Stages: []ledger.StageDef{{Name: "code"}}}
	st := ledger.State{RunID: id, Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "code", Status: ledger.StagePending}}}
	if _, err := s.Create(context.Background(), h, st, ledger.Event{Type: ledger.EventRunStarted}); err != nil {
		t.Fatal(err)
	}
}

// A run that arrives dated a day ahead (another clone's clock, or a hostile one) is
// judged by when this clone first saw it, never by the future time it states: the
// headless resume picks this clone's own run, interrupted after that.
func TestNewestIsCappedAtThisClonesClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	gitIn(t, dir, "", "init", "-q", "-b", "main")
	gitIn(t, dir, "", "commit", "-q", "--allow-empty", "-m", "first")
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	store := gitstate.New(repo)

	// The pull brings a run dated a day ahead, ten minutes ago.
	interruptedRun(t, repo, "pulled", now.Add(24*time.Hour))
	if err := NoteArrivals(ctx, store, now.Add(-10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Five minutes ago, this clone's own run was interrupted.
	interruptedRun(t, repo, "local", now.Add(-5*time.Minute))

	for _, depth := range []gitstate.ListDepth{gitstate.ListFull, gitstate.ListSummaries} {
		cands, _, err := Detect(ctx, store, now, DetectOptions{Depth: depth})
		if err != nil {
			t.Fatal(err)
		}
		if len(cands) != 2 || cands[0].RunID != "local" {
			t.Fatalf("%v: candidates %+v; want local first", depth, cands)
		}
		r, err := Select(ctx, store, cands, "", "", now, nil)
		if err != nil || r.Header.RunID != "local" {
			t.Fatalf("%v: headless select chose %v (%v); want local", depth, r, err)
		}
	}

	// A future-dated run first seen now counts from now: newer than the local run,
	// but never dated beyond this clone's clock; once it moves on (a new tip), its
	// record goes.
	interruptedRun(t, repo, "later", now.Add(48*time.Hour))
	cands, _, err := Detect(ctx, store, now.Add(time.Minute), DetectOptions{Depth: gitstate.ListSummaries})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 3 || cands[0].RunID != "later" || cands[1].RunID != "local" || cands[2].RunID != "pulled" {
		t.Fatalf("candidates %v; want later (seen now), local, pulled (seen ten minutes ago)", candIDs(cands))
	}
	seen := loadSeen(repo)
	if len(seen) != 2 {
		t.Fatalf("seen %v; want the two future-dated tips", seen)
	}
}

func candIDs(cands []Candidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.RunID)
	}
	return out
}
