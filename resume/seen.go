package resume

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Choosing "the newest" interrupted run (a headless resume takes it) compares the
// times runs were last updated, which a run written elsewhere states itself: a clone
// whose clock runs a day ahead, or a hostile one, would have its run chosen over this
// clone's own more recent one. So the time a run's tip is judged by is capped at this
// clone's clock: a tip dated in the future when this clone first sees it (a pull, a
// listing) counts from that moment, recorded in local state (seenFile: "<run> <tip>
// <unix nanoseconds>" a line, only for such tips, dropped once their run moves on),
// never from the time it claims (docs/contract.md §6.2, §11 invariant 11).
const seenFile = "seen"

type seenKey struct{ run, tip string }

func loadSeen(repo *git.Repository) map[seenKey]time.Time {
	data, _ := repo.ReadLocal(seenFile) // unreadable: nothing recorded, times capped at now
	seen := map[seenKey]time.Time{}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			continue
		}
		seen[seenKey{f[0], f[1]}] = time.Unix(0, n).UTC()
	}
	return seen
}

// arrivals caps the judged time of every listed run at when this clone first saw its
// tip, recording now for a tip dated after now that it sees for the first time. It
// returns the judged time of each run (by id) whose ledger time is in the future.
func arrivals(ctx context.Context, repo *git.Repository, entries []gitstate.Entry, now time.Time) map[string]time.Time {
	seen := loadSeen(repo)
	capped := map[string]time.Time{}
	keep := map[seenKey]time.Time{}
	changed := false
	for _, e := range entries {
		if e.Run == nil || e.Run.Tip == "" {
			continue
		}
		k := seenKey{e.ID, e.Run.Tip}
		at, ok := seen[k]
		if ok {
			keep[k] = at
		}
		t, err := ledger.ParseStamp(e.Run.State.UpdatedAt)
		if err != nil || !t.After(now) && !ok {
			continue
		}
		if !ok {
			at, keep[k], changed = now, now, true
		}
		if t.After(at) {
			capped[e.ID] = at
		}
	}
	if len(keep) != len(seen) {
		changed = true // runs moved on: their records go
	}
	if changed {
		defer repo.Mutex(ctx, "seen", 2*time.Second)()
		lines := make([]string, 0, len(keep))
		for k, at := range keep {
			lines = append(lines, fmt.Sprintf("%s %s %d", k.run, k.tip, at.UnixNano()))
		}
		slices.Sort(lines)
		_ = repo.WriteLocal(seenFile, []byte(strings.Join(lines, "\n")+"\n")) // best effort: a read must not fail for it
	}
	return capped
}

// NoteArrivals records when this clone first saw each run tip dated in the future
// (pull calls it once the runs arrived): see arrivals.
func NoteArrivals(ctx context.Context, store *gitstate.Store, now time.Time) error {
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListStates, NoFetch: true})
	if err != nil {
		return err
	}
	arrivals(ctx, store.Repo, entries, now)
	return nil
}
