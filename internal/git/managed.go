package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// ErrForeign is the cause of every refusal of Repository.Managed: the path does not
// name a worktree git-atlas manages, so nothing may reset, clean, check out in, move,
// lock or remove it (docs: "Shared data is hostile").
var ErrForeign = errors.New("not a worktree git-atlas manages: left as it is")

// Managed is a linked worktree git-atlas made and manages. Every reset, clean,
// checkout, move, lock and removal of a worktree that a ledger names is a method of
// Managed, and the only way to get one is Repository.Managed, which checks that
//
//   - the path is not itself a symbolic link, and resolved (symbolic links included,
//     internal/confine) lies under one of the managed roots, or git's registration of
//     it is locked with git-atlas's own reason for it (made under a root the
//     configuration has moved away from since: local state, which no ledger carries);
//   - when the directory is there, git and it agree both ways: its .git is a file
//     naming <git-common-dir>/worktrees/<id>, and that registration's gitdir names
//     <path>/.git;
//   - when it is gone, what is left is at most git's registration of that path.
//
// A path from a pulled or hand-edited ledger that resolves to the user's own
// worktree, or a managed directory whose .git file was edited to point at the
// user's worktree's git dir, fails the check: it is foreign and left alone.
type Managed struct {
	*Worktree
	// admin is <git-common-dir>/worktrees/<id>, "" when git has no registration of a
	// missing directory.
	admin   string
	missing bool
}

// Missing reports whether the worktree's directory was gone when it was checked.
func (m *Managed) Missing() bool { return m.missing }

// Managed checks that path names a linked worktree of this repository that
// git-atlas manages (see the type), under one of roots, or registered and locked with
// reason ("" accepts no lock). A path that fails is refused with ErrForeign as the
// cause (fault.ErrRefused); an error reading the filesystem is returned as it is.
func (r *Repository) Managed(path string, roots []confine.Root, reason string) (*Managed, error) {
	real, outside, err := r.placed(path, roots)
	if err != nil {
		return nil, err
	}
	if outside != nil && reason == "" {
		return nil, outside
	}
	vouched := func(admin string) error {
		if outside == nil {
			return nil
		}
		if admin == "" {
			return outside
		}
		if data, err := os.ReadFile(filepath.Join(admin, "locked")); err == nil && strings.TrimSpace(string(data)) == reason {
			return nil
		}
		return outside
	}
	st, err := os.Lstat(real)
	if errors.Is(err, os.ErrNotExist) {
		admin := r.registrationOf(real)
		if err := vouched(admin); err != nil {
			return nil, err
		}
		return &Managed{Worktree: r.Worktree(real), admin: admin, missing: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, foreign(path, "it is not a directory")
	}
	admin, err := r.agree(real)
	if err != nil {
		return nil, err
	}
	if err := vouched(admin); err != nil {
		return nil, err
	}
	return &Managed{Worktree: r.Worktree(real), admin: admin}, nil
}

// Placed resolves path (absolute, not itself a symbolic link) and returns it when it
// lies below one of roots: where a managed worktree may be made, or a marker or a
// set-aside directory written beside one. Otherwise a refusal with ErrForeign.
func (r *Repository) Placed(path string, roots []confine.Root) (string, error) {
	real, outside, err := r.placed(path, roots)
	if err == nil {
		err = outside
	}
	if err != nil {
		return "", err
	}
	return real, nil
}

// placed resolves path and says whether it lies below one of roots: outside is the
// refusal when it does not. err refuses a path that is not absolute or is itself a
// symbolic link.
func (r *Repository) placed(path string, roots []confine.Root) (real string, outside, err error) {
	if path == "" || !filepath.IsAbs(path) {
		return "", nil, foreign(path, "it is not an absolute path")
	}
	if err := confine.NoSymlink(path); err != nil {
		return "", nil, foreign(path, "it is a symbolic link")
	}
	var dirs []string
	for _, root := range roots {
		if real, err := root.Below(path); err == nil {
			return real, nil, nil
		}
		dirs = append(dirs, root.Dir())
	}
	real = confine.RealPath(path)
	return real, foreign(path, fmt.Sprintf("it resolves to %s, outside git-atlas's managed worktrees (%s)", real, strings.Join(dirs, ", "))), nil
}

// agree reads the .git file of the directory at real and git's registration it names,
// and returns that registration's directory when each names the other.
func (r *Repository) agree(real string) (string, error) {
	dotgit := filepath.Join(real, ".git")
	st, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", foreign(real, "it has no .git file")
	case err != nil:
		return "", err
	case !st.Mode().IsRegular():
		return "", foreign(real, "its .git is not a file (a repository of its own, or a link), so not a linked worktree")
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", foreign(real, "its .git file names no git dir")
	}
	if dir = strings.TrimSpace(dir); !filepath.IsAbs(dir) {
		dir = filepath.Join(real, dir)
	}
	admins, err := confine.New(filepath.Join(r.CommonDir, "worktrees"))
	if err != nil {
		return "", err
	}
	admin := confine.RealPath(dir)
	if filepath.Dir(admin) != admins.Dir() || confine.Name(filepath.Base(admin)) != nil {
		return "", foreign(real, fmt.Sprintf("its .git file names %s, not a worktree registration of this repository", dir))
	}
	back, err := gitdirOf(admin)
	if err != nil {
		return "", foreign(real, fmt.Sprintf("its .git file names %s, which git does not register as a worktree", admin))
	}
	if back != confine.RealPath(dotgit) {
		return "", foreign(real, fmt.Sprintf("its .git file names %s, whose worktree is %s", admin, filepath.Dir(back)))
	}
	return admin, nil
}

