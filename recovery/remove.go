package recovery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/par"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Risk says what removing a worktree would lose.
type Risk struct {
	Missing     bool     `json:"missing,omitempty"`     // the directory is gone: nothing left to lose
	Dirty       bool     `json:"dirty,omitempty"`       // staged, unstaged or untracked changes, or a merge in progress
	Ignored     bool     `json:"ignored,omitempty"`     // ignored files (remove --force deletes them)
	Unreachable bool     `json:"unreachable,omitempty"` // HEAD is reached by no ref
	Reasons     []string `json:"reasons,omitempty"`
}

// Any reports whether a snapshot must come before removal.
func (r Risk) Any() bool { return !r.Missing && (r.Dirty || r.Ignored || r.Unreachable) }

// Assess finds what removing the worktree at path would lose. It reads only: status
// without optional locks, ls-files, for-each-ref. Changes and an unreachable HEAD are
// asked at once (the first error in that order is the one reported); ignored files
// only when neither makes a snapshot needed already (Ignored is then left false).
func Assess(ctx context.Context, repo *git.Repository, path string) (Risk, error) {
	var r Risk
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		r.Missing = true
		r.Reasons = append(r.Reasons, "missing")
		return r, nil
	}
	wt := repo.Worktree(path)
	errs := par.Each(2, 2, func(i int) error {
		switch i {
		case 0:
			dirty, err := wt.DirtyNow(ctx) // never a status read before: it guards the removal
			if err != nil {
				return err
			}
			if pending, err := wt.PseudoRefs(ctx, pendingRefs...); err != nil {
				return err
			} else if len(pending) > 0 {
				dirty = true // a merge, cherry-pick or revert in progress
			}
			if !dirty {
				// status skips files marked assume-unchanged, and skip-worktree files
				// that are on disk; their edits would be lost unseen.
				if dirty, err = wt.HidesChanges(ctx); err != nil {
					return err
				}
			}
			if !dirty {
				// status also calls clean a file checked out through a conversion that
				// is configured no more: its bytes on disk are no blob's, and no
				// checkout gives them back (docs/contract.md §7).
				converted, all, err := wt.ConvertedOnDisk(ctx)
				if err != nil {
					return err
				}
				dirty = all || len(converted) > 0
			}
			r.Dirty = dirty
		case 1:
			head, err := wt.ResolveHead(ctx)
			if err != nil || head.IsZero() {
				return err
			}
			reachable, err := repo.Reachable(ctx, head)
			if err != nil {
				return err
			}
			r.Unreachable = !reachable
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			return Risk{}, fmt.Errorf("assess %s: %w", path, err)
		}
	}
	if !r.Dirty && !r.Unreachable {
		// Ignored files alone make a snapshot worth taking; beside other work the
		// snapshot is taken anyway and lists them itself, so git is not asked twice.
		var err error
		if r.Ignored, err = wt.HasIgnored(ctx); err != nil {
			return Risk{}, fmt.Errorf("assess %s: %w", path, err)
		}
	}
	if r.Dirty {
		r.Reasons = append(r.Reasons, "dirty")
	}
	if r.Ignored {
		r.Reasons = append(r.Reasons, "ignored files")
	}
	if r.Unreachable {
		r.Reasons = append(r.Reasons, "HEAD reached by no ref")
	}
	return r, nil
}

// Removed is what PreserveAndRemove did.
type Removed struct {
	Node     string
	Path     string
	Risk     Risk
	Snapshot *Result // nil when there was nothing to lose
	// IgnoredDeleted are the ignored files and wholly ignored directories the removal
	// deleted without their bytes in the snapshot (without --include-ignored, or past
	// its cap), by name, count and size: ignored files may hold secrets, so they stay
	// out of snapshots, which are pushed, and are named instead (docs/contract.md §7).
	IgnoredDeleted []IgnoredEntry
}

// IgnoredLeftOut names the ignored files and directories snapshot id of run left out
// of its tree (those a reset or removal after it deletes).
func IgnoredLeftOut(ctx context.Context, store *gitstate.Store, run, id string) ([]IgnoredEntry, error) {
	e, err := Find(ctx, store, run+"/"+id)
	if err != nil {
		return nil, err
	}
	s, err := Open(ctx, store.Repo, e.Commit.String())
	if err != nil {
		return nil, err
	}
	return deletedIgnored(s.Manifest), nil
}

