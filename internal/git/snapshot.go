package git

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/internal/confine"
)

// This file holds the plumbing of recovery snapshots (docs/git-notes.md §1):
// a private copy of a worktree's index, `git add -A` and `git write-tree` on it,
// tree listings, binary patches, and restoring trees into directories and worktrees.

// tempIndexPrefix names the private index copies; stale ones (left by a killed
// process) are removed by the next snapshot of the same git dir.
const tempIndexPrefix = "atlas-snapshot-"

// tempIndexConfig keeps git from writing anything but one self-contained file for a
// temporary index: no split index (whose shared part lives beside the real index), no
// fsmonitor or untracked cache (whose stale data could hide a change from `add -A`).
var tempIndexConfig = []string{"-c", "core.splitIndex=false", "-c", "splitIndex.sharedIndexExpire=never",
	"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "core.fsync=" + fsyncComponents}

// TempIndex is a private index file inside a git dir. Commands run with it as
// GIT_INDEX_FILE, so the worktree's own index is never read for writing, locked or
// replaced.
type TempIndex struct {
	repo      *Repository
	dir       string // where worktree-level commands run ("" = the common dir)
	Path      string
	from      *TempIndex // the index this one is a Clone of: its filters are these
	filtersAt sync.Once
	filters   []string // filtersOff, read once (commands may run at once)
	// written is when the worktree's index this one copies was written, original its
	// bytes (CopyIndex): its entries' stat data are judged against it (StatData).
	written  time.Time
	original []byte
}

// GitDir returns the worktree's own git dir (absolute): where its HEAD and index live.
func (w *Worktree) GitDir(ctx context.Context) (string, error) {
	if gitDir, ok := w.localGitDir(); ok {
		return gitDir, nil
	}
	out, err := w.git(ctx, nil, nil, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CopyIndex copies the worktree's index to a new file inside its git dir (so a split
// index's shared part resolves), or starts an empty index when it has none. git
// replaces an index by renaming a finished lock file over it, so the copy is always
// one complete index.
func (w *Worktree) CopyIndex(ctx context.Context) (*TempIndex, error) {
	gitDir, err := w.GitDir(ctx)
	if err != nil {
		return nil, err
	}
	removeStale(gitDir)
	index := filepath.Join(gitDir, "index")
	st, statErr := os.Stat(index)
	data, err := os.ReadFile(index)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read index of %s: %w", w.Path, err)
	}
	t, err := newTempIndex(w.Repo, w.Path, gitDir, data)
	if err != nil {
		return nil, err
	}
	if data != nil && statErr == nil {
		// The copy keeps the index's mtime: git trusts an entry's stat data only when
		// the file is older than the index, and a fresh mtime on the copy would make a
		// file changed in the same second as the index look unchanged ("racy git").
		if err := os.Chtimes(t.Path, st.ModTime(), st.ModTime()); err != nil {
			return nil, fmt.Errorf("copy index: %w", err)
		}
		t.written, t.original = st.ModTime(), data
	}
	return t, nil
}

// NewTempIndex makes an empty private index in the common dir, for commands that
// need no worktree (read-tree, checkout-index into a new directory).
func (r *Repository) NewTempIndex() (*TempIndex, error) {
	dir := r.Layout().Tmp()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	removeStale(dir)
	return newTempIndex(r, "", dir, nil)
}

func newTempIndex(r *Repository, runDir, dir string, data []byte) (*TempIndex, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	p := filepath.Join(dir, fmt.Sprintf("%s%d-%s.index", tempIndexPrefix, os.Getpid(), hex.EncodeToString(b[:])))
	if data != nil {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, fmt.Errorf("copy index: %w", err)
		}
	}
	return &TempIndex{repo: r, dir: runDir, Path: p}, nil
}

// removeStale deletes temporary indexes older than an hour: a process killed in the
// middle of a snapshot cannot remove its own.
func removeStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempIndexPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Clone copies the temporary index to a new one beside it, keeping its mtime (see
// CopyIndex: git's racy-entry check compares entries with the index file's mtime).
func (t *TempIndex) Clone() (*TempIndex, error) {
	st, statErr := os.Stat(t.Path)
	data, err := os.ReadFile(t.Path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	c, err := newTempIndex(t.repo, t.dir, filepath.Dir(t.Path), data)
	if err != nil {
		return nil, err
	}
	c.from = t
	if len(data) == 0 {
		_ = os.Remove(c.Path) // an empty file is not an index; absent is
	} else if statErr == nil {
		if err := os.Chtimes(c.Path, st.ModTime(), st.ModTime()); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Close removes the temporary index and any lock git left beside it.
func (t *TempIndex) Close() {
	_ = os.Remove(t.Path)
	_ = os.Remove(t.Path + ".lock")
}

// git runs git with the temporary index, in the worktree (or the common dir).
func (t *TempIndex) git(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	dir := t.dir
	if dir == "" {
		dir = t.repo.CommonDir
	}
	// No filter of the user runs on a temporary index: writing an index re-reads the
	// content of racily clean entries (through clean filters), and nothing done with
	// a temporary index needs git's conversions (snapshots keep the bytes on disk).
	full := append(append(append([]string{}, tempIndexConfig...), t.filterArgs(ctx)...), args...)
	return cmd{dir: dir, args: full, env: append([]string{"GIT_INDEX_FILE=" + t.Path, noSystemAttributes}, env...), stdin: stdin}.run(ctx)
}

// filterArgs are the -c options that turn off every filter driver configured (read
// once per index, and once for an index and its clones).
func (t *TempIndex) filterArgs(ctx context.Context) []string {
	t.filtersAt.Do(func() {
		if t.from != nil {
			t.filters = t.from.filterArgs(ctx)
			return
		}
		t.filters = t.repo.filtersOff(ctx)
	})
	return t.filters
}

// AddAll stages everything in the worktree into the temporary index: modifications,
// deletions, modes, symlinks and untracked files (ignored files stay out). Each blob
// is flushed before it is named and its directory after (objectsWritten): not
// core.fsyncMethod=batch, whose links into objects/xx nothing flushes on Linux
// (docs/git-notes.md §4).
func (t *TempIndex) AddAll(ctx context.Context) error {
	start := time.Now()
	_, err := t.git(ctx, nil, nil, "add", "--all", "--", ":/")
	return t.repo.objectsWritten(start, err)
}

// StagePaths stages the named paths of the worktree into the temporary index as add
// -A stages them, looking at no other path: a file's bytes as a blob (flushed as
// AddAll's), a path gone from disk removed, a nested repository as a gitlink, a
// file where a directory was (or the reverse) replacing it. Paths are taken
// literally, relative to the worktree's root.
func (t *TempIndex) StagePaths(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	start := time.Now()
	_, err := t.git(ctx, nil, nulJoin(paths), "update-index", "-z", "--add", "--remove", "--replace", "--stdin")
	if err != nil && !IsNoSpace(err) {
		// A path it could not stage: the blobs written before it are flushed all the
		// same, since the caller's add -A, finding them, names them.
		if ferr := t.repo.syncObjectDirs(start); ferr != nil {
			return ferr
		}
		return err
	}
	return t.repo.objectsWritten(start, err)
}

// AddForce stages the named (ignored) files, taken literally, into the temporary index.
func (t *TempIndex) AddForce(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	start := time.Now()
	_, err := t.git(ctx, []string{"GIT_LITERAL_PATHSPECS=1"}, nulJoin(paths),
		"add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul")
	return t.repo.objectsWritten(start, err)
}

// WriteTree writes the temporary index as a tree.
func (t *TempIndex) WriteTree(ctx context.Context) (OID, error) {
	id, err := t.repo.writeObject(func() ([]byte, error) { return t.git(ctx, nil, nil, "write-tree") })
	if err != nil {
		return OID{}, err
	}
	return gitOID(id)
}

// ReadTree replaces the temporary index's content with tree.
func (t *TempIndex) ReadTree(ctx context.Context, tree OID) error {
	_, err := t.git(ctx, nil, nil, "read-tree", "--end-of-options", tree.String())
	return err
}

// IndexEntry is one entry of an index: `ls-files --stage` (stage 0 = merged).
type IndexEntry struct {
	Mode  string
	ID    string
	Stage int
	Path  string
}

func parseStage(out []byte) ([]IndexEntry, error) {
	var list []IndexEntry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 || len(f[2]) != 1 {
			return nil, fmt.Errorf("ls-files --stage: bad record %q", rec)
		}
		list = append(list, IndexEntry{Mode: f[0], ID: f[1], Stage: int(f[2][0] - '0'), Path: string(path)})
	}
	return list, nil
}

// EntriesFlagged is Entries and Flagged from one `ls-files --stage -v`: every entry,
// and the paths marked assume-unchanged and skip-worktree. The index file is read in
// process when entriesFlagged understands all of it, by git otherwise.
func (t *TempIndex) EntriesFlagged(ctx context.Context) (entries []IndexEntry, assumed, skipped []string, err error) {
	if data, rerr := os.ReadFile(t.Path); rerr == nil {
		if entries, assumed, skipped, ok := entriesFlagged(data, t.repo.ObjectFormat == "sha256"); ok {
			return entries, assumed, skipped, nil
		}
	}
	out, err := t.git(ctx, nil, nil, "ls-files", "--stage", "-v", "-z")
	if err != nil {
		return nil, nil, nil, err
	}
	var stage []byte
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		if len(rec) < 3 || rec[1] != ' ' {
			return nil, nil, nil, fmt.Errorf("ls-files --stage -v: bad record %q", rec)
		}
		tag := rec[0]
		_, path, _ := bytes.Cut(rec, []byte{'\t'})
		if tag >= 'a' && tag <= 'z' {
			assumed = append(assumed, string(path))
		}
		if tag == 'S' || tag == 's' {
			skipped = append(skipped, string(path))
		}
		stage = append(append(stage, rec[2:]...), 0)
	}
	entries, err = parseStage(stage)
	return entries, assumed, skipped, err
}

// flaggedPaths is what `ls-files -v` says of the worktree's own index: the paths
// marked assume-unchanged and those marked skip-worktree. The index is read in process
// where its git dir is known without git and entriesFlagged understands the whole
// file; git reads it otherwise.
func (w *Worktree) flaggedPaths(ctx context.Context) (assumed, skipped []string, err error) {
	if dir, ok := w.localGitDir(); ok {
		if data, err := os.ReadFile(filepath.Join(dir, "index")); err == nil {
			if _, assumed, skipped, ok := entriesFlagged(data, w.Repo.ObjectFormat == "sha256"); ok {
				return assumed, skipped, nil
			}
		}
	}
	out, err := w.git(ctx, nil, nil, "ls-files", "-v", "-z")
	if err != nil {
		return nil, nil, err
	}
	assumed, skipped = flagged(out)
	return assumed, skipped, nil
}

// flagged reads `ls-files -v -z`: the paths whose entries carry the assume-unchanged
// bit (a lower-case tag) and those marked skip-worktree (tag S or s).
func flagged(out []byte) (assumed, skipped []string) {
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) < 3 || rec[1] != ' ' {
			continue
		}
		tag, path := rec[0], string(rec[2:])
		if tag >= 'a' && tag <= 'z' {
			assumed = append(assumed, path)
		}
		if tag == 'S' || tag == 's' {
			skipped = append(skipped, path)
		}
	}
	return assumed, skipped
}

// ClearAssumeUnchanged drops the assume-unchanged bit of paths in the temporary index.
func (t *TempIndex) ClearAssumeUnchanged(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := t.git(ctx, nil, nulJoin(paths), "update-index", "-z", "--no-assume-unchanged", "--stdin")
	return err
}

// ClearSkipWorktree drops the skip-worktree bit of paths in the temporary index.
func (t *TempIndex) ClearSkipWorktree(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := t.git(ctx, nil, nulJoin(paths), "update-index", "-z", "--no-skip-worktree", "--stdin")
	return err
}

// ForceRemove drops every stage of paths from the temporary index.
func (t *TempIndex) ForceRemove(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := t.git(ctx, nil, nulJoin(paths), "update-index", "-z", "--force-remove", "--stdin")
	return err
}

// SetEntries adds entries (any stage) to the temporary index.
func (t *TempIndex) SetEntries(ctx context.Context, entries []IndexEntry) error {
	if len(entries) == 0 {
		return nil
	}
	_, err := t.git(ctx, nil, indexInfo(entries), "update-index", "-z", "--index-info")
	return err
}

func indexInfo(entries []IndexEntry) []byte {
	var in bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&in, "%s %s %d\t%s\x00", e.Mode, e.ID, e.Stage, e.Path)
	}
	return in.Bytes()
}