// gitdirOf is the worktree's .git file a registration names (its gitdir file),
// resolved.
func gitdirOf(admin string) (string, error) {
	data, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(data))
	if p == "" {
		return "", fmt.Errorf("%s/gitdir is empty", admin)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(admin, p)
	}
	return confine.RealPath(p), nil
}

// registrationOf is git's registration whose gitdir names real/.git, "" when none.
func (r *Repository) registrationOf(real string) string {
	admins := confine.RealPath(filepath.Join(r.CommonDir, "worktrees"))
	entries, err := os.ReadDir(admins)
	if err != nil {
		return ""
	}
	want := confine.RealPath(filepath.Join(real, ".git"))
	for _, e := range entries {
		admin := filepath.Join(admins, e.Name())
		if back, err := gitdirOf(admin); err == nil && back == want {
			return admin
		}
	}
	return ""
}

func foreign(path, why string) error {
	return &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf("%s: %s", path, why), Err: ErrForeign}
}

// Remove force-removes the worktree (dirty or not), locked or not (--force twice), or
// only git's registration when its directory is gone. It never prunes globally: that would also
// drop the user's own worktrees whose disk is merely unmounted. The caller must have
// snapshotted anything that could be lost (docs/contract.md §7): `git worktree remove --force`
// also deletes ignored files.
func (m *Managed) Remove(ctx context.Context) error {
	r, path := m.Repo, m.Path
	if _, err := r.runWorktree(ctx, cmd{dir: r.CommonDir, args: []string{"worktree", "remove", "--force", "--force", "--end-of-options", path}}); err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "is not a working tree") {
			return nil // already gone, administrative files too
		}
		return err
	}
	// The registration and the directory are gone: their parents' entries are made
	// durable before the removal is reported (docs/contract.md §11.12), so a power
	// cut cannot bring back a registration whose directory is gone.
	for _, dir := range []string{filepath.Join(r.CommonDir, "worktrees"), filepath.Dir(path)} {
		if err := SyncDir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return noSpace(err)
		}
	}
	return nil
}

// Lock locks the worktree with reason (`git worktree lock`), so that no prune or
// move touches it.
func (m *Managed) Lock(ctx context.Context, reason string) error {
	start := time.Now()
	_, err := m.Repo.runWorktree(ctx, cmd{dir: m.Repo.CommonDir, args: []string{"worktree", "lock", "--reason", reason, "--end-of-options", m.Path}})
	return m.gitDirWritten(start, err)
}

// MoveDetached moves a clean worktree to commit: a two-way read-tree (which refuses
// to overwrite local changes), then HEAD detached at commit, with msg in its reflog;
// the index and HEAD are durable when it returns (gitDirWritten). A lock a killed git
// left in its way is waited out (lockError), as for every change of a managed worktree.
func (m *Managed) MoveDetached(ctx context.Context, commit OID, msg string) error {
	start := time.Now()
	if err := m.waitLocks(ctx, "read-tree", "-m", "-u", "--end-of-options", "HEAD", commit.String()); err != nil {
		return err
	}
	err := m.waitLocks(ctx, "update-ref", "--no-deref", "-m", msg, "--end-of-options", "HEAD", commit.String())
	return m.gitDirWritten(start, err)
}

