package gitstate

import (
	"context"
	"fmt"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// LoadAt reads a run as it was right after event seq (docs/contract.md §14): the ledger commit
// that event made, read like a tip. Events are numbered from 1; a seq outside the
// run's history is not found.
func (s *Store) LoadAt(ctx context.Context, id string, seq int) (*ledger.Run, error) {
	r, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	last := r.State.Seq
	if seq < 1 || seq > last {
		return nil, fault.NotFound("run %s has no event %d: its events are 1 to %d", id, seq, last).
			WithHint("`%s` lists them", fault.Do("log", "run", id))
	}
	if seq == last {
		return r, nil
	}
	tip, err := git.ParseOID(r.Tip)
	if err != nil {
		return nil, unreadable(id, "its tip: %v", err)
	}
	commits, err := s.Repo.FirstParents(ctx, tip)
	if err != nil {
		return nil, fmt.Errorf("walk ledger of %s: %w", id, err)
	}
	// commits is newest first and the tip holds event last.
	i := last - seq
	if i >= len(commits) {
		return nil, unreadable(id, "its ledger has %d commits for %d events", len(commits), last)
	}
	at, err := s.loadAt(ctx, id, commits[i].String())
	if err != nil {
		return nil, err
	}
	if at.State.Seq != seq {
		return nil, unreadable(id, "ledger commit %s holds event %d where event %d was expected", commits[i], at.State.Seq, seq)
	}
	return at, nil
}