// Ignored lists the ignored files of the worktree (standard excludes), a wholly
// ignored directory as one entry ending in "/".
func (t *TempIndex) Ignored(ctx context.Context) ([]string, error) {
	out, err := t.git(ctx, nil, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	return nulSplit(out), nil
}

// NothingIgnored reports whether no file of the worktree can be ignored, so that
// Ignored would list nothing: no ignore rule is anywhere git's standard excludes
// look. No .gitignore (in any case) among the index's entries or named (changed or
// untracked paths, as a status that lists every untracked file names them: an
// ignored .gitignore needs a rule from another that is not), no rule in info/exclude
// (blank lines and comments only, or no file), no core.excludesFile set and no
// default one on disk; an index not wholly read, or core.ignoreCase, is never sure.
// The caller reads the snapshot back against the disk, where a file an unseen rule
// ignored is found unstaged.
func (t *TempIndex) NothingIgnored(ctx context.Context, named []string) bool {
	if t.dir == "" {
		return false
	}
	w := t.repo.Worktree(t.dir)
	if w.ConfigBool(ctx, "core.ignoreCase", false) || w.config(ctx, "core.excludesFile") != "" {
		return false
	}
	isIgnoreFile := func(p string) bool {
		return strings.EqualFold(p[strings.LastIndexByte(p, '/')+1:], ".gitignore")
	}
	if slices.ContainsFunc(named, isIgnoreFile) {
		return false
	}
	data, err := os.ReadFile(t.Path)
	if err != nil {
		return false
	}
	ix, whole := parseIndexWhole(data, t.repo.ObjectFormat == "sha256")
	if !whole {
		return false
	}
	for _, e := range ix.entries {
		if isIgnoreFile(e.path) {
			return false
		}
	}
	excludes := []string{filepath.Join(t.repo.CommonDir, "info", "exclude"), filepath.Join(filepath.Dir(t.Path), "info", "exclude")}
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		excludes = append(excludes, filepath.Join(xdg, "git", "ignore"))
	} else if home := os.Getenv("HOME"); home != "" {
		excludes = append(excludes, filepath.Join(home, ".config", "git", "ignore"))
	} else {
		return false
	}
	for _, f := range excludes {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return false
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
				return false
			}
		}
	}
	return true
}

