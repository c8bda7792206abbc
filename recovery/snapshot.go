// Package recovery preserves worktrees before anything removes them: snapshots taken
// through a temporary index (never the worktree's own), binary patches, replay
// branches, and byte-exact restores (docs/contract.md §7).
//
// A snapshot is one commit pinned under refs/atlas/recovery/<run>/<id>:
//
//	tree       the whole worktree: tracked files as they are on disk, untracked files,
//	           and ignored files when asked for (up to a size cap)
//	parent 1   the worktree's HEAD (absent when unborn), so commits only HEAD reached
//	           stay reachable through the pinned ref
//	parent -2  the "index commit": the worktree's index as a tree (its staged state),
//	           parent HEAD, so staged and unstaged changes stay apart as in git stash
//	parent -1  the "meta commit": manifest.json (HEAD, baseline, ignored files, ...)
//	           and conflicts/<stage>/<path> for every stage of every unmerged path;
//	           its parents are MERGE_HEAD and friends, kept reachable
//
// The tree holds the bytes on disk, not git's converted content (see capture). Before
// the ref is written the tree is read back and compared, path by path, with the raw
// files on disk (blob id and mode); the ledger records the snapshot in the same
// transaction as the ref.
package recovery

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/internal/par"
	"github.com/git-atlas/git-atlas/internal/progress"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Snapshot sources.
const (
	SourceWorktree = "worktree" // a managed worktree
	SourceCheckout = "checkout" // the user's checkout, read-only
)

// DefaultIgnoredCap bounds the ignored files --include-ignored copies into a snapshot.
const DefaultIgnoredCap = 100 << 20

// Options tune a snapshot.
type Options struct {
	// Reason is recorded with the snapshot (e.g. "worktree remove", "resume").
	Reason string
	// IncludeIgnored copies ignored files into the snapshot, smallest names first, as
	// long as their total stays under IgnoredCap; the others are only listed.
	IncludeIgnored bool
	// IgnoredCap in bytes; 0 means DefaultIgnoredCap.
	IgnoredCap int64
	// Always makes PreserveAndRemove snapshot an existing worktree even when nothing
	// could be lost (resume may want a record of every worktree it resets).
	Always bool
	// KeepRecord makes PreserveAndRemove leave the worktree's ledger record in place:
	// resume recreates the worktree right after, and a resume killed in between must
	// still find the record to finish the job.
	KeepRecord bool
	// PatchOut is where the patch goes; "" means
	// <git-common-dir>/atlas/recovery/<run>/<snapshot>.patch.
	PatchOut string
	// ReplacePatch lets the patch replace a file at PatchOut (otherwise one that
	// appears there, even while the patch is written, is never overwritten).
	ReplacePatch bool
	// Progress hears of a snapshot's steps: capture, commit and read back, patch,
	// record (nil: nobody).
	Progress progress.Reporter
	// copied are the files a managed worktree was given from the user's checkout
	// (.worktreeinclude): never in a snapshot, whatever IncludeIgnored says; a copy
	// the agent made tracked stays out while it holds the bytes copied (copiedIDs,
	// their blob ids).
	copied    map[string]bool
	copiedIDs map[string]string
	// unrecorded: the snapshot's ref alone keeps it, no ledger records it
	// (SnapshotStray).
	unrecorded bool
}

// Target is the worktree to snapshot and what to record about it.
type Target struct {
	Run      string
	Node     string // the managed worktree's node ("" for the user's checkout)
	Stage    string
	Path     string    // the worktree's absolute path
	Baseline gitid.OID // the commit the patch is made against
	Source   string    // SourceWorktree or SourceCheckout
}

// Manifest is manifest.json in a snapshot's meta commit. It holds no times and no
// paths of this machine, so the same state always gives the same manifest (and the
// same snapshot id), wherever the worktree lives.
type Manifest struct {
	Schema int    `json:"schema"`
	Source string `json:"source"`
	Run    string `json:"run_id"`
	Node   string `json:"node,omitempty"`
	Stage  string `json:"stage,omitempty"`
	// Head, Baseline, Tree, IndexTree and Pending's ids decode only as full object ids:
	// a manifest may have been pulled (docs/contract.md §10), and a member that is not
	// one makes the snapshot refused, naming the member.
	Head     gitid.OID `json:"head,omitzero"`
	Branch   string    `json:"branch,omitempty"`
	Baseline gitid.OID `json:"baseline"`
	Tree     gitid.OID `json:"tree"`
	// IndexTree is the index's tree without its unmerged paths (those are under
	// conflicts/ in the meta tree).
	IndexTree gitid.OID `json:"index_tree"`
	// Unmerged names the conflicted paths (their stages are in the meta tree).
	Unmerged []Name `json:"unmerged,omitempty"`
	// AssumeUnchanged are index entries marked assume-unchanged (restored as such).
	AssumeUnchanged []Name `json:"assume_unchanged,omitempty"`
	// SkipWorktree are index entries marked skip-worktree whose files were on disk:
	// their bytes are in the tree like any file's (restored with the mark).
	SkipWorktree []Name `json:"skip_worktree,omitempty"`
	// Sparse are index entries marked skip-worktree whose files were absent on
	// purpose (a sparse checkout): the tree keeps their index blob, and a restore
	// leaves their files absent (marked again in a restored worktree).
	Sparse []Name `json:"sparse,omitempty"`
	// Pending holds MERGE_HEAD, CHERRY_PICK_HEAD, REVERT_HEAD when set.
	Pending    map[string]gitid.OID `json:"pending,omitempty"`
	Ignored    []IgnoredEntry       `json:"ignored,omitempty"`
	IgnoredCap int64                `json:"ignored_cap,omitempty"`
	// Embedded are nested repositories (or checked-out submodules): the tree holds
	// only their commit, not their files.
	Embedded []Name `json:"embedded,omitempty"`
}

