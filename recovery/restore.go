package recovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
)

// Entry is a recovery snapshot as listed: its ledger record, or (for a snapshot whose
// run's ledger is gone) what its ref says.
type Entry struct {
	RunID string
	gitstate.SnapshotRec
	// Unrecorded means the ref exists but no ledger records it.
	Unrecorded bool
}

// List returns the snapshots of run (every run when ""), oldest first, plus pinned
// snapshots no ledger records.
func List(ctx context.Context, store *gitstate.Store, run string) ([]Entry, error) {
	var runs []*gitstate.Run
	if run != "" {
		r, err := store.Load(ctx, run)
		if err != nil {
			return nil, err
		}
		runs = []*gitstate.Run{r}
	} else {
		entries, err := store.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Run != nil {
				runs = append(runs, e.Run)
			}
		}
	}
	var list []Entry
	recorded := map[string]bool{}
	for _, r := range runs {
		for _, s := range r.State.Snapshots {
			list = append(list, Entry{RunID: r.Header.RunID, SnapshotRec: s})
			recorded[s.Ref] = true
		}
	}
	prefix := strings.TrimSuffix(gitstate.RecoveryPrefix, "/")
	if run != "" {
		prefix = gitstate.RecoveryPrefix + run
	}
	refs, err := store.Repo.ListRefs(ctx, prefix)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		if recorded[ref.Name] {
			continue
		}
		rest := strings.TrimPrefix(ref.Name, gitstate.RecoveryPrefix)
		runID, id, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		list = append(list, Entry{RunID: runID, SnapshotRec: gitstate.SnapshotRec{ID: id, Ref: ref.Name, Commit: ref.ID}, Unrecorded: true})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].CreatedAt != list[j].CreatedAt {
			return list[i].CreatedAt < list[j].CreatedAt
		}
		return list[i].Ref < list[j].Ref
	})
	return list, nil
}

// Find resolves SNAPSHOT: an id, or <run>/<id>. An id two runs share is ambiguous.
func Find(ctx context.Context, store *gitstate.Store, spec string) (*Entry, error) {
	run, id, scoped := strings.Cut(spec, "/")
	if !scoped {
		id, run = spec, ""
	}
	if id == "" || strings.Contains(id, "/") {
		return nil, fault.Usage("invalid snapshot %q: give <id> or <run>/<id>", spec)
	}
	if run != "" {
		if err := gitstate.ValidName("run", run); err != nil {
			return nil, err
		}
	}
	list, err := List(ctx, store, run)
	if err != nil && !(run != "" && errors.Is(err, fault.ErrNotFound)) {
		return nil, err
	}
	if err != nil { // the run is gone; its ref may not be
		commit, rerr := store.Repo.ReadRef(ctx, gitstate.RecoveryPrefix+run+"/"+id)
		if rerr != nil || commit == "" {
			return nil, fault.NotFound("no snapshot %q", spec).WithHint("`git atlas recovery list` shows every snapshot")
		}
		return &Entry{RunID: run, SnapshotRec: gitstate.SnapshotRec{ID: id, Ref: gitstate.RecoveryPrefix + run + "/" + id, Commit: commit}, Unrecorded: true}, nil
	}
	var found []Entry
	for _, e := range list {
		if e.ID == id {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return nil, fault.NotFound("no snapshot %q", spec).WithHint("`git atlas recovery list` shows every snapshot")
	case 1:
		return &found[0], nil
	}
	var names []string
	for _, e := range found {
		names = append(names, e.RunID+"/"+e.ID)
	}
	return nil, fault.Usage("snapshot %q is in several runs: %s", spec, strings.Join(names, ", ")).WithHint("name it as <run>/<id>")
}

// Details is what `recovery show` reports.
type Details struct {
	Entry
	Snap     *Snap
	Staged   []git.NameStatus // HEAD -> index
	Unstaged []git.NameStatus // index -> worktree (untracked files are additions)
	Baseline []git.NameStatus // baseline -> worktree: what the patch holds
}

// Show reads a snapshot and what it holds.
func Show(ctx context.Context, store *gitstate.Store, spec string) (*Details, error) {
	e, err := Find(ctx, store, spec)
	if err != nil {
		return nil, err
	}
	repo := store.Repo
	s, err := Open(ctx, repo, e.Commit)
	if err != nil {
		return nil, err
	}
	d := &Details{Entry: *e, Snap: s}
	head := s.Manifest.Head
	if head == "" {
		if head, err = repo.EmptyTree(ctx); err != nil {
			return nil, err
		}
	}
	if d.Staged, err = repo.DiffNames(ctx, head, s.IndexTree); err != nil {
		return nil, err
	}
	if d.Unstaged, err = repo.DiffNames(ctx, s.IndexTree, s.Tree); err != nil {
		return nil, err
	}
	if s.Manifest.Baseline != "" {
		if d.Baseline, err = repo.DiffNames(ctx, s.Manifest.Baseline, s.Tree); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Restore writes a snapshot into to, a directory that must not exist or be empty.
// Without asWorktree it holds the snapshot's files only, byte for byte with their
// modes and links. With asWorktree it becomes a linked worktree (detached at the
// snapshot's HEAD) whose index is the snapshot's index, unmerged stages included, and
// whose files are the snapshot's tree: the staged/unstaged split as it was. Either
// way the result is checked file by file against the snapshot.
func Restore(ctx context.Context, repo *git.Repository, commit, to string, asWorktree bool) (*Snap, error) {
	s, err := Open(ctx, repo, commit)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(to)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return nil, fault.Usage("%s exists and is not empty", abs).WithHint("restore into a new directory")
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fault.Usage("restore into %s: %v", abs, err)
	}
	if asWorktree {
		if err := restoreWorktree(ctx, repo, s, abs); err != nil {
			return nil, err
		}
	} else if err := restoreFiles(ctx, repo, s, abs); err != nil {
		return nil, err
	}
	v := &verifier{repo: repo, root: abs}
	if asWorktree {
		v.wt = repo.Worktree(abs)
	}
	if _, err := v.check(ctx, s.Tree); err != nil {
		return nil, fmt.Errorf("restored %s does not match snapshot %s: %w", abs, commit, err)
	}
	return s, nil
}

func restoreFiles(ctx context.Context, repo *git.Repository, s *Snap, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ti, err := repo.NewTempIndex()
	if err != nil {
		return err
	}
	defer ti.Close()
	if err := ti.ReadTree(ctx, s.Tree); err != nil {
		return err
	}
	if err := ti.CheckoutTo(ctx, dir+string(filepath.Separator)); err != nil {
		return fmt.Errorf("restore files into %s: %w", dir, err)
	}
	return nil
}

func restoreWorktree(ctx context.Context, repo *git.Repository, s *Snap, dir string) error {
	if s.Manifest.Head == "" {
		return fault.Refused("snapshot %s was taken on an unborn branch: restore it as files (without --worktree)", s.Commit)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err // an empty directory: worktree add wants to make it
	}
	if err := repo.AddWorktree(ctx, dir, s.Manifest.Head, "", nil); err != nil {
		return fmt.Errorf("add worktree %s: %w", dir, err)
	}
	wt := repo.Worktree(dir)
	if err := applyTo(ctx, wt, s); err != nil {
		return fmt.Errorf("restore into %s: %w", dir, err)
	}
	for _, name := range sortedKeys(s.Manifest.Pending) {
		if err := wt.SetPseudoRef(ctx, name, s.Manifest.Pending[name]); err != nil {
			return err
		}
	}
	return nil
}