// IgnoredIn lists the ignored files under dir, a directory git cannot read as a
// checkout (a set-aside one): the repository's ignore rules (dir's own .gitignore
// files, info/exclude, core.excludesFile) applied as if dir were a checkout whose
// index is tracked (a tree: tracked files are never ignored), a wholly ignored
// directory as one entry ending in "/". dir's own .git is not read.
func (r *Repository) IgnoredIn(ctx context.Context, dir string, tracked OID) ([]string, error) {
	t, err := r.NewTempIndex()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if err := t.ReadTree(ctx, tracked); err != nil {
		return nil, err
	}
	out, err := cmd{dir: dir, args: []string{"--git-dir=" + r.CommonDir, "--work-tree=" + dir,
		"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"},
		env: []string{"GIT_INDEX_FILE=" + t.Path}}.run(ctx)
	if err != nil {
		return nil, err
	}
	return nulSplit(out), nil
}

// HasIgnored reports whether the worktree holds any ignored file. ls-files never
// writes the index, so the worktree's own index is only read.
func (w *Worktree) HasIgnored(ctx context.Context) (bool, error) {
	out, err := w.git(ctx, nil, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}

// ListIgnored lists the ignored files of the worktree (standard excludes), a wholly
// ignored directory as one entry ending in "/", reading only (no optional locks):
// what a plan names before a reset or removal deletes them.
func (w *Worktree) ListIgnored(ctx context.Context) ([]string, error) {
	out, err := w.git(ctx, nil, nil, "--no-optional-locks", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	return nulSplit(out), nil
}

// HidesChanges reports whether any index entry hides its file's changes from status:
// one marked assume-unchanged, or one marked skip-worktree whose file is on disk (the
// "keep my local edit of this tracked file" idiom; a sparse checkout's skip-worktree
// files are absent). Status does not look at such files, so Dirty misses their edits.
func (w *Worktree) HidesChanges(ctx context.Context) (bool, error) {
	assumed, skipped, err := w.flaggedPaths(ctx)
	if err != nil {
		return false, err
	}
	sparse := make(map[string]bool, len(skipped))
	for _, p := range skipped {
		sparse[p] = true
	}
	for _, p := range assumed {
		if !sparse[p] { // both marks: judged by skip-worktree's rule below
			return true, nil
		}
	}
	for _, p := range skipped {
		if _, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(p))); err == nil {
			return true, nil
		}
	}
	return false, nil
}