// Name is a path in JSON: as a string when it is UTF-8, else base64 of its bytes
// (JSON cannot carry other bytes, and a lossy name is a lost file).
type Name struct {
	Path   string `json:"path,omitempty"`
	Base64 string `json:"path_base64,omitempty"`
}

// NameOf encodes a path.
func NameOf(p string) Name {
	if utf8.ValidString(p) {
		return Name{Path: p}
	}
	return Name{Base64: base64.StdEncoding.EncodeToString([]byte(p))}
}

// String decodes a path.
func (n Name) String() string {
	if n.Base64 != "" {
		b, err := base64.StdEncoding.DecodeString(n.Base64)
		if err == nil {
			return string(b)
		}
	}
	return n.Path
}

// IgnoredEntry is an ignored file, or a wholly ignored directory, of the worktree.
type IgnoredEntry struct {
	Name
	Dir      bool  `json:"dir,omitempty"`
	Files    int   `json:"files"`
	Size     int64 `json:"size"`
	Included int   `json:"included"` // files copied into the snapshot's tree
}

// Result is a snapshot as Snapshot made or found it.
type Result struct {
	Rec      ledger.SnapshotRec
	Manifest Manifest
	// Reused means an identical snapshot was already recorded (a re-run after a kill).
	Reused bool
}

// ErrChanged means the worktree changed while it was being snapshotted.
var ErrChanged = errors.New("worktree changed during the snapshot")

// Snapshot captures the worktree at t.Path without changing its index or files,
// checks the result against the files on disk, pins it, exports its patch and records
// it in the run's ledger. An identical earlier snapshot is reused.
func Snapshot(ctx context.Context, store *gitstate.Store, t Target, opt Options) (*Result, error) {
	if opt.IgnoredCap <= 0 {
		opt.IgnoredCap = DefaultIgnoredCap
	}
	repo := store.Repo
	wt := repo.Worktree(t.Path)
	if t.Source == SourceWorktree && t.Node != "" {
		// The user's files, perhaps secrets, and snapshots are pushed (docs/contract.md §15).
		copies, err := worktrees.IncludedCopies(repo, t.Run, t.Node)
		if err != nil {
			return nil, err
		}
		opt.copied, opt.copiedIDs = map[string]bool{}, copies
		for p := range copies {
			opt.copied[p] = true
		}
	}
	progress.Start(opt.Progress, "snapshot "+t.Path, 4)
	defer progress.Done(opt.Progress)
	c, err := captureTries(ctx, wt, t, opt)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", t.Path, err)
	}
	return persist(ctx, store, t, opt, c)
}

// captureTries captures the worktree, at most three times. The first capture stages
// only the paths a status this command kept names (git.Worktree.StatusKept: the one
// Assess asked for a moment ago), when there is one; an agent may still be writing,
// and a capture that does not match the disk is taken again, staging the whole
// worktree (add -A), then without git's conversion machinery (see capture) in case
// that is what differed.
func captureTries(ctx context.Context, wt *git.Worktree, t Target, opt Options) (*captured, error) {
	status, _ := wt.StatusKept()
	raw := false
	var c *captured
	var err error
	for range 3 {
		c, err = capture(ctx, wt, t, opt, raw, status)
		if !errors.Is(err, ErrChanged) && !errors.Is(err, errFastPath) || errors.Is(err, git.ErrNoSpace) {
			break // a full disk is not a race: reported, never retried (docs/contract.md §11.12)
		}
		if errors.Is(err, errConverted) {
			status, raw = nil, true // add -A would take the same file by its stat data again
			continue
		}
		if status != nil && errors.Is(err, ErrChanged) {
			status = nil // a path changed since the status, or one it does not show
			continue
		}
		status, raw = nil, true
	}
	return c, err
}