// IgnoredToDelete names the ignored files and wholly ignored directories of the
// worktree at path that a snapshot taken with opt would leave out (all of them
// without opt.IncludeIgnored; past opt.IgnoredCap with it), by name, count and size:
// those a reset or removal after it deletes. It reads only; a missing directory has
// none. Resume's and gc's plans list them (docs/contract.md §7).
func IgnoredToDelete(ctx context.Context, repo *git.Repository, path string, opt Options) ([]IgnoredEntry, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return []IgnoredEntry{}, nil
	}
	if opt.IgnoredCap == 0 {
		opt.IgnoredCap = DefaultIgnoredCap
	}
	paths, err := repo.Worktree(path).ListIgnored(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the ignored files of %s: %w", path, err)
	}
	list, _, err := sizeIgnored(path, paths, opt)
	if err != nil {
		return nil, err
	}
	return deletedIgnored(Manifest{Ignored: list}), nil
}

// deletedIgnored are the entries of m.Ignored whose files are not all in the
// snapshot's tree.
func deletedIgnored(m Manifest) []IgnoredEntry {
	out := []IgnoredEntry{}
	for _, e := range m.Ignored {
		if e.Included < e.Files || e.Files == 0 {
			out = append(out, e)
		}
	}
	return out
}

// PreserveAndRemove removes the managed worktree of node in run, first taking a
// verified snapshot whenever anything could be lost (docs/contract.md §7, invariant 2). It is
// crash-safe: the snapshot is pinned and recorded before anything is deleted, so if
// the process dies at any point, either the worktree is still there unchanged or a
// verified snapshot of it exists; running it again finishes the job (an unchanged
// state reuses the same snapshot).
func PreserveAndRemove(ctx context.Context, store *gitstate.Store, run, node string, opt Options) (*Removed, error) {
	if err := ledger.ValidName("node", node); err != nil {
		return nil, err
	}
	r, err := store.Load(ctx, run)
	if err != nil {
		return nil, err
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return nil, fault.NotFound("run %s has no worktree for node %q", run, node).WithHint("`%s` shows its worktrees", fault.Do("worktree list", "run", run))
	}
	if rec.Adopted != "" {
		return nil, fault.Refused("the worktree of node %s of run %s (%s) was adopted from %s at import: git-atlas did not make it and does not remove it; nothing was removed",
			node, run, rec.Path, rec.Adopted).WithHint("remove it yourself (`git worktree remove`) when nothing in it is needed; `%s` lists its snapshots", fault.Do("recovery list", "run", run)).
			WithWithheld(ledger.AdoptedWithheld(rec.Adopted)...)
	}
	repo := store.Repo
	// Only a worktree git-atlas manages is snapshotted and removed: a record that
	// names the user's checkout, one of the user's worktrees or anything outside the
	// managed root is refused with nothing touched (worktrees.Own).
	m, err := worktrees.Own(ctx, repo, run, *rec)
	if err != nil {
		return nil, err
	}
	risk, err := Assess(ctx, repo, m.Path)
	if err != nil {
		return nil, err
	}
	out := &Removed{Node: node, Path: rec.Path, Risk: risk}
	if risk.Any() || (opt.Always && !risk.Missing) {
		if opt.Reason == "" {
			opt.Reason = "worktree remove"
		}
		base := rec.Baseline
		if base.IsZero() {
			base = r.Header.Baseline
		}
		out.Snapshot, err = Snapshot(ctx, store, Target{Run: run, Node: node, Stage: rec.Stage, Path: m.Path, Baseline: base, Source: SourceWorktree}, opt)
		if err != nil {
			return nil, err
		}
		if len(out.Snapshot.Manifest.Embedded) > 0 {
			return out, fault.Refused("worktree %s holds a nested repository at %s whose files a snapshot cannot keep; nothing was removed",
				rec.Path, out.Snapshot.Manifest.Embedded[0].String()).WithHint("move it out of the worktree, then run the removal again")
		}
	}
	if err := removeAtomically(ctx, m); err != nil {
		return out, err
	}
	// The record of the files copied into it goes with it (docs/contract.md §15): a
	// worktree made there again records its own.
	if err := worktrees.ForgetIncluded(repo, run, node); err != nil {
		return out, err
	}
	out.IgnoredDeleted = []IgnoredEntry{}
	if out.Snapshot != nil {
		out.IgnoredDeleted = deletedIgnored(out.Snapshot.Manifest)
	}
	if opt.KeepRecord {
		return out, nil
	}
	_, err = store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		kept := r.State.Worktrees[:0:0]
		found := false
		for _, w := range r.State.Worktrees {
			if w.Node == node {
				found = true
				continue
			}
			kept = append(kept, w)
		}
		if !found {
			return nil, nil // a concurrent removal recorded it already
		}
		r.State.Worktrees = kept
		d := ledger.WorktreeRemovedData{Node: node, Path: rec.Path, Reasons: risk.Reasons}
		for _, e := range out.IgnoredDeleted {
			d.IgnoredDeleted = append(d.IgnoredDeleted, ledger.IgnoredFile{Path: e.Path, Base64: e.Base64, Dir: e.Dir, Files: e.Files, Size: e.Size, Included: e.Included})
		}
		if out.Snapshot != nil {
			d.Snapshot = out.Snapshot.Rec.ID
		}
		return &gitstate.Change{Event: ledger.WorktreeRemovedEvent(ledger.About{Stage: rec.Stage}, d)}, nil
	})
	if err != nil {
		return out, fmt.Errorf("record removal of %s: %w", rec.Path, err)
	}
	return out, nil
}