// TreeItem is one entry of a recursive tree listing.
type TreeItem struct {
	Mode string
	Type string // blob or commit (a gitlink)
	ID   string
	Path string
}

// LsTree lists every file of tree, recursively, reading it back from the object store.
func (r *Repository) LsTree(ctx context.Context, tree OID) ([]TreeItem, error) {
	lists, err := r.LsTrees(ctx, tree)
	if err != nil {
		return nil, err
	}
	return lists[0], nil
}

// parseLsTree reads `ls-tree -z` records ("<mode> SP <type> SP <id> TAB <path>" NUL).
// Every field is a substring of the one string: a snapshot's check lists every file of
// the worktree, and a string per field was most of the listing's time at 20,000 files.
func parseLsTree(out string) ([]TreeItem, error) {
	list := make([]TreeItem, 0, strings.Count(out, "\x00"))
	for rec := range strings.SplitSeq(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		mode, rest, ok1 := strings.Cut(meta, " ")
		typ, id, ok2 := strings.Cut(rest, " ")
		if !ok || !ok1 || !ok2 || mode == "" || typ == "" || id == "" || strings.Contains(id, " ") {
			return nil, fmt.Errorf("ls-tree: bad record %q", rec)
		}
		list = append(list, TreeItem{Mode: mode, Type: typ, ID: id, Path: path})
	}
	return list, nil
}