// persist writes a capture as a snapshot: its manifest and commits (read back), its
// pin, its patch and its ledger record; an identical snapshot already pinned or
// recorded is reused.
func persist(ctx context.Context, store *gitstate.Store, t Target, opt Options, c *captured) (*Result, error) {
	repo := store.Repo
	m := c.manifest
	mblob, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	mblob = append(mblob, '\n')
	metaTree, err := writeMetaTree(ctx, repo, mblob, c.unmerged)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: write manifest: %w", t.Path, err)
	}
	prefix := t.Node
	if prefix == "" {
		prefix = t.Stage
	}
	if prefix == "" {
		prefix = SourceCheckout
	}
	id := prefix + "-" + contentID(t.Source, m.Tree.String(), m.Head.String(), m.IndexTree.String(), metaTree.String())
	ref := ledger.RecoveryPrefix + t.Run + "/" + id

	res := &Result{Manifest: m}
	commit, err := repo.ReadRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	if commit != "" {
		// Same content, pinned by an earlier (perhaps killed) run: check it is what we
		// would write, then reuse it.
		if err := checkCommit(ctx, repo, commit, m, metaTree); err != nil {
			return nil, fmt.Errorf("snapshot %s: existing %s does not match: %w", t.Path, ref, err)
		}
		res.Reused = true
	} else {
		commit, err = writeCommits(ctx, repo, id, t.Path, m, metaTree)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", t.Path, err)
		}
		if err := checkCommit(ctx, repo, commit, m, metaTree); err != nil {
			return nil, fmt.Errorf("snapshot %s: read back %s: %w", t.Path, commit, err)
		}
	}
	// The ids the ledger records (the snapshot event's head and baseline too).
	commitID, err := git.ParseOID(commit)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", t.Path, err)
	}
	progress.Add(opt.Progress, 2) // captured, committed and read back
	patch := opt.PatchOut
	if patch == "" {
		patch = repo.Layout().Patch(t.Run, id)
	}
	if err := writePatch(ctx, repo, patch, t.Baseline, m.Tree, opt.PatchOut == "", opt.PatchOut == "" || opt.ReplacePatch); err != nil {
		return nil, fmt.Errorf("snapshot %s: export patch: %w", t.Path, err)
	}
	progress.Add(opt.Progress, 1)
	rec := ledger.SnapshotRec{ID: id, Node: t.Node, Stage: t.Stage, Ref: ref, Commit: commitID, Patch: patch,
		Source: t.Source, Reason: opt.Reason, CreatedAt: ledger.Stamp(store.Now())}
	if opt.unrecorded {
		// No ledger to record it in (its run is gone): the ref alone keeps it, made
		// create-only and flushed before the caller deletes anything.
		if !res.Reused {
			if err := repo.UpdateRefs(ctx, "atlas: keep "+id, git.RefUpdate{Name: ref, New: commit, Old: git.ZeroID}); err != nil {
				return nil, fmt.Errorf("pin snapshot %s: %w", id, err)
			}
		}
		if err := repo.SyncRefs(ref); err != nil {
			return nil, fmt.Errorf("pin snapshot %s: %w", id, err)
		}
		res.Rec = rec
		return res, nil
	}
	_, err = store.Update(ctx, t.Run, func(r *ledger.Run) (*gitstate.Change, error) {
		for _, s := range r.State.Snapshots {
			if s.ID == id {
				rec, res.Reused = s, true
				return nil, nil
			}
		}
		r.State.Snapshots = append(r.State.Snapshots, rec)
		data := ledger.SnapshotData{ID: id, Node: t.Node, Ref: ref, Commit: commitID, Patch: patch,
			Source: t.Source, Reason: opt.Reason, Head: m.Head, Baseline: t.Baseline}
		old := git.ZeroID
		if res.Reused {
			old = commit // pinned already: the transaction only checks it is still there
		}
		return &gitstate.Change{
			Event: ledger.SnapshotEvent(ledger.About{Stage: t.Stage}, data),
			Refs:  []git.RefUpdate{{Name: ref, New: commit, Old: old}},
		}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("record snapshot %s: %w", id, err)
	}
	if res.Reused {
		if err := repin(ctx, repo, rec); err != nil {
			return nil, fmt.Errorf("record snapshot %s: %w", id, err)
		}
	}
	// Durable before destructive (docs/contract.md §11.12): callers delete or reset the worktree as
	// soon as this returns. A transaction of this call flushed its refs itself; a
	// snapshot recorded by an earlier, killed process may have refs no one flushed.
	if err := repo.SyncRefs(gitstate.RunRef(t.Run), rec.Ref); err != nil {
		return nil, fmt.Errorf("record snapshot %s: %w", id, err)
	}
	if rec.Patch != patch {
		// Recorded earlier with another --patch-out: both files hold the same patch.
		rec.Patch = patch
	}
	res.Rec = rec
	return res, nil
}

