package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/internal/progress"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
)

// Outcomes of one run's import.
const (
	Imported  = "imported"
	Unchanged = "unchanged"
	Refused   = "refused"
	Planned   = "planned"
)

// Result is what happened to one source run.
type Result struct {
	*Plan
	Outcome         string `json:"outcome"`
	Reason          string `json:"reason,omitempty"`
	Events          int    `json:"events"`
	BaselineMissing bool   `json:"baseline_missing,omitempty"`
	Snapshot        string `json:"snapshot,omitempty"`
}

// Apply writes each plan as a run (or, with dry, only says what it would do). The
// source files are never written; nothing outside refs/atlas and the objects is.
// It reports one step per run to pr (nil: no progress).
func Apply(ctx context.Context, store *gitstate.Store, plans []*Plan, dry bool, pr progress.Reporter) []Result {
	var out []Result
	progress.Start(pr, "importing runs", len(plans))
	defer progress.Done(pr)
	for _, p := range plans {
		out = append(out, apply(ctx, store, p, dry))
		progress.Add(pr, 1)
	}
	return out
}

func apply(ctx context.Context, store *gitstate.Store, p *Plan, dry bool) Result {
	res := Result{Plan: p, Events: len(p.Events)}
	repo := store.Repo
	old, err := store.Load(ctx, p.RunID)
	switch {
	case err == nil:
		src := old.Header.ImportedFrom
		if src == nil || src.System != p.Header.ImportedFrom.System || src.SourceID != p.SourceID {
			res.Outcome, res.Reason = Refused, fmt.Sprintf("a run %q already exists and was not imported from this source", p.RunID)
			return res
		}
		if src.Hash == p.Header.ImportedFrom.Hash {
			// An import cut short (killed between events) left a prefix of the
			// same history: write the rest. A complete one is left alone.
			from := old.State.Seq
			if from >= len(p.Events) {
				res.Outcome, res.Events = Unchanged, 0
				// An import killed after its last event but before adopting the
				// worktree adopts it now (a dirty one's snapshot is content-derived,
				// so one taken before the kill is reused, not doubled).
				if p.Worktree != "" && old.State.Worktree("imported") == nil {
					if ok, _ := isWorktree(ctx, repo, p.Worktree); ok {
						if dry {
							res.Outcome = Planned
							return res
						}
						if err := adopt(ctx, store, p, &res); err != nil {
							p.Notes = append(p.Notes, fmt.Sprintf("worktree %s not adopted: %v", p.Worktree, err))
							return res
						}
						res.Outcome = Imported
					}
				}
				return res
			}
			res.Events = len(p.Events) - from
			if p.Worktree != "" {
				if ok, _ := isWorktree(ctx, repo, p.Worktree); !ok {
					p.Worktree = ""
				}
			}
			if dry {
				res.Outcome = Planned
				return res
			}
			return finish(ctx, store, p, res, from)
		}
		res.Outcome, res.Reason = Refused, "the source changed since it was imported; its history can no longer be told apart from the imported one, so nothing was written (remove the imported run's ref to import it again)"
		return res
	case !errors.Is(err, fault.ErrNotFound):
		res.Outcome, res.Reason = Refused, err.Error()
		return res
	}
	noteBadBaseline(p)
	res.BaselineMissing = p.Header.ImportedFrom.BaselineMissing
	for i := range p.States {
		if err := ledger.CheckDocuments(&p.Header, &p.States[i]); err != nil {
			res.Outcome, res.Reason = Refused, err.Error()
			return res
		}
	}
	for i := range p.Events { // all of them before the first is written
		if err := ledger.CheckEvent(&p.Events[i]); err != nil {
			res.Outcome, res.Reason = Refused, fmt.Sprintf("event %d: %v", i+1, err)
			return res
		}
	}
	var pins []git.RefUpdate
	if b := p.Header.Baseline; !b.IsZero() {
		if t, err := repo.ObjectType(ctx, b); err == nil && t == "commit" {
			pins = append(pins, baseline.Pin(p.RunID, "baseline", b.String()))
		} else {
			res.BaselineMissing = true
			p.Header.ImportedFrom.BaselineMissing = true
			p.Notes = append(p.Notes, fmt.Sprintf("baseline %s does not exist in this repository: imported, not pinned", b))
		}
	}
	if p.Worktree != "" {
		if ok, why := isWorktree(ctx, repo, p.Worktree); !ok {
			p.Notes = append(p.Notes, fmt.Sprintf("%s is not a git worktree of this repository (%s): left alone", p.Worktree, why))
			p.Worktree = ""
		}
	}
	if dry {
		res.Outcome = Planned
		return res
	}
	if _, err := store.Create(ctx, p.Header, p.States[0], p.Events[0], pins...); err != nil {
		res.Outcome, res.Reason = Refused, err.Error()
		return res
	}
	return finish(ctx, store, p, res, 1)
}

