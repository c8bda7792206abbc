package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Entry is a recovery snapshot as listed: its ledger record, or (for a snapshot whose
// run's ledger is gone) what its ref says.
type Entry struct {
	RunID string
	ledger.SnapshotRec
	// Unrecorded means the ref exists but no ledger records it.
	Unrecorded bool
}

// List returns the snapshots of run (every run when ""), oldest first, plus pinned
// snapshots no ledger records. A snapshot no ledger records (its run dropped by gc,
// or its record lost) is described from its own commit: node, stage, source and
// baseline from the manifest in its meta commit, the time it was taken from the
// commit, the patch from its default path when the file is there. A run whose ledger
// is gone but whose snapshots are kept is listed from those; a run with neither is
// not found.
func List(ctx context.Context, store *gitstate.Store, run string) ([]Entry, error) {
	var runs []*ledger.Run
	gone := false
	if run != "" {
		if err := ledger.ValidName("run", run); err != nil {
			return nil, err
		}
		r, err := store.Load(ctx, run)
		switch {
		case err == nil:
			runs = []*ledger.Run{r}
		case errors.Is(err, fault.ErrNotFound):
			gone = true
		default:
			return nil, err
		}
	} else {
		entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
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
	prefix := strings.TrimSuffix(ledger.RecoveryPrefix, "/")
	if run != "" {
		prefix = ledger.RecoveryPrefix + run
	}
	refs, err := store.Repo.ListRefs(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var unrecorded []Entry
	for _, ref := range refs {
		if recorded[ref.Name] {
			continue
		}
		rest := strings.TrimPrefix(ref.Name, ledger.RecoveryPrefix)
		runID, id, ok := strings.Cut(rest, "/")
		if !ok || ledger.ValidName("run", runID) != nil || ledger.CheckSnapshotID(id) != nil {
			continue // no name git-atlas writes: not a snapshot of its
		}
		commit, err := git.ParseOID(ref.ID)
		if err != nil {
			continue // not a commit git-atlas pinned
		}
		unrecorded = append(unrecorded, Entry{RunID: runID, SnapshotRec: ledger.SnapshotRec{ID: id, Ref: ref.Name, Commit: commit}, Unrecorded: true})
	}
	if gone && len(unrecorded) == 0 {
		return nil, fault.NotFound("no run %q and no recovery snapshot of it", run).WithHint("`%s` shows every snapshot", fault.Do("recovery list"))
	}
	describe(ctx, store.Repo, unrecorded)
	list = append(list, unrecorded...)
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].CreatedAt != list[j].CreatedAt {
			return list[i].CreatedAt < list[j].CreatedAt
		}
		return list[i].Ref < list[j].Ref
	})
	return list, nil
}