// NameStatus is one changed path between two trees.
type NameStatus struct {
	Status string // A, D, M, T
	Path   string
}

// DiffNames lists the paths that differ between tree-ishes a and b.
func (r *Repository) DiffNames(ctx context.Context, a, b OID) ([]NameStatus, error) {
	out, err := r.git(ctx, "diff-tree", "-r", "-z", "--name-status", "--no-renames", "--no-relative", "--end-of-options", a.String(), b.String(), "--")
	if err != nil {
		return nil, err
	}
	f := nulSplit(out)
	var list []NameStatus
	for i := 0; i+1 < len(f); i += 2 {
		list = append(list, NameStatus{Status: f[i], Path: f[i+1]})
	}
	return list, nil
}

// CommitPair names two commits whose trees DiffCommits compares.
type CommitPair struct{ Base, Tip OID }

// DiffCommits is DiffNames for each pair of commits, base against tip, in their order,
// with one git process for all of them: `diff-tree --stdin`, each line the tip with
// the base as its only parent, every pair's list headed by its tip's id (--always: an
// empty one too). A record out of that order, or an object that is not a commit, is
// an error.
func (r *Repository) DiffCommits(ctx context.Context, pairs []CommitPair) ([][]NameStatus, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, p := range pairs {
		if p.Base.IsZero() || p.Tip.IsZero() {
			return nil, fmt.Errorf("diff-tree: a pair without a commit (%s, %s)", p.Base, p.Tip)
		}
		in.WriteString(p.Tip.String() + " " + p.Base.String() + "\n")
	}
	// A line git cannot read as two commits it reports on stderr and answers as best it
	// can (a base that is no commit: the tip against no parent, nothing changed): an
	// error here, never an empty list.
	out, err := cmd{dir: r.CommonDir, stdin: in.Bytes(), noErrors: true,
		args: []string{"diff-tree", "--stdin", "--always", "-r", "-z", "--name-status", "--no-renames", "--no-relative"}}.run(ctx)
	if err != nil {
		return nil, err
	}
	lists := make([][]NameStatus, 0, len(pairs))
	f := nulSplit(out)
	for i := 0; i < len(f); {
		n := len(lists)
		if n < len(pairs) && f[i] == pairs[n].Tip.String() {
			lists = append(lists, []NameStatus{})
			i++
			continue
		}
		if n == 0 || i+1 == len(f) || len(f[i]) != 1 {
			return nil, fmt.Errorf("diff-tree --stdin: unexpected record %q", f[i])
		}
		lists[n-1] = append(lists[n-1], NameStatus{Status: f[i], Path: f[i+1]})
		i += 2
	}
	if len(lists) != len(pairs) {
		return nil, fmt.Errorf("diff-tree --stdin: %d of %d pairs answered", len(lists), len(pairs))
	}
	return lists, nil
}