// trashPrefix names a worktree directory on its way out.
const trashPrefix = ".atlas-removing-"

// TrashPrefix starts the name of a worktree directory on its way out (beside where it
// was): one a killed removal left is listed by audit and removed by gc.
const TrashPrefix = trashPrefix

// removeAtomically takes the worktree directory out of its place with one rename
// before deleting anything, so that a kill never leaves a half-deleted worktree: the
// directory is either whole where it was, or whole in the trash beside it (where the
// next removal of the node finds and deletes it). `git worktree remove` deletes file by
// file, and a worktree that lost its .git file half-way cannot be inspected any more.
func removeAtomically(ctx context.Context, m *git.Managed) error {
	path := m.Path
	var b [6]byte
	_, _ = rand.Read(b[:])
	trash := filepath.Join(filepath.Dir(path), trashPrefix+filepath.Base(path)+"-"+hex.EncodeToString(b[:]))
	if err := os.Rename(path, trash); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	// The directory is gone from git's view: unlock and prune its administrative files.
	if err := m.Remove(ctx); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), trashPrefix+filepath.Base(path)+"-*"))
	for _, dir := range leftovers {
		if err := removeTree(dir); err != nil {
			return fmt.Errorf("remove worktree %s: %w", path, err)
		}
	}
	return nil
}

// removeTree deletes dir and everything under it. The files of different directories
// are unlinked by several goroutines at once (unlinks in different directories do not
// contend: a 20,000-file worktree took ~300 ms with os.RemoveAll alone, ~210 ms so;
// bench/issue14.sh, remove row); symbolic links are unlinked, never followed. What is
// left, the empty directories, goes with os.RemoveAll, which also reports anything
// that could not be deleted.
func removeTree(dir string) error {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return os.RemoveAll(dir) // a link is removed, not followed
	}
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var visit func(d string)
	visit = func(d string) {
		defer wg.Done()
		sem <- struct{}{}
		var subdirs []string
		if f, err := openDir(d); err == nil { // an error: os.RemoveAll below reports it
			ents, _ := f.ReadDir(-1)
			for _, e := range ents {
				if e.IsDir() {
					subdirs = append(subdirs, filepath.Join(d, e.Name()))
				} else {
					unlinkIn(f, e.Name())
				}
			}
			_ = f.Close()
		}
		<-sem
		for _, sub := range subdirs {
			wg.Add(1)
			go visit(sub)
		}
	}
	wg.Add(1)
	visit(dir)
	wg.Wait()
	return os.RemoveAll(dir)
}
