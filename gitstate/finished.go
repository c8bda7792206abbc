package gitstate

import (
	"context"
	"encoding/json"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// finishedBatch is how many ledger commits FinishedBy reads at once, walking back from
// the tip: a run's finish is most often among its last few events.
const finishedBatch = 8

// FinishedBy is the event with which run r last became finished (its status completed
// or failed: ledger.RunTerminal), read from r's chain as of r.Tip: the event of the
// oldest commit of the run of finished states that ends at the tip. Every commit read
// must hold its place in the chain (its state's seq and its event's, the tip's being
// r.State.Seq), so that an event copied from elsewhere in the chain into a commit that
// declares the run finished is never taken for the finish. It returns nil, with no
// error, when r is not finished or its chain does not hold such an event whole.
//
// The event is what the run's finish says of who finished it: its MAC says whether
// this clone wrote it (ledger.SessionKey.OwnEvent), which gc asks before it drops
// anything of a run's because it is finished (docs/contract.md §8).
func (s *Store) FinishedBy(ctx context.Context, r *ledger.Run) (*ledger.Event, error) {
	if !ledger.RunTerminal(r.State.Status) {
		return nil, nil
	}
	tip, err := git.ParseOID(r.Tip)
	if err != nil {
		return nil, nil
	}
	commits, err := s.Repo.FirstParents(ctx, tip)
	if err != nil {
		return nil, err
	}
	var turn *ledger.Event // the finished commit seen last, walking back
	for at := 0; at < len(commits); at += finishedBatch {
		batch := commits[at:min(at+finishedBatch, len(commits))]
		specs := make([]git.BlobSpec, 0, 2*len(batch))
		for _, c := range batch {
			specs = append(specs, git.BlobSpec{Commit: c, Path: "state.json"}, git.BlobSpec{Commit: c, Path: "event.json"})
		}
		blobs, err := s.Repo.BlobsAt(ctx, specs)
		if err != nil {
			return nil, err
		}
		for i := range batch {
			seq := r.State.Seq - (at + i)
			st, ev := blobs[2*i], blobs[2*i+1]
			var state struct {
				Status string `json:"status"`
				Seq    int    `json:"seq"`
			}
			var e ledger.Event
			if st.Err != nil || ev.Err != nil || json.Unmarshal(st.Data, &state) != nil || state.Seq != seq ||
				ledger.DecodeDoc(ev.Data, &e) != nil || ledger.CheckEvent(&e) != nil || e.Seq != seq {
				return nil, nil // not a chain whose finish can be told
			}
			if !ledger.RunTerminal(state.Status) {
				return turn, nil
			}
			turn = &e
		}
	}
	return turn, nil
}