// EmptyTree is the id of the empty tree in the repository's hash algorithm.
func (r *Repository) EmptyTree(ctx context.Context) (OID, error) {
	out, err := r.gitInput(ctx, []byte{}, "hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return OID{}, err
	}
	return gitOID(string(out))
}

// MissingObjects returns the ids among ids that are not in the object store, asking
// one `cat-file --batch-check` for all of them. Asking for the type makes git read
// each object's header, so an empty or torn loose object (which a bare existence
// check calls present) is missing; it is removed, so that writing it again (git's
// writers keep an existing file) makes it whole.
func (r *Repository) MissingObjects(ctx context.Context, ids []OID) ([]string, error) {
	_, missing, err := r.ObjectSizes(ctx, ids)
	return missing, err
}

// ObjectSizes is MissingObjects that also gives the size of each object present, by id.
func (r *Repository) ObjectSizes(ctx context.Context, ids []OID) (map[string]int64, []string, error) {
	if len(ids) == 0 {
		return map[string]int64{}, nil, nil
	}
	sizes := make(map[string]int64, len(ids))
	var ask []string
	g, goGit := r.objects.(*goGitStore)
	var loose map[string]bool
	if goGit {
		loose = g.loose().names(ids)
	}
	for _, id := range ids {
		if id.IsZero() {
			return nil, nil, errors.New("missing objects: an empty object id")
		}
		if loose[id.String()] {
			if size, ok := g.loose().headerSize(id.String()); ok {
				sizes[id.String()] = size // present: its header reads, as git's type check reads it
				continue
			}
		}
		ask = append(ask, id.String())
	}
	// The others asked of git's type check (`info`, as `cat-file --batch-check`),
	// through the command's long-lived cat-file when it is free: no process of their
	// own.
	var missing []string
	err := objectInfoGit(ctx, r, ask, func(i int, o batchObject) {
		if o.missing {
			missing = append(missing, ask[i])
			r.repairLoose(ask[i])
			return
		}
		sizes[o.id] = o.size
	})
	if err != nil {
		return nil, nil, err
	}
	return sizes, missing, nil
}