// repin makes sure the ref of a recorded snapshot exists. git commits a
// transaction's refs one lock rename at a time, in the order given (the ledger's
// first): a writer killed between the renames leaves the snapshot recorded, its ref
// never made and that ref's lock behind. The recorded commit was flushed before the
// transaction began; pin it, waiting out the dead writer's lock (git.Repository.LockAge;
// the wait is told to its OnLockWait), or the work it keeps is kept by nothing.
func repin(ctx context.Context, repo *git.Repository, rec ledger.SnapshotRec) error {
	deadline := time.Now().Add(2 * repo.LockAge())
	tell := repo.TellLockWait()
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		cur, err := repo.ReadRef(ctx, rec.Ref)
		if err != nil || cur != "" {
			return err // pinned (by this writer, or anyone: the ref is the pin either way)
		}
		if rec.Commit.IsZero() || !repo.HasObject(ctx, rec.Commit) {
			return fmt.Errorf("snapshot %s is recorded at %s, which is missing, and %s is gone", rec.ID, rec.Commit, rec.Ref)
		}
		err = repo.UpdateRefs(ctx, "atlas: pin snapshot "+rec.ID, git.RefUpdate{Name: rec.Ref, New: rec.Commit.String(), Old: git.ZeroID})
		if err == nil || !errors.Is(err, git.ErrRefConflict) || time.Now().After(deadline) {
			return err
		}
		tell(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// contentID is 12 hex digits of a hash over everything the snapshot holds.
func contentID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00", p)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// captured is what one pass over the worktree found.
type captured struct {
	manifest Manifest
	unmerged []git.IndexEntry
}

// errFastPath means `git add` failed where git's conversions were thought to be off;
// the capture is taken again the raw way.
var errFastPath = errors.New("stage the worktree into a temporary index")

// errConverted means the read-back found a file git staged by its stat data whose
// bytes on disk are not its blob's, nor its blob's size: a checkout converted it
// through a conversion configured no more. git would stage it so again, so the
// capture is taken again the raw way at once.
var errConverted = errors.New("a file checked out through a conversion git no longer applies")

// pendingRefs are the pseudo refs of an operation in progress that a snapshot keeps
// (Manifest.Pending) and restore puts back.
var pendingRefs = []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"}

// capture takes one pass over the worktree. The tree must hold every file's bytes as
// they are on disk, whatever git would convert on the way into the index (autocrlf,
// text/eol, clean filters, ident, working-tree-encoding). Two ways get there:
//
//   - the fast way, `git add -A` on a copy of the index, only when git can convert
//     nothing here (git.Worktree.Conversions: autocrlf off, no filter driver, no
//     attributes file): then add stores each changed file's bytes as they are, and an
//     untouched file (skipped by add because its stat data matches the index) holds
//     the index's blob byte for byte, since checkout wrote it unconverted;
//   - the raw way otherwise (rawTree): every file of the worktree hashed from its bytes,
//     the blobs git lacks written with `hash-object --no-filters`, no `add` at all, so
//     no filter of the user runs and no untouched file keeps a converted blob.
//
// Either way the read-back compares the tree with the bytes on disk, so a conversion
// the fast way missed (an untracked .gitattributes) fails the check, and the retry
// goes the raw way.
//
// The fast way stages only the paths status names (changed, deleted, unmerged,
// untracked) when a status is given, with those status does not look at
// (assume-unchanged, skip-worktree files on disk): git's own scan of the worktree,
// just made, is not made again. A path changed since, or one status did not show,
// leaves the tree unlike the disk, and the read-back fails the capture.
func capture(ctx context.Context, wt *git.Worktree, t Target, opt Options, raw bool, status []byte) (*captured, error) {
	resolved, err := wt.ResolveHead(ctx)
	if err != nil {
		return nil, err
	}
	head := resolved
	_, branch, _ := wt.Head(ctx)
	m := Manifest{Schema: 1, Source: t.Source, Run: t.Run, Node: t.Node, Stage: t.Stage,
		Head: head, Branch: branch, Baseline: t.Baseline}
	pending, err := wt.PseudoRefs(ctx, pendingRefs...)
	if err != nil {
		return nil, err
	}
	for name, id := range pending {
		if m.Pending == nil {
			m.Pending = map[string]gitid.OID{}
		}
		m.Pending[name] = id
	}

	// The trees are read back, and the blobs' sizes asked, through the command's
	// cat-file: started now, beside the steps below.
	wt.Repo.StartObjectReader(ctx)
	// The worktree's index, copied once: every later step works on copies of it.
	idx, err := wt.CopyIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	if err := leaveOutCopies(ctx, wt.Repo, idx, t.Path, opt.copiedIDs); err != nil {
		return nil, err
	}
	full, err := idx.Clone()
	if err != nil {
		return nil, err
	}
	defer full.Close()
	// Ignored files are never in the index, staged or not: the listing is the same
	// whatever the steps below change in the copy, so it runs beside them.
	type listing struct {
		paths []string
		err   error
	}
	ignoredList := make(chan listing, 1)
	go func() {
		if status != nil {
			// Where no ignore rule exists, git is not asked (a rule missed would leave a
			// file on disk that the read-back finds unstaged: the capture is taken
			// again, without status).
			if named, ok := git.ChangedPaths(status); ok && full.NothingIgnored(ctx, named) {
				ignoredList <- listing{}
				return
			}
		}
		paths, err := full.Ignored(ctx)
		ignoredList <- listing{paths, err}
	}()

	// The staged state: the index's tree. write-tree refuses unmerged entries, so
	// their stages are kept aside (in the meta tree) and the paths left out here.
	// The flags come from the same listing: full is a copy of idx, unchanged so far.
	entries, assumed, skipped, err := idx.EntriesFlagged(ctx)
	if err != nil {
		return nil, err
	}
	c := &captured{}
	var conflicted []string
	for _, e := range entries {
		if e.Stage == 0 {
			continue
		}
		c.unmerged = append(c.unmerged, e)
		if len(conflicted) == 0 || conflicted[len(conflicted)-1] != e.Path {
			conflicted = append(conflicted, e.Path)
			m.Unmerged = append(m.Unmerged, NameOf(e.Path))
		}
	}
	if err := idx.ForceRemove(ctx, conflicted); err != nil {
		return nil, err
	}
	// An index whose cache tree vouches for every entry names its tree itself (read
	// back below like any; git writes it when that fails).
	indexTree, cached := idx.CachedTree()
	if !cached {
		if indexTree, err = idx.WriteTree(ctx); err != nil {
			return nil, fmt.Errorf("write index tree: %w", err)
		}
	}
	m.IndexTree = indexTree

	// The whole worktree: add -A on the copy. Entries marked assume-unchanged would
	// hide their files' changes from add, so the copy forgets that mark.
	if err := full.ClearAssumeUnchanged(ctx, assumed); err != nil {
		return nil, err
	}
	for _, p := range assumed {
		m.AssumeUnchanged = append(m.AssumeUnchanged, NameOf(p))
	}
	// skip-worktree means "absent on purpose" (a sparse checkout) only when the file
	// is absent. A file that is there holds the user's bytes (the idiom for keeping a
	// local edit of a tracked file), which add -A and the raw tree would pass over:
	// the copy forgets the mark, so they are kept like any file's.
	var present []string
	absent := skipped[:0:0]
	for _, p := range skipped {
		if _, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p))); err == nil {
			present = append(present, p)
			m.SkipWorktree = append(m.SkipWorktree, NameOf(p))
		} else {
			absent = append(absent, p)
			m.Sparse = append(m.Sparse, NameOf(p))
		}
	}
	if err := full.ClearSkipWorktree(ctx, present); err != nil {
		return nil, err
	}
	skipped = absent
	if !raw {
		tracked := make([]string, len(entries))
		for i, e := range entries {
			tracked[i] = e.Path
		}
		why, err := wt.Conversions(ctx, tracked)
		if err != nil {
			return nil, err
		}
		raw = why != ""
	}
	l := <-ignoredList
	if l.err != nil {
		return nil, l.err
	}
	ignored := l.paths
	var include []string
	m.Ignored, include, err = sizeIgnored(t.Path, ignored, opt)
	if err != nil {
		return nil, err
	}
	if opt.IncludeIgnored {
		m.IgnoredCap = opt.IgnoredCap
	} else {
		include = nil
	}
	if raw {
		if m.Tree, err = rawTree(ctx, wt, full, entries, toSet(skipped), include); err != nil {
			return nil, err
		}
	} else if tree, ok, err := stageTree(ctx, full, status, append(assumed, present...), include); err != nil {
		return nil, fmt.Errorf("%w: %w", errFastPath, err)
	} else if ok {
		m.Tree = tree
	} else {
		if err := stage(ctx, full, status, append(assumed, present...)); err != nil {
			return nil, fmt.Errorf("%w: %w", errFastPath, err)
		}
		if err := full.AddForce(ctx, include); err != nil {
			return nil, fmt.Errorf("add ignored files: %w", err)
		}
		tree, err := full.WriteTree(ctx)
		if err != nil {
			return nil, fmt.Errorf("write worktree tree: %w", err)
		}
		m.Tree = tree
	}

	// Read the tree back and hold it against the disk; read the index tree back and
	// hold it against the index. The two checks are independent and run at once; the
	// disk's is reported first.
	v := &verifier{repo: wt.Repo, wt: wt, root: t.Path, skipped: toSet(skipped), stat: idx.StatData(), stagedByGit: !raw}
	// Both trees are read back together: the subtrees they share (every directory
	// the changes left alone) are read once. Should that fail, each is read on its own
	// below, and the failure is reported for the tree it concerns.
	var indexItems []git.TreeItem
	if lists, err := wt.Repo.LsTrees(ctx, m.Tree, m.IndexTree); err == nil {
		v.items, indexItems = lists[0], lists[1]
	}
	for _, e := range m.Ignored {
		v.addIgnored(e.String(), e.Dir)
	}
	var embedded []string
	checks := par.Each(2, 2, func(i int) (err error) {
		if i == 0 {
			embedded, err = v.check(ctx, m.Tree.String())
			return err
		}
		err = checkIndexTree(ctx, wt.Repo, indexTree, entries, indexItems)
		if err != nil && cached {
			// The cache tree named a tree the store does not hold as the index has
			// it (an object missing, a stale cache): git builds the tree from the
			// entries, not from the cache tree it would trust too.
			if indexTree, err = idx.WriteTreeAfresh(ctx); err != nil {
				return fmt.Errorf("write index tree: %w", err)
			}
			return checkIndexTree(ctx, wt.Repo, indexTree, entries, nil)
		}
		return err
	})
	for _, err := range checks {
		if err != nil {
			return nil, err
		}
	}
	m.IndexTree = indexTree
	for _, p := range embedded {
		m.Embedded = append(m.Embedded, NameOf(p))
	}
	c.manifest = m
	return c, nil
}