// finish writes the plan's events from index from on, then adopts the worktree.
func finish(ctx context.Context, store *gitstate.Store, p *Plan, res Result, from int) Result {
	for i := from; i < len(p.Events); i++ {
		st, ev := p.States[i], p.Events[i]
		_, err := store.Update(ctx, p.RunID, func(r *ledger.Run) (*gitstate.Change, error) {
			seq, epoch, wts, snaps := r.State.Seq, r.State.Epoch, r.State.Worktrees, r.State.Snapshots
			r.State = clone(st)
			r.State.Seq, r.State.Epoch, r.State.Worktrees, r.State.Snapshots = seq, epoch, wts, snaps
			return &gitstate.Change{Event: ev}, nil
		})
		if err != nil {
			res.Outcome, res.Reason = Refused, fmt.Sprintf("stopped after event %d: %v", i, err)
			return res
		}
	}
	if p.Worktree != "" {
		if err := adopt(ctx, store, p, &res); err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("worktree %s not adopted: %v", p.Worktree, err))
		}
	}
	res.Outcome = Imported
	return res
}

// isWorktree reports whether path is one of the repository's linked worktrees: git
// lists it, and its .git file names a registration of this repository. The main
// worktree (the user's checkout) is never one a source's run worked in.
func isWorktree(ctx context.Context, repo *git.Repository, path string) (bool, string) {
	for _, p := range []string{path, filepath.Dir(path)} {
		if confine.NoSymlink(p) != nil {
			return false, p + " is a symbolic link" // a source's link to a worktree it did not make
		}
	}
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return false, err.Error()
	}
	want := resolved(path)
	for _, w := range list {
		if resolved(w.Path) == want {
			if !repo.OwnsWorktree(w.Path) {
				return false, "it is the repository's main worktree, not a linked one"
			}
			return true, ""
		}
	}
	return false, "git does not list it"
}

func resolved(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// adopt records the source's worktree as the run's node worktree, snapshotting it
// first when it holds changes (docs/contract.md §7).
func adopt(ctx context.Context, store *gitstate.Store, p *Plan, res *Result) error {
	repo := store.Repo
	var info git.WorktreeInfo
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		if resolved(w.Path) == resolved(p.Worktree) {
			info = w
		}
	}
	risk, err := recovery.Assess(ctx, repo, p.Worktree)
	if err != nil {
		return err
	}
	node := "imported"
	head, err := gitid.ParseOptional(info.Head)
	if err != nil {
		return fmt.Errorf("worktree %s: %w", info.Path, err)
	}
	if risk.Dirty {
		snap, err := recovery.Snapshot(ctx, store, recovery.Target{Run: p.RunID, Node: node, Path: info.Path, Baseline: head, Source: recovery.SourceWorktree}, recovery.Options{Reason: "import"})
		if err != nil {
			return err
		}
		res.Snapshot = snap.Rec.ID
	}
	rec := ledger.WorktreeRec{Node: node, Path: info.Path, Branch: info.Branch, Baseline: p.Header.Baseline, Head: head, Adopted: p.Header.ImportedFrom.System}
	_, err = store.Update(ctx, p.RunID, func(r *ledger.Run) (*gitstate.Change, error) {
		if r.State.Worktree(node) != nil {
			return nil, errors.New("already adopted")
		}
		r.State.Worktrees = append(r.State.Worktrees, rec)
		data := ledger.WorktreeAdoptedData{Path: info.Path, Dirty: risk.Dirty, Snapshot: res.Snapshot}
		return &gitstate.Change{Event: ledger.WorktreeAdoptedEvent(ledger.About{}, data)}, nil
	})
	return err
}

// sourceBaseline is a source's baseline as the ledger holds it: a full object id, or
// the zero id for anything else (a source may hold an abbreviated id, or anything):
// the ledger holds object ids only (gitid.OID), and a source's text never reaches git
// as a revision.
func sourceBaseline(s string) gitid.OID {
	id, err := gitid.ParseOID(s)
	if err != nil {
		return gitid.OID{}
	}
	return id
}

// runBaseline is sourceBaseline for the run's own baseline, keeping one that is not
// an object id for noteBadBaseline.
func (p *Plan) runBaseline(s string) gitid.OID {
	id := sourceBaseline(s)
	if id.IsZero() && s != "" {
		p.badBaseline = s
	}
	return id
}

// noteBadBaseline records a run imported without the baseline its source named,
// because that was not a full object id: missing, with a note.
func noteBadBaseline(p *Plan) {
	if p.badBaseline != "" {
		p.Header.ImportedFrom.BaselineMissing = true
		p.Notes = append(p.Notes, fmt.Sprintf("baseline %q is not a full object id: imported without it", p.badBaseline))
	}
}