// RefsContaining returns up to limit refs (under refs/) whose history contains commit.
func (r *Repository) RefsContaining(ctx context.Context, commit OID, limit int) ([]string, error) {
	out, err := r.git(ctx, "for-each-ref", fmt.Sprintf("--count=%d", limit), "--format=%(refname)", "--contains="+commit.String())
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Reachable reports whether some ref's history contains commit (RefsContaining finds
// one). A branch, tag, remote-tracking or atlas ref that names commit itself answers
// in process; otherwise git walks. Each namespace is read on its own: one that cannot
// be read in process (a clone's refs/remotes/origin/HEAD is a symbolic ref) does not
// keep the others from answering.
func (r *Repository) Reachable(ctx context.Context, commit OID) (bool, error) {
	for _, prefix := range []string{"refs/heads", "refs/atlas", "refs/tags", "refs/remotes"} {
		refs, ok := r.listRefsLocal([]string{prefix})
		if !ok {
			continue
		}
		for _, ref := range refs {
			if ref.ID == commit.String() {
				return true, nil
			}
		}
	}
	refs, err := r.RefsContaining(ctx, commit, 1)
	return len(refs) > 0, err
}

// patchArgs make `diff-tree -p` output the same bytes whatever the user configured:
// no external diff or textconv, no colour, fixed prefixes, no renames, whole tree, and
// the plumbing-level settings diff-tree does read (path quoting, blank context lines,
// submodules) pinned to git's defaults.
var patchArgs = []string{"-c", "core.quotePath=true", "-c", "diff.suppressBlankEmpty=false", "-c", "diff.ignoreSubmodules=none", "diff-tree", "-r", "-p", "--binary", "--full-index", "--no-renames", "--no-color",
	"--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative"}

// WritePatch streams the binary patch from tree-ish base to tree into w, without
// holding it in memory (a 50 MB binary makes a 70 MB patch).
func (r *Repository) WritePatch(ctx context.Context, w io.Writer, base, tree OID) error {
	if base.IsZero() || tree.IsZero() {
		return errors.New("write patch: an empty object id")
	}
	x := command(ctx, r.CommonDir, nil, append(append([]string{}, patchArgs...), "--end-of-options", base.String(), tree.String(), "--")...)
	var stderr bytes.Buffer
	bw := bufio.NewWriterSize(w, 256<<10)
	x.Stdout, x.Stderr = bw, &stderr
	if err := x.Run(); err != nil {
		return &Error{Args: patchArgs, ExitCode: exitCode(err), Stderr: stderr.String(), Err: err}
	}
	return bw.Flush()
}

// ConfigBool reads a boolean config value as git would, with def when unset.
func (w *Worktree) ConfigBool(ctx context.Context, key string, def bool) bool {
	return w.configOf(ctx).boolean(ctx, w.Path, key, def)
}

// ResolveHead returns the worktree's HEAD commit, or the zero OID when HEAD is unborn;
// an answer of git's that is no object id is an error naming it.
func (w *Worktree) ResolveHead(ctx context.Context) (OID, error) {
	if gitDir, ok := w.localGitDir(); ok {
		if id, _, ok := w.Repo.headIn(ctx, gitDir); ok && w.Repo.knownCommit(id) {
			return ParseOID(id)
		} else if ok && w.Repo.reader != nil && !w.Repo.mayReplace() {
			// A packed commit: the command's cat-file says it is one (anything else,
			// a tag to peel, say, is git's to resolve).
			commit := false
			err := objectInfoGit(ctx, w.Repo, []string{id}, func(_ int, o batchObject) { commit = !o.missing && o.typ == "commit" })
			if err == nil && commit {
				return ParseOID(id)
			}
		}
	}
	out, err := w.git(ctx, nil, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return OID{}, nil
		}
		return OID{}, err
	}
	id, err := ParseOID(strings.TrimSpace(string(out)))
	if err != nil {
		return OID{}, fmt.Errorf("git rev-parse HEAD printed %w", err)
	}
	return id, nil
}

// PseudoRefs resolves several per-worktree pseudo refs (MERGE_HEAD, ...) with one git
// process (cat-file resolves them as rev-parse --verify does): each present name with
// its object id, absent names left out; an answer that is neither is an error naming it.
func (w *Worktree) PseudoRefs(ctx context.Context, names ...string) (map[string]OID, error) {
	var in bytes.Buffer
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, " \t\n") {
			return nil, fmt.Errorf("pseudo ref %q: not a ref name", n)
		}
		in.WriteString(n + "\n")
	}
	if w.pseudoRefsAbsent(names) {
		return map[string]OID{}, nil
	}
	out, err := w.git(ctx, nil, in.Bytes(), "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, fmt.Errorf("cat-file answered %d lines for %d pseudo refs", len(lines), len(names))
	}
	found := map[string]OID{}
	for i, line := range lines {
		if line == names[i]+" missing" || line == names[i]+" ambiguous" {
			continue // absent
		}
		id, err := ParseOID(line)
		if err != nil {
			return nil, fmt.Errorf("cat-file answered pseudo ref %s with %w", names[i], err)
		}
		found[names[i]] = id
	}
	return found, nil
}

// SetPseudoRef writes a per-worktree pseudo ref such as MERGE_HEAD, durably.
func (w *Worktree) SetPseudoRef(ctx context.Context, name string, id OID) error {
	start := time.Now()
	_, err := w.git(ctx, nil, nil, "update-ref", "--no-deref", "--end-of-options", name, id.String())
	return w.gitDirWritten(start, err)
}