// stageTree stages the paths status names and hidden into the index copy full and
// writes the tree, in process (git.TempIndex.StageTree): no update-index and
// write-tree processes, neither of which needs to write an index nobody reads. ok is
// false when there is no status, ignored files are to be included, or StageTree
// leaves the case to git; then stage and git's write-tree do it.
func stageTree(ctx context.Context, full *git.TempIndex, status []byte, hidden, include []string) (git.OID, bool, error) {
	if status == nil || len(include) > 0 {
		return git.OID{}, false, nil
	}
	paths, ok := git.ChangedPaths(status)
	if !ok {
		return git.OID{}, false, nil
	}
	return full.StageTree(ctx, append(paths, hidden...))
}

// stage stages the worktree into the index copy full: the paths status names and
// hidden (the paths status does not look at), or, without a status or when staging
// those fails, the whole worktree (add -A).
func stage(ctx context.Context, full *git.TempIndex, status []byte, hidden []string) error {
	if status != nil {
		if paths, ok := git.ChangedPaths(status); ok {
			if err := full.StagePaths(ctx, append(paths, hidden...)); err == nil || errors.Is(err, git.ErrNoSpace) {
				return err
			}
		}
	}
	return full.AddAll(ctx)
}

// leaveOutCopies takes out of the index copy idx the files copied into the worktree at
// root from the user's checkout that the agent made tracked (`git add -f`) and that
// still hold, staged and on disk, the bytes copied (docs/contract.md §15): the user's
// files, perhaps secrets, which a pushed snapshot never takes. Out of the index they
// are the ignored files they were, which a snapshot leaves out as copies. One the
// agent changed is its work, and stays.
func leaveOutCopies(ctx context.Context, repo *git.Repository, idx *git.TempIndex, root string, ids map[string]string) error {
	known := false
	for _, id := range ids {
		known = known || id != ""
	}
	if !known {
		return nil
	}
	entries, _, _, err := idx.EntriesFlagged(ctx)
	if err != nil {
		return err
	}
	var out []string
	for _, e := range entries {
		id := ids[e.Path]
		if e.Stage != 0 || id == "" || e.ID != id || (e.Mode != "100644" && e.Mode != "100755") {
			continue
		}
		if onDisk, err := repo.BlobIDOfFile(filepath.Join(root, filepath.FromSlash(e.Path))); err == nil && onDisk == id {
			out = append(out, e.Path)
		}
	}
	return idx.ForceRemove(ctx, out)
}

