package gitstate

import (
	"context"
	"encoding/json"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// FinishedBy is, for each of runs, the event with which it last became finished (its
// status completed or failed: ledger.RunTerminal), read from its chain as of its Tip:
// the event of the oldest commit of the run of finished states that ends at the tip,
// which must itself say it ended the run in that status (ledger.EndedRun). Every
// commit read must hold its place in the chain (its state's seq and its event's, the
// tip's being the run's State.Seq), so that an event copied from elsewhere in the
// chain into a commit that declares the run finished is never taken for the finish.
// An element is nil when its run is not finished or its chain does not hold such an
// event whole (a run's first event never finishes it here: only an import makes a run
// finished, and its events are none of this clone's).
//
// The walk goes back one commit per round for all the runs at once, in one read of
// objects per round: a run's finish is most often its last event, so one round tells
// most runs, whatever their number and their chains' length.
//
// The event is what the run's finish says of who finished it: its MAC says whether
// this clone wrote it (ledger.SessionKey.OwnEvent), which gc asks before it drops
// anything of a run's because it is finished (docs/contract.md §8).
func (s *Store) FinishedBy(ctx context.Context, runs []*ledger.Run) ([]*ledger.Event, error) {
	type walk struct {
		i      int     // the run's index in runs
		tip    git.OID // its tip
		back   int     // the commit whose event this round reads: tip~back
		status string  // that commit's state's status (finished)
	}
	out := make([]*ledger.Event, len(runs))
	var pending []walk
	for i, r := range runs {
		if tip, err := git.ParseOID(r.Tip); err == nil && ledger.RunTerminal(r.State.Status) && r.State.Seq > 0 {
			pending = append(pending, walk{i: i, tip: tip, status: r.State.Status})
		}
	}
	for len(pending) > 0 {
		// Each round reads, for each run, the event of tip~back (whose state, finished,
		// the round before read, or the run's own for the tip) and the state of the
		// commit before it.
		var specs []git.BlobSpec
		for _, w := range pending {
			specs = append(specs, git.BlobSpec{Commit: w.tip, Path: "event.json", Back: w.back},
				git.BlobSpec{Commit: w.tip, Path: "state.json", Back: w.back + 1})
		}
		blobs, err := s.Repo.BlobsAt(ctx, specs)
		if err != nil {
			return nil, err
		}
		var next []walk
		for _, w := range pending {
			seq := runs[w.i].State.Seq - w.back
			eb, sb := blobs[0], blobs[1]
			blobs = blobs[2:]
			var e ledger.Event
			var before struct {
				Status string `json:"status"`
				Seq    int    `json:"seq"`
			}
			if seq <= 1 || eb.Err != nil || ledger.DecodeDoc(eb.Data, &e) != nil || ledger.CheckEvent(&e) != nil || e.Seq != seq ||
				sb.Err != nil || json.Unmarshal(sb.Data, &before) != nil || before.Seq != seq-1 {
				continue // not a chain whose finish can be told
			}
			if !ledger.RunTerminal(before.Status) {
				if ledger.EndedRun(&e) == w.status {
					out[w.i] = &e
				}
				continue
			}
			w.back, w.status = w.back+1, before.Status
			next = append(next, w)
		}
		pending = next
	}
	return out, nil
}
