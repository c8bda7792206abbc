package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Worktree is a working tree git-atlas may run worktree-level git in (status, add,
// checkout). Only the worktrees and recovery packages make them: for a managed
// worktree, or (recovery, read-only) for a snapshot of the user's checkout through a
// temporary index, which never touches that checkout's index or files.
type Worktree struct {
	Repo *Repository
	Path string
}

// Worktree returns the working tree at path (absolute).
func (r *Repository) Worktree(path string) *Worktree { return &Worktree{Repo: r, Path: path} }

// git runs git inside the worktree with extra environment variables (such as a
// temporary GIT_INDEX_FILE) and optional stdin.
func (w *Worktree) git(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	return cmd{dir: w.Path, args: args, env: env, stdin: stdin}.run(ctx)
}

// gitEnv runs git in the repository (common dir) with extra environment and stdin.
func (r *Repository) gitEnv(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	return cmd{dir: r.CommonDir, args: args, env: env, stdin: stdin}.run(ctx)
}

// WorktreeInfo is one record of `git worktree list --porcelain -z`.
type WorktreeInfo struct {
	Path           string
	Head           string
	Branch         string // full ref name, "" when detached
	Bare           bool
	Detached       bool
	Locked         bool
	LockReason     string
	Prunable       bool
	PrunableReason string
}

// ListWorktrees parses `git worktree list --porcelain -z` (docs/git-notes.md: never the
// human output), or reads the same list from the files where that is certain
// (listWorktreesLocal).
// The list is asked once per command while nothing git-atlas does changes it
// (picture.go).
func (r *Repository) ListWorktrees(ctx context.Context) ([]WorktreeInfo, error) {
	if list, ok := r.keptList(); ok {
		return list, nil
	}
	at := listEpoch()
	if list, ok := r.listWorktreesLocal(); ok {
		r.keepList(list, at)
		return list, nil
	}
	out, err := r.runWorktree(ctx, cmd{dir: r.CommonDir, args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return nil, err
	}
	list := parseWorktrees(string(out))
	r.keepList(list, at)
	return list, nil
}

func parseWorktrees(out string) []WorktreeInfo {
	var list []WorktreeInfo
	var cur *WorktreeInfo
	for f := range strings.SplitSeq(out, "\x00") {
		if f == "" {
			if cur != nil {
				list = append(list, *cur)
				cur = nil
			}
			continue
		}
		key, val, _ := strings.Cut(f, " ")
		if key == "worktree" {
			if cur != nil {
				list = append(list, *cur)
			}
			cur = &WorktreeInfo{Path: val}
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = val
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked, cur.LockReason = true, val
		case "prunable":
			cur.Prunable, cur.PrunableReason = true, val
		}
	}
	if cur != nil {
		list = append(list, *cur)
	}
	return list
}

// AddWorktree creates a linked worktree at path, detached at commit and locked with
// reason in one step (docs/git-notes.md: create detached, make branches separately). The
// user's post-checkout hook does not run: every internal call disables hooks. A
// non-nil hold (a Marker's file) is inherited by git, so the marker stays held for as
// long as git runs, even if this process is killed first. The registration is
// written in process where that is certain to equal git's (addWorktreeLocal).
func (r *Repository) AddWorktree(ctx context.Context, path string, commit OID, lockReason string, hold *os.File) error {
	start := time.Now()
	if done, err := r.addWorktreeLocal(ctx, path, commit, lockReason, true, hold); done {
		return r.worktreeAdded(start, path, err)
	}
	args := []string{"worktree", "add", "--quiet", "--detach"}
	if lockReason != "" {
		args = append(args, "--lock", "--reason", lockReason)
	}
	c := cmd{dir: r.CommonDir, args: append(args, "--end-of-options", path, commit.String())}
	if hold != nil {
		c.extra = []*os.File{hold}
	}
	_, err := r.runWorktree(ctx, c)
	return r.worktreeAdded(start, path, err)
}

// worktreeAdded finishes a `git worktree add` of path (started at start, ended with
// err): the registration it made is flushed (adminWritten), and so are the worktree's
// directory (its .git file's name) and the directory that holds it.
func (r *Repository) worktreeAdded(start time.Time, path string, err error) error {
	if err != nil {
		return err
	}
	if err := r.Worktree(path).gitDirWritten(start, nil); err != nil {
		return err
	}
	if err := SyncDir(path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// runWorktree runs a `git worktree` command. A `git worktree add` killed after it
// created a worktree's commondir file and before it wrote it leaves that file empty,
// and from then on every `git worktree` command of the repository fails ("failed to
// read worktrees/<name>/commondir: Success", git 2.39; prune too). Such a file is
// given the one line git writes there, and the command is run again: the half-made
// worktree then lists as what it is (locked "initializing", HEAD at the null id),
// which git-atlas classifies and preserves like any checkout a kill left half-made.
func (r *Repository) runWorktree(ctx context.Context, c cmd) ([]byte, error) {
	for try := 0; ; try++ {
		out, err := c.run(ctx)
		var ge *Error
		if err == nil || try == 3 || !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "/commondir") || !r.repairCommondirs() {
			return out, err
		}
	}
}

// repairCommondirs writes git's "../.." into every empty commondir file of the
// repository's linked worktrees (written whole and durably: WriteFile) and reports
// whether it wrote any.
func (r *Repository) repairCommondirs() bool {
	admin := filepath.Join(r.CommonDir, "worktrees")
	entries, err := os.ReadDir(admin)
	if err != nil {
		return false
	}
	repaired := false
	for _, e := range entries {
		p := filepath.Join(admin, e.Name(), "commondir")
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
			continue
		}
		if WriteFile(p, []byte("../..\n"), 0o644) == nil {
			repaired = true
		}
	}
	return repaired
}

// Head returns the worktree's HEAD commit and branch ("" when detached).
func (w *Worktree) Head(ctx context.Context) (sha, branch string, err error) {
	if gitDir, ok := w.localGitDir(); ok {
		if sha, branch, ok := w.Repo.headIn(ctx, gitDir); ok {
			return sha, branch, nil
		}
	}
	out, err := w.git(ctx, nil, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", "", err
	}
	sha = strings.TrimSpace(string(out))
	if out, err := w.git(ctx, nil, nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		branch = strings.TrimSpace(string(out))
	}
	return sha, branch, nil
}

// Status returns the raw `git status --porcelain=v2 -z` of the worktree, with every
// untracked file listed. --no-optional-locks keeps git from rewriting the index for a
// stat refresh (docs/git-notes.md: plain status does). It is asked once per state of
// the worktree: kept while nothing git-atlas does changes it (picture.go).
func (w *Worktree) Status(ctx context.Context) ([]byte, error) {
	if out, ok := w.Repo.keptStatus(w.Path); ok {
		return out, nil
	}
	return w.StatusNow(ctx)
}

// StatusNow is Status asked of git now, whatever was kept: for the check that guards
// a removal or reset (recovery.Assess), which must see what an agent wrote a moment
// ago.
func (w *Worktree) StatusNow(ctx context.Context) ([]byte, error) {
	all, d := statusEpochs(dirKey(w.Path))
	out, err := w.git(ctx, nil, nil, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=none")
	if err == nil {
		w.Repo.keepStatus(w.Path, out, all, d)
	}
	return out, err
}

// StatusKept is the status of the worktree a Status or StatusNow of this command read,
// while it is still good (picture.go), without asking git: ok is false when none is
// kept. It is a hint only: another process may have changed the worktree since.
func (w *Worktree) StatusKept() (out []byte, ok bool) {
	return w.Repo.keptStatus(w.Path)
}

// ChangedPaths reads a Status (porcelain v2, -z, every untracked file listed): the
// paths whose file differs from the index (changed, deleted, a new mode, unmerged)
// and the untracked ones, in the order git listed them, a nested repository without
// its trailing slash. Staged changes whose file matches the index are left out. ok is
// false when a record does not parse.
func ChangedPaths(status []byte) (paths []string, ok bool) {
	recs := bytes.Split(status, []byte{0})
	for i := 0; i < len(recs); i++ {
		rec := string(recs[i])
		if rec == "" {
			continue
		}
		var fields int
		switch rec[0] {
		case '?':
			if len(rec) < 3 || rec[1] != ' ' {
				return nil, false
			}
			paths = append(paths, strings.TrimSuffix(rec[2:], "/"))
			continue
		case '!', '#':
			continue
		case '1':
			fields = 8
		case '2':
			fields = 9
			i++ // the path it was renamed or copied from, in the next record
		case 'u':
			fields = 10
		default:
			return nil, false
		}
		f := strings.SplitN(rec, " ", fields+1)
		if len(f) != fields+1 || len(f[1]) != 2 || f[fields] == "" {
			return nil, false
		}
		if rec[0] == 'u' || f[1][1] != '.' {
			paths = append(paths, f[fields])
		}
	}
	return paths, true
}

// Dirty reports whether the worktree has any change: staged, unstaged or untracked.
func (w *Worktree) Dirty(ctx context.Context) (bool, error) {
	out, err := w.Status(ctx)
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}

// DirtyNow is Dirty from StatusNow.
func (w *Worktree) DirtyNow(ctx context.Context) (bool, error) {
	out, err := w.StatusNow(ctx)
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}

// InitRepository creates a new repository at dir with branch main (for the demo and
// for benchmarks: it never touches an existing repository).
func InitRepository(ctx context.Context, dir string, env []string) error {
	_, err := cmd{dir: ".", args: []string{"init", "-q", "-b", "main", dir}, env: env}.run(ctx)
	return err
}

// CommitEmpty records a commit that changes nothing in the worktree at w (a new
// repository's first, as the test kit and the benchmarks make one), durably as
// CommitAll: its objects' directories, then the worktree's git dir and the branch ref's
// directories are flushed before it returns (docs/contract.md §11.12).
func (w *Worktree) CommitEmpty(ctx context.Context, msg string, env []string) error {
	start := time.Now()
	_, err := w.git(ctx, env, nil, "commit", "-q", "--allow-empty", "-m", msg)
	if err := w.Repo.objectsWritten(start, err); err != nil {
		return err
	}
	return w.headWritten(start)
}

// OwnsWorktree reports whether the directory at path is a linked worktree of this
// repository: its .git file names a git dir under this common dir's worktrees/. It
// reads one small file and runs no git.
func (r *Repository) OwnsWorktree(path string) bool {
	data, err := os.ReadFile(filepath.Join(path, ".git"))
	if err != nil {
		return false
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return false
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(path, dir)
	}
	real := func(p string) string {
		if q, err := filepath.EvalSymlinks(p); err == nil {
			return q
		}
		return filepath.Clean(p)
	}
	rel, err := filepath.Rel(real(filepath.Join(r.CommonDir, "worktrees")), real(dir))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}

// CommitAll stages everything in the worktree and commits it with msg, as env's
// identity (GIT_AUTHOR_NAME=..., GIT_COMMITTER_EMAIL=...): what an agent does in its
// own worktree (the demo's agents).
func (w *Worktree) CommitAll(ctx context.Context, msg string, env []string) error {
	start := time.Now()
	if _, err := w.git(ctx, env, nil, "add", "-A"); err != nil {
		return w.Repo.objectsWritten(start, err)
	}
	_, err := w.git(ctx, env, nil, "commit", "-q", "-m", msg)
	if err := w.Repo.objectsWritten(start, err); err != nil {
		return err
	}
	return w.headWritten(start)
}

// headWritten flushes, after a commit in the worktree (started at start), the names
// git gave: the worktree's own git dir (its reflog of HEAD) and the branch ref HEAD
// names, if any (syncRefDirs).
func (w *Worktree) headWritten(start time.Time) error {
	if err := w.gitDirWritten(start, nil); err != nil {
		return err
	}
	admin, err := w.admin()
	if err != nil {
		return err
	}
	head, err := os.ReadFile(filepath.Join(admin, "HEAD"))
	if err != nil {
		return err
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok && strings.HasPrefix(ref, "refs/") {
		return w.Repo.syncRefDirs(start, []string{ref})
	}
	return nil
}

// Clean reports whether the worktree is exactly its HEAD: nothing staged, changed,
// untracked or ignored.
func (w *Worktree) Clean(ctx context.Context) (bool, error) {
	all, d := statusEpochs(dirKey(w.Path))
	out, err := w.git(ctx, nil, nil, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored=matching", "--ignore-submodules=none")
	if err != nil {
		return false, err
	}
	if len(out) == 0 {
		// Nothing ignored either: Status, which leaves ignored files out, is empty too.
		w.Repo.keepStatus(w.Path, out, all, d)
	}
	return len(out) == 0, nil
}

// Unusual names what would keep ResetClean from leaving the worktree as a fresh
// checkout of HEAD ("" when nothing does): an operation in progress (merge, rebase,
// cherry-pick, revert, bisect), a sparse checkout, or index entries marked
// assume-unchanged or skip-worktree (reset keeps those marks and their files).
func (w *Worktree) Unusual(ctx context.Context) (string, error) {
	dir, err := w.GitDir(ctx)
	if err != nil {
		return "", err
	}
	for _, name := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG", "rebase-merge", "rebase-apply", "sequencer", "info/sparse-checkout"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return name, nil
		}
	}
	assumed, skipped, err := w.flaggedPaths(ctx)
	if err != nil {
		return "", err
	}
	if len(assumed)+len(skipped) > 0 {
		return "index entries marked assume-unchanged or skip-worktree", nil
	}
	return "", nil
}

// ChangedPaths lists the paths of the worktree that differ from base: committed since
// (diff-tree base HEAD), staged or not (diff HEAD), and untracked files that are not
// ignored. Read-only: --no-optional-locks, as Status. A path is listed once, sorted.
func (w *Worktree) ChangedPaths(ctx context.Context, base OID) ([]string, error) {
	seen := map[string]bool{}
	committed, err := w.git(ctx, nil, nil, "--no-optional-locks", "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-relative", "--end-of-options", base.String(), "HEAD", "--")
	if err != nil {
		return nil, err
	}
	worktree, err := w.git(ctx, nil, nil, "--no-optional-locks", "diff", "-z", "--name-only", "--no-renames", "--no-relative", "HEAD", "--")
	if err != nil {
		return nil, err
	}
	untracked, err := w.git(ctx, nil, nil, "--no-optional-locks", "ls-files", "-z", "--others", "--exclude-standard", "--full-name")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range [][]byte{committed, worktree, untracked} {
		for _, p := range nulSplit(b) {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// admin is the worktree's own git dir, read from its .git file without running git:
// <common dir>/worktrees/<id> for a linked worktree, <path>/.git for a main one.
func (w *Worktree) admin() (string, error) {
	dotgit := filepath.Join(w.Path, ".git")
	st, err := os.Lstat(dotgit)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return dotgit, nil
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s names no git dir", dotgit)
	}
	if dir = strings.TrimSpace(dir); !filepath.IsAbs(dir) {
		dir = filepath.Join(w.Path, dir)
	}
	return filepath.Clean(dir), nil
}

// gitDirWritten finishes a git process (started at start, ended with err) that wrote
// into the worktree's own git dir: that directory is flushed (adminWritten).
func (w *Worktree) gitDirWritten(start time.Time, err error) error {
	if err != nil {
		return err
	}
	admin, err := w.admin()
	if err != nil {
		return fmt.Errorf("flush the git dir of %s: %w", w.Path, err)
	}
	return w.Repo.adminWritten(start, admin, nil)
}