// sizeIgnored measures the ignored entries and picks the files to include: in name
// order, each file that still fits under the cap.
func sizeIgnored(root string, ignored []string, opt Options) ([]IgnoredEntry, []string, error) {
	var list []IgnoredEntry
	var include []string
	var total int64
	for _, p := range ignored {
		e := IgnoredEntry{Name: NameOf(strings.TrimSuffix(p, "/")), Dir: strings.HasSuffix(p, "/")}
		var files []string
		var sizes []int64
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(p)), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir // a nested repository's own store: not a file of ours
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() && info.Mode()&os.ModeSymlink == 0 {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
			sizes = append(sizes, info.Size())
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("measure ignored %s: %w", p, err)
		}
		e.Files = len(files)
		for i, f := range files {
			e.Size += sizes[i]
			if opt.IncludeIgnored && !opt.copied[f] && total+sizes[i] <= opt.IgnoredCap {
				total += sizes[i]
				include = append(include, f)
				e.Included++
			}
		}
		list = append(list, e)
	}
	return list, include, nil
}

// checkIndexTree holds the index tree against the merged entries of the index copy:
// every one present with its mode and blob, and nothing else. An intent-to-add entry
// (an empty blob that write-tree leaves out) is the one allowed absence. items is the
// tree as read back already (nil: it is read here).
func checkIndexTree(ctx context.Context, repo *git.Repository, tree git.OID, entries []git.IndexEntry, items []git.TreeItem) error {
	if items == nil {
		var err error
		if items, err = repo.LsTree(ctx, tree); err != nil {
			return fmt.Errorf("read back index tree: %w", err)
		}
	}
	got := make(map[string]git.TreeItem, len(items))
	for _, it := range items {
		got[it.Path] = it
	}
	empty, err := emptyBlob(ctx, repo)
	if err != nil {
		return err
	}
	matched := 0
	for _, e := range entries {
		if e.Stage != 0 {
			continue
		}
		it, ok := got[e.Path]
		if !ok && e.ID == empty {
			continue
		}
		if !ok || it.ID != e.ID || it.Mode != e.Mode {
			return fmt.Errorf("index tree %s: %q is %s %s, the index has %s %s", tree, e.Path, it.Mode, it.ID, e.Mode, e.ID)
		}
		matched++
	}
	if matched != len(got) || len(got) != len(items) {
		// Every item an entry's: nothing the index does not hold (a stale cache tree).
		return fmt.Errorf("index tree %s holds %d files, the index %d", tree, len(items), matched)
	}
	return nil
}