// describe fills in what no ledger records about snapshots from the snapshots
// themselves: one for-each-ref for the commits' times and parents, one batch read of
// the manifests. A snapshot that cannot be read keeps what its ref says.
func describe(ctx context.Context, repo *git.Repository, list []Entry) {
	if len(list) == 0 {
		return
	}
	refs := make([]string, len(list))
	for i, e := range list {
		refs[i] = e.Ref
	}
	commits, err := repo.RefCommits(ctx, refs)
	if err != nil {
		return
	}
	type info struct {
		when int64
		meta string
	}
	infos := map[string]info{}
	for _, c := range commits {
		if len(c.Parents) < 2 {
			continue // not a snapshot commit
		}
		infos[c.Ref] = info{when: c.When, meta: c.Parents[len(c.Parents)-1]}
	}
	var specs []git.BlobSpec
	var at []int
	for i := range list {
		e := &list[i]
		in, ok := infos[e.Ref]
		if !ok {
			continue
		}
		e.CreatedAt = ledger.Stamp(time.Unix(in.when, 0))
		if p := repo.Layout().Patch(e.RunID, e.ID); isFile(p) {
			e.Patch = p
		}
		meta, err := git.ParseOID(in.meta)
		if err != nil {
			continue
		}
		specs, at = append(specs, git.BlobSpec{Commit: meta, Path: "manifest.json"}), append(at, i)
	}
	if len(specs) == 0 {
		return
	}
	blobs, err := repo.BlobsAt(ctx, specs)
	if err != nil {
		return
	}
	for k, b := range blobs {
		var m Manifest
		if b.Err != nil || json.Unmarshal(b.Data, &m) != nil || checkIdentity(&m) != nil {
			continue
		}
		e := &list[at[k]]
		e.Node, e.Stage, e.Source = m.Node, m.Stage, m.Source
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
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
		if err := ledger.ValidName("run", run); err != nil {
			return nil, err
		}
	}
	list, err := List(ctx, store, run)
	if err != nil && (run == "" || !errors.Is(err, fault.ErrNotFound)) {
		return nil, err
	}
	if err != nil { // the run is gone; its ref may not be
		hex, rerr := store.Repo.ReadRef(ctx, ledger.RecoveryPrefix+run+"/"+id)
		commit, perr := git.ParseOID(hex)
		if rerr != nil || perr != nil {
			return nil, fault.NotFound("no snapshot %q", spec).WithHint("`%s` shows every snapshot", fault.Do("recovery list"))
		}
		found := []Entry{{RunID: run, SnapshotRec: ledger.SnapshotRec{ID: id, Ref: ledger.RecoveryPrefix + run + "/" + id, Commit: commit}, Unrecorded: true}}
		describe(ctx, store.Repo, found)
		return &found[0], nil
	}
	var found []Entry
	for _, e := range list {
		if e.ID == id {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return nil, fault.NotFound("no snapshot %q", spec).WithHint("`%s` shows every snapshot", fault.Do("recovery list"))
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
	s, err := Open(ctx, repo, e.Commit.String())
	if err != nil {
		return nil, err
	}
	d := &Details{Entry: *e, Snap: s}
	trees := []git.OID{s.IndexTree, s.Tree}
	head := s.Manifest.Head
	if head.IsZero() {
		if head, err = repo.EmptyTree(ctx); err != nil {
			return nil, err
		}
	}
	if d.Staged, err = repo.DiffNames(ctx, head, trees[0]); err != nil {
		return nil, err
	}
	if d.Unstaged, err = repo.DiffNames(ctx, trees[0], trees[1]); err != nil {
		return nil, err
	}
	if !s.Manifest.Baseline.IsZero() {
		if d.Baseline, err = repo.DiffNames(ctx, s.Manifest.Baseline, trees[1]); err != nil {
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
//
// A snapshot may have been pulled (docs: "Shared data is hostile"): every tree and
// path of it is checked (checkSnap) before anything is written, and every file is
// written inside to, never through a link. to is an absolute path, resolved
// (symbolic links included), and never inside a working tree of the repository (the
// user's checkout or any worktree) nor its git directory: the same rule as recover's
// --patch-out. A failed --worktree restore leaves nothing it made behind.
func Restore(ctx context.Context, repo *git.Repository, commit git.OID, to string, asWorktree bool) (*Snap, error) {
	s, err := Open(ctx, repo, commit.String())
	if err != nil {
		return nil, err
	}
	cs, err := checkSnap(ctx, repo, s)
	if err != nil {
		return nil, err
	}
	abs, err := restoreTarget(ctx, repo, to)
	if err != nil {
		return nil, err
	}
	v := &verifier{repo: repo, root: abs, restored: true, skipped: toSet(paths(s.Manifest.Sparse))}
	check := func() error {
		if _, err := v.check(ctx, s.Tree.String()); err != nil {
			return fmt.Errorf("restored %s does not match snapshot %s: %w", abs, commit, err)
		}
		return nil
	}
	if asWorktree {
		v.wt = repo.Worktree(abs)
		err = restoreWorktree(ctx, repo, cs, abs, check)
	} else if err = restoreFiles(ctx, repo, cs, abs); err == nil {
		err = check()
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// restoreTarget resolves to and checks it may receive a restore: absolute (a relative
// path means nothing to a server with no meaningful working directory), outside every
// working tree of the repository and its git directory, and absent or an empty
// directory.
func restoreTarget(ctx context.Context, repo *git.Repository, to string) (string, error) {
	if !filepath.IsAbs(to) {
		return "", fault.Usage("restore into %q: not an absolute path", to).WithHint("give the directory as an absolute path")
	}
	abs := confine.RealPath(to)
	if wt, err := repo.WorkingTreeOf(ctx, abs); err != nil {
		return "", err
	} else if wt != "" {
		return "", fault.Usage("restore into %s: it is inside the working tree %s, and git-atlas never writes into a working tree", to, wt).
			WithHint("restore into a new directory outside it (e.g. %s)", filepath.Join(filepath.Dir(wt), filepath.Base(wt)+"-restored"))
	}
	for _, dir := range []string{repo.CommonDir, repo.GitDir} {
		if dir != "" && confine.Within(abs, confine.RealPath(dir)) {
			return "", fault.Usage("restore into %s: it is inside the repository's git directory %s", to, dir).WithHint("restore into a new directory outside it")
		}
	}
	if info, err := os.Lstat(abs); err == nil && !info.IsDir() {
		return "", fault.Usage("restore into %s: it exists and is not a directory", to).WithHint("restore into a new directory")
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", fault.Usage("%s exists and is not empty", abs).WithHint("restore into a new directory")
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fault.Usage("restore into %s: %v", abs, err)
	}
	return abs, nil
}

func restoreFiles(ctx context.Context, repo *git.Repository, s *checkedSnap, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := confine.New(dir)
	if err != nil {
		return err
	}
	// The blobs hold the bytes that were on disk: written verbatim, no smudge filter
	// or end-of-line conversion (a checkout would apply them a second time).
	if err := repo.WriteTreeFiles(ctx, s.tree, root); err != nil {
		return fmt.Errorf("restore files into %s: %w", dir, err)
	}
	return leaveSparse(dir, s.Snap)
}

// restoreWorktree makes dir a linked worktree holding the snapshot, then runs check.
// When any step fails, what it made is undone: the worktree's registration, its
// files, the directories made for it; an empty directory that stood at dir is put
// back.
func restoreWorktree(ctx context.Context, repo *git.Repository, s *checkedSnap, dir string, check func() error) (err error) {
	if s.Manifest.Head.IsZero() {
		return fault.Named(fault.ErrRefused, "snapshot %s was taken on an unborn branch: restore it as files (without {worktree})", s.Commit)
	}
	made, err := mkdirs(filepath.Dir(dir))
	if err != nil {
		return err
	}
	existed := false
	if err := os.Remove(dir); err == nil {
		existed = true // an empty directory: worktree add wants to make it
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	added := false
	defer func() {
		if err == nil {
			return
		}
		if added {
			// git's registration first (it deletes the files too), then whatever is
			// left; never anything but dir, which this restore made.
			if rerr := repo.RemoveAdded(ctx, dir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("clean up the worktree %s: %w", dir, rerr))
			}
			if rerr := removeTree(dir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("clean up %s: %w", dir, rerr))
			}
		}
		if existed {
			_ = os.Mkdir(dir, 0o755)
		}
		for _, m := range slices.Backward(made) {
			_ = os.Remove(m) // only if still empty
		}
	}()
	// No checkout: applyTo writes every file of the snapshot itself, verbatim.
	if err := repo.AddWorktreeNoCheckout(ctx, dir, s.Manifest.Head); err != nil {
		_, serr := os.Lstat(dir)
		added = serr == nil
		return fmt.Errorf("add worktree %s: %w", dir, err)
	}
	added = true
	wt := repo.Worktree(dir)
	if err := applyTo(ctx, wt, s); err != nil {
		return fmt.Errorf("restore into %s: %w", dir, err)
	}
	for _, name := range sortedKeys(s.Manifest.Pending) {
		if err := wt.SetPseudoRef(ctx, name, s.Manifest.Pending[name]); err != nil {
			return err
		}
	}
	return check()
}

// mkdirs makes dir and its missing parents, and returns those it made, outermost
// first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	slices.Reverse(missing)
	var made []string
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}