// ResetTo makes the worktree's index and files exactly tree (files not in tree that
// the index tracked are removed; untracked files are left alone), then writes the
// blobs' bytes verbatim over the files: a snapshot's blobs are the bytes that were on
// disk, and checkout would smudge them again. No filter of the user runs. Only for
// worktrees git-atlas made for this purpose: it rewrites their index and files. The
// tree is a checked one (CheckTree): no entry of it can leave the worktree.
func (w *Worktree) ResetTo(ctx context.Context, tree *CheckedTree) error {
	root, err := confine.New(w.Path)
	if err != nil {
		return err
	}
	args := append(w.Repo.filtersOff(ctx), "read-tree", "--reset", "-u", "--end-of-options", tree.ID.String())
	start := time.Now()
	_, err = w.git(ctx, nil, nil, args...)
	if err := w.gitDirWritten(start, err); err != nil {
		return err
	}
	return w.Repo.WriteTreeFiles(ctx, tree, root)
}

// SetIndex replaces the worktree's index by tree plus extra entries (unmerged
// stages), leaving the files alone, then refreshes the stat data so status is fast.
// The tree is a checked one (CheckTree); the extra entries' paths are the caller's
// to check.
func (w *Worktree) SetIndex(ctx context.Context, tree *CheckedTree, extra []IndexEntry) error {
	start := time.Now()
	if _, err := w.git(ctx, nil, nil, "read-tree", "--end-of-options", tree.ID.String()); err != nil {
		return err
	}
	if len(extra) > 0 {
		if _, err := w.git(ctx, nil, indexInfo(extra), "update-index", "-z", "--index-info"); err != nil {
			return err
		}
	}
	// Exit 1 only says some files differ from the index (unstaged changes): expected.
	// The user's clean filters stay off: a file they would have to clean stays
	// stat-dirty, and status compares it the user's way later.
	args := append(w.Repo.filtersOff(ctx), "update-index", "-q", "--refresh", "--unmerged")
	if _, err := w.git(ctx, nil, nil, args...); err != nil {
		var ge *Error
		if !errors.As(err, &ge) || ge.ExitCode != 1 {
			return err
		}
	}
	return w.gitDirWritten(start, nil)
}

// SkipWorktree sets the skip-worktree bit of paths in the worktree's index.
func (w *Worktree) SkipWorktree(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	start := time.Now()
	_, err := w.git(ctx, nil, nulJoin(paths), "update-index", "-z", "--skip-worktree", "--stdin")
	return w.gitDirWritten(start, err)
}

// AssumeUnchanged sets the assume-unchanged bit of paths in the worktree's index.
func (w *Worktree) AssumeUnchanged(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	start := time.Now()
	_, err := w.git(ctx, nil, nulJoin(paths), "update-index", "-z", "--assume-unchanged", "--stdin")
	return w.gitDirWritten(start, err)
}

func nulJoin(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

func nulSplit(out []byte) []string {
	var list []string
	for f := range bytes.SplitSeq(out, []byte{0}) {
		if len(f) > 0 {
			list = append(list, string(f))
		}
	}
	return list
}

// CachedTree is the tree WriteTree would give, read from the index's own cache tree
// when that vouches for every entry (cachedRootTree): no write-tree process. ok is
// false when git must write it. The tree's objects may be missing or other than the
// cache tree says: the caller reads it back and holds it against the entries.
func (t *TempIndex) CachedTree() (OID, bool) {
	data, err := os.ReadFile(t.Path)
	if err != nil {
		return OID{}, false
	}
	id, ok := cachedRootTree(data, t.repo.ObjectFormat == "sha256")
	if !ok {
		return OID{}, false
	}
	oid, err := ParseOID(id)
	return oid, err == nil
}

// WriteTreeAfresh is WriteTree with the index's cache tree left out: every tree is
// built from the entries, none taken from what the cache tree names. The index file
// itself is left as it is (the tree is written from a copy).
func (t *TempIndex) WriteTreeAfresh(ctx context.Context) (OID, error) {
	data, err := os.ReadFile(t.Path)
	if err != nil {
		return OID{}, err
	}
	bare, ok := withoutCacheTree(data, t.repo.ObjectFormat == "sha256")
	if !ok {
		return t.WriteTree(ctx) // not an index this code reads: git's answer, or refusal
	}
	c, err := t.Clone()
	if err != nil {
		return OID{}, err
	}
	defer c.Close()
	if err := os.WriteFile(c.Path, bare, 0o644); err != nil {
		return OID{}, err
	}
	return c.WriteTree(ctx)
}