func emptyBlob(ctx context.Context, repo *git.Repository) (string, error) {
	if repo.ObjectFormat == "sha256" {
		return "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813", nil
	}
	return "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", nil
}

// writeMetaTree builds {manifest.json, conflicts/<stage>/<path>} through a temporary
// index: the stages' blobs are in the store already, and write-tree nests the paths.
// Without conflicts the tree is manifest.json alone, written as one flat tree (by
// the object store's own writer: no update-index and write-tree processes).
func writeMetaTree(ctx context.Context, repo *git.Repository, manifest []byte, unmerged []git.IndexEntry) (git.OID, error) {
	blob, err := repo.WriteBlob(ctx, manifest)
	if err != nil {
		return git.OID{}, err
	}
	if len(unmerged) == 0 {
		return repo.WriteTree(ctx, []git.TreeEntry{{Name: "manifest.json", Blob: blob.String()}})
	}
	ti, err := repo.NewTempIndex()
	if err != nil {
		return git.OID{}, err
	}
	defer ti.Close()
	entries := []git.IndexEntry{{Mode: "100644", ID: blob.String(), Path: "manifest.json"}}
	for _, e := range unmerged {
		entries = append(entries, git.IndexEntry{Mode: e.Mode, ID: e.ID, Path: fmt.Sprintf("conflicts/%d/%s", e.Stage, e.Path)})
	}
	if err := ti.SetEntries(ctx, entries); err != nil {
		return git.OID{}, err
	}
	return ti.WriteTree(ctx)
}

// writeCommits writes the index commit, the meta commit and the snapshot commit.
func writeCommits(ctx context.Context, repo *git.Repository, id, path string, m Manifest, metaTree git.OID) (string, error) {
	var head []git.OID
	if !m.Head.IsZero() {
		head = []git.OID{m.Head}
	}
	index, err := repo.WriteCommit(ctx, m.IndexTree, head, "atlas snapshot "+id+": index\n")
	if err != nil {
		return "", fmt.Errorf("write index commit: %w", err)
	}
	var pending []git.OID
	for _, k := range sortedKeys(m.Pending) {
		pending = append(pending, m.Pending[k])
	}
	meta, err := repo.WriteCommit(ctx, metaTree, pending, "atlas snapshot "+id+": manifest\n")
	if err != nil {
		return "", fmt.Errorf("write meta commit: %w", err)
	}
	msg := fmt.Sprintf("atlas snapshot %s\n\nrun %s, %s %s, baseline %s\n", id, m.Run, m.Source, path, m.Baseline)
	commit, err := repo.WriteCommit(ctx, m.Tree, append(head, index, meta), msg)
	if err != nil {
		return "", fmt.Errorf("write snapshot commit: %w", err)
	}
	return commit.String(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkCommit reads a snapshot commit back from the object store and checks that its
// tree, parents, index tree and meta tree are what was captured.
func checkCommit(ctx context.Context, repo *git.Repository, commit string, m Manifest, metaTree git.OID) error {
	s, err := Open(ctx, repo, commit)
	if err != nil {
		return err
	}
	switch {
	case s.Tree != m.Tree:
		return fmt.Errorf("tree is %s, captured %s", s.Tree, m.Tree)
	case s.Manifest.Head != m.Head:
		return fmt.Errorf("head is %s, captured %s", s.Manifest.Head, m.Head)
	case s.IndexTree != m.IndexTree:
		return fmt.Errorf("index tree is %s, captured %s", s.IndexTree, m.IndexTree)
	case s.MetaTree != metaTree:
		return fmt.Errorf("meta tree is %s, captured %s", s.MetaTree, metaTree)
	}
	return nil
}

// writePatch exports the binary patch from base to tree into path, through a
// temporary file renamed into place, so a patch file is always whole. The tree holds
// the bytes that were on disk and base the baseline's stored blobs, so where git
// converts (autocrlf, eol, filters, ident, encodings) the patch also carries each
// checked-out file's conversion as a change (e.g. LF to CRLF); `git apply --index`
// on the baseline still gives exactly the snapshot's tree. With keep, an
// existing file is kept: at the default path, named by the snapshot id, its content is
// a function of base and tree (a --patch-out file is rewritten only with replace:
// otherwise the file is linked into place, which fails if anything is there).
func writePatch(ctx context.Context, repo *git.Repository, path string, base, to git.OID, keep, replace bool) error {
	if info, err := os.Stat(path); keep && err == nil && info.Mode().IsRegular() {
		return nil
	}
	from := base
	if from.IsZero() {
		var err error
		if from, err = repo.EmptyTree(ctx); err != nil {
			return fmt.Errorf("patch baseline: %w", err)
		}
	}
	f, err := git.CreateFile(path, 0o600)
	if err != nil {
		return err
	}
	if err := repo.WritePatch(ctx, f, from, to); err != nil {
		f.Abort()
		return err
	}
	if replace {
		return f.Commit()
	}
	if err := f.CommitNew(); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fault.Named(fault.ErrUsage, "%s exists: the patch does not replace it", path).WithHint("choose a new file, or pass {force} to replace it")
		}
		return err
	}
	return nil
}