// AttachBranch points the worktree's HEAD at the branch ref (a full refs/heads/ name)
// without touching its index or files, with msg in its reflog; HEAD is durable when it
// returns.
func (m *Managed) AttachBranch(ctx context.Context, ref, msg string) error {
	if err := CheckRefFormat(ref); err != nil || !strings.HasPrefix(ref, "refs/heads/") {
		return fmt.Errorf("attach %q: not a branch ref", clip(ref))
	}
	start := time.Now()
	attached := func(list []WorktreeInfo) bool {
		tip, err := m.Repo.ReadRef(ctx, ref)
		i := slices.IndexFunc(list, func(w WorktreeInfo) bool { return dirKey(w.Path) == dirKey(m.Path) })
		if err != nil || tip == "" || i < 0 {
			return false
		}
		list[i].Head, list[i].Branch, list[i].Detached = tip, ref, false
		return true
	}
	err := m.Repo.changeList(attached, func() error {
		return m.Repo.WaitLocks(ctx, func() error {
			if done, err := m.attachLocal(ctx, ref, msg); done { // attach.go
				return m.lockError(err)
			}
			_, err := cmd{dir: m.Path, args: []string{"symbolic-ref", "-m", msg, "--end-of-options", "HEAD", ref}, eff: &effect{list: true, dirs: []string{m.Path}}}.run(ctx)
			return m.lockError(err)
		})
	})
	return m.gitDirWritten(start, err)
}

// lockError is err, or Repository.lockError's answer for a git run in the managed
// worktree, for which the locks in the worktree's own git dir (its index.lock and
// HEAD.lock) are git-atlas's as well: a git killed in it (a killed resume's reset)
// leaves them, and git never removes one itself. Removing a stale one loses nothing:
// git writes the new file into the lock and renames it, so the file itself is intact.
func (m *Managed) lockError(err error) error {
	lerr := m.Repo.lockErrorOf(err, func(stderr string) bool {
		return clearStaleLockOf(stderr, m.Repo.LockAge(), func(lock string) bool {
			own := m.admin != "" && filepath.Dir(lock) == m.admin && (filepath.Base(lock) == "index.lock" || filepath.Base(lock) == "HEAD.lock")
			return own || atlasRefLock(lock, m.Repo.CommonDir)
		})
	})
	if lerr != nil {
		return lerr
	}
	return err
}

// waitLocks runs git with args in the worktree, waiting out a lock in its way
// (Repository.WaitLocks, lockError).
func (m *Managed) waitLocks(ctx context.Context, args ...string) error {
	return m.Repo.WaitLocks(ctx, func() error {
		_, err := m.git(ctx, nil, nil, args...)
		return m.lockError(err)
	})
}

// ResetClean makes the worktree's index and files exactly its HEAD's tree, as a fresh
// checkout of HEAD would be: `reset --hard`, then `clean -ffdx` (untracked and ignored
// files and directories, nested repositories included). Only files that differ are
// written, so it is far cheaper than removing the worktree and checking it out again.
// It destroys every change: only for a worktree whose every byte was snapshotted
// first. The index (and ORIG_HEAD) reset writes are durable before clean removes
// anything, and the files and directories reset wrote before it returns
// (docs/contract.md §11.12): a worktree reported reset is not, after a power cut, one of
// empty files that its index calls clean. reset takes the worktree's index lock and
// its branch's (it writes the branch to where it is): a lock a killed git left there is
// waited out (lockError).
func (m *Managed) ResetClean(ctx context.Context) error {
	start := time.Now()
	err := m.waitLocks(ctx, "reset", "--hard", "--quiet", "HEAD")
	if err := m.gitDirWritten(start, err); err != nil {
		return err
	}
	if _, err = m.git(ctx, nil, nil, "clean", "-ffdxq"); err != nil {
		return err
	}
	return noSpace(syncChangedSince(m.Path, start.Add(-objectDirSlack)))
}

// syncChangedSince flushes every regular file and directory under root (root's own
// .git file and nested repositories' stores aside) whose change time is since or
// later: the files a checkout wrote, and the directories whose entries it added or
// removed.
func syncChangedSince(root string, since time.Time) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && !d.Type().IsRegular() || !changedSince(p, since) {
			return nil // a link's name is its directory's to flush
		}
		if d.IsDir() {
			return SyncDir(p)
		}
		return syncFile(p)
	})
}

// RemoveAdded removes a worktree this process itself added at path a moment ago and
// could not finish (a failed `recovery restore --worktree`): its registration and
// its files. It is not for anything a ledger names: those go through Managed.
func (r *Repository) RemoveAdded(ctx context.Context, path string) error {
	m := &Managed{Worktree: r.Worktree(path)}
	return m.Remove(ctx)
}