// Snap is a snapshot commit read back from the object store.
type Snap struct {
	Commit    string
	Tree      git.OID
	IndexTree git.OID
	MetaTree  git.OID
	Manifest  Manifest
	// Unmerged are the stages of the unmerged paths, as index entries.
	Unmerged []git.IndexEntry
}

// Open reads a snapshot commit: its parents name the index and meta commits, and the
// meta tree holds the manifest and the conflict stages.
func Open(ctx context.Context, repo *git.Repository, commit string) (*Snap, error) {
	at, err := git.ParseOID(commit)
	if err != nil {
		return nil, fault.Refused("snapshot: %v", err)
	}
	info, err := repo.Commit(ctx, at)
	if err != nil {
		return nil, err
	}
	if len(info.Parents) < 2 {
		return nil, fault.Named(fault.ErrRefused, "%s is not a git-atlas snapshot (it has %d parents)", commit, len(info.Parents)).
			WithHint("a commit kept as it was (`union {force}` keeps one so) comes back with `git branch <name> %s`", commit)
	}
	parents := info.Parents[len(info.Parents)-2:]
	index, err := repo.Commit(ctx, parents[0])
	if err != nil {
		return nil, err
	}
	meta, err := repo.Commit(ctx, parents[1])
	if err != nil {
		return nil, err
	}
	s := &Snap{Commit: commit, Tree: info.Tree, IndexTree: index.Tree, MetaTree: meta.Tree}
	items, err := repo.LsTree(ctx, s.MetaTree)
	if err != nil {
		return nil, err
	}
	var mblob string
	for _, it := range items {
		if it.Path == "manifest.json" {
			mblob = it.ID
			continue
		}
		rest, ok := strings.CutPrefix(it.Path, "conflicts/")
		if !ok || len(rest) < 3 || rest[1] != '/' || rest[0] < '1' || rest[0] > '3' {
			continue
		}
		s.Unmerged = append(s.Unmerged, git.IndexEntry{Mode: it.Mode, ID: it.ID, Stage: int(rest[0] - '0'), Path: rest[2:]})
	}
	if mblob == "" {
		return nil, fault.Refused("%s is not a git-atlas snapshot (no manifest)", commit)
	}
	blobs, err := repo.BlobsAt(ctx, []git.BlobSpec{{Commit: parents[1], Path: "manifest.json"}})
	if err != nil {
		return nil, err
	}
	if blobs[0].Err != nil {
		return nil, blobs[0].Err
	}
	if err := json.Unmarshal(blobs[0].Data, &s.Manifest); err != nil {
		if msg, ok := gitid.OIDError(err); ok {
			return nil, refuseSnap(commit, "manifest", errors.New(msg))
		}
		return nil, fmt.Errorf("manifest of %s: %w", commit, err)
	}
	if s.Manifest.Tree != s.Tree || s.Manifest.IndexTree != s.IndexTree {
		return nil, fmt.Errorf("snapshot %s: manifest disagrees with its commits", commit)
	}
	if err := checkManifest(commit, &s.Manifest); err != nil {
		return nil, err
	}
	// ls-tree orders by path; the index orders each path's stages together.
	sort.SliceStable(s.Unmerged, func(i, j int) bool {
		if s.Unmerged[i].Path != s.Unmerged[j].Path {
			return s.Unmerged[i].Path < s.Unmerged[j].Path
		}
		return s.Unmerged[i].Stage < s.Unmerged[j].Stage
	})
	return s, nil
}

func toSet(list []string) map[string]bool {
	s := make(map[string]bool, len(list))
	for _, p := range list {
		s[p] = true
	}
	return s
}
