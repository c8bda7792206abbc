package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A ledger write is a ref transaction under refs/atlas/, and most commands make one or
// two. updateRefsLocal applies such a transaction in process, following git's files
// backend step for step (docs/git-notes.md §1: a Go lockfile compare-and-swap that
// follows git's protocol lost nothing beside a concurrent `git update-ref`, where
// go-git's in-place write lost updates):
//
//  1. take every ref's <ref>.lock with O_EXCL, in name order, retrying for
//     core.filesRefLockTimeout (100 ms) as git does;
//  2. read each ref's value under its lock, loose file first, then packed-refs (a
//     concurrent `git pack-refs` deletes a loose ref only under its lock, so the
//     value cannot move between the two reads);
//  3. compare it with the expected old value; on any mismatch remove every lock and
//     change nothing;
//  4. write each new value into its lock, flush it, rename the locks over the refs,
//     and flush the directories (syncRefDirs), as UpdateRefs does after git.
//
// It takes only what it is certain to do exactly as git would, and leaves the rest to
// git (done false, nothing changed, every lock it took removed): a repository go-git
// does not open (any extension: sha256, reftable, worktree config), refs outside
// refs/atlas/ (branches and HEAD get reflogs and move worktrees), a ref that has a
// reflog file (git appends to it), core.logAllRefUpdates=always, a shared repository
// (git adjusts each file's mode), deletions (they rewrite packed-refs), a new value
// that is not a whole loose object (git checks that it exists; the ledger's own
// objects are loose when written), and any ref git would refuse or that is not a
// plain file holding an id (a symbolic ref, a directory where the ref should be, a
// file where a directory should be, a packed name that is a prefix of it or the
// reverse).

// refLockTimeout is git's default core.filesRefLockTimeout: how long a transaction
// waits for another process's lock on one of its refs before it gives up.
const refLockTimeout = 100 * time.Millisecond

// lockExistsError is a ref lock another process holds (or a killed one left).
type lockExistsError struct {
	name, lock string
}

func (e *lockExistsError) Error() string {
	return fmt.Sprintf("cannot lock ref '%s': Unable to create '%s': File exists", e.name, e.lock)
}

// localUpdate is one update of a local transaction and the lock it holds.
type localUpdate struct {
	RefUpdate
	path string
	lock *os.File
	made string // the highest directory takeLock made, "" none
}

// release removes u's lock, when it still holds one, and the directories it made for
// it when they are empty.
func (u *localUpdate) release() {
	if u.lock == nil {
		return
	}
	_ = u.lock.Close() // a lock whose value was written is closed already: nothing to report
	// A lock that cannot be removed is left for the next writer's stale-lock rule.
	_ = os.Remove(u.path + ".lock")
	for dir := filepath.Dir(u.path); u.made != "" && len(dir) >= len(u.made); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
}

// updateRefsLocal applies updates in process when it can (see above). done is false
// when git must be asked; nothing was changed then.
func (r *Repository) updateRefsLocal(ctx context.Context, updates []RefUpdate) (done bool, err error) {
	timeout, ok := r.localRefsAllowed(ctx)
	if !ok {
		return false, nil
	}
	ups := make([]*localUpdate, len(updates))
	seen := map[string]bool{}
	for i, u := range updates {
		if !r.localUpdateAllowed(u) || seen[u.Name] {
			return false, nil
		}
		seen[u.Name] = true
		ups[i] = &localUpdate{RefUpdate: u, path: filepath.Join(r.CommonDir, filepath.FromSlash(u.Name))}
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i].Name < ups[j].Name })

	defer func() {
		for _, u := range ups {
			u.release()
		}
	}()
	start := time.Now()
	for _, u := range ups {
		ok, err := u.takeLock(ctx, r.CommonDir, timeout)
		if err != nil || !ok {
			return ok, err
		}
	}
	packed, ok := readPackedRefs(r.CommonDir)
	if !ok {
		return false, nil
	}
	for _, u := range ups {
		cur, ok := u.current(packed)
		if !ok {
			return false, nil
		}
		if err := u.check(cur); err != nil {
			return true, err
		}
	}
	for _, u := range ups {
		if err := u.writeLock(); err != nil {
			return true, noSpace(err)
		}
	}
	if err := ctx.Err(); err != nil {
		return true, err
	}
	names := make([]string, 0, len(ups))
	for _, u := range ups {
		if err := os.Rename(u.path+".lock", u.path); err != nil {
			return true, noSpace(fmt.Errorf("update ref %s: %w", u.Name, err))
		}
		u.lock = nil
		names = append(names, u.Name)
	}
	return true, noSpace(r.syncRefDirs(start, names))
}

// localRefsAllowed reports whether the repository's refs can be written in process,
// and the lock timeout to use.
func (r *Repository) localRefsAllowed(ctx context.Context) (time.Duration, bool) {
	if _, goGit := r.objects.(*goGitStore); !goGit || r.configs == nil {
		return 0, false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	cfg := r.configIn(ctx, r.CommonDir)
	if cfg.err != nil {
		return 0, false
	}
	if strings.EqualFold(cfg.str("core.logallrefupdates"), "always") {
		return 0, false
	}
	if e, set := cfg.get("core.sharedrepository"); set {
		if v, ok := parseBool(e.value); e.bare || !ok || v {
			if !strings.EqualFold(e.value, "umask") {
				return 0, false
			}
		}
	}
	timeout := refLockTimeout
	if e, set := cfg.get("core.filesreflocktimeout"); set {
		ms, err := strconv.Atoi(e.value)
		if err != nil || ms < 0 {
			return 0, false
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	return timeout, true
}

// localUpdateAllowed reports whether u is an update updateRefsLocal may make.
func (r *Repository) localUpdateAllowed(u RefUpdate) bool {
	if !strings.HasPrefix(u.Name, "refs/atlas/") || !plainRefName(u.Name) || IsNullID(u.New) || !isHexID(u.New) {
		return false
	}
	if len(u.New) != len(r.NullID()) || (u.Old != "" && (!isHexID(u.Old) || len(u.Old) != len(u.New))) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "logs", filepath.FromSlash(u.Name))); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	g := r.objects.(*goGitStore)
	_, _, whole := g.loose().readLoose(u.New)
	return whole
}

// takeLock creates u's lock file, making the directories above it, and waits up to
// timeout for another process's lock to go. ok is false when git must be asked (a
// file where a directory should be, a directory where the ref should be).
func (u *localUpdate) takeLock(ctx context.Context, commonDir string, timeout time.Duration) (ok bool, err error) {
	if fi, err := os.Lstat(u.path); err == nil && !fi.Mode().IsRegular() {
		return false, nil
	}
	for dir := filepath.Dir(u.path); len(dir) > len(commonDir); dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		u.made = dir
	}
	lock := u.path + ".lock"
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for vanished := 0; ; {
		if err := os.MkdirAll(filepath.Dir(u.path), 0o777); err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
				return false, nil
			}
			return true, noSpace(fmt.Errorf("update ref %s: %w", u.Name, err))
		}
		f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			u.lock = f
			return true, nil
		}
		if errors.Is(err, fs.ErrNotExist) && vanished < 10 {
			// Another process removed the directory it found empty (git does after
			// deleting a ref; a transaction that gave up does): make it again, as
			// git's own lock taking does.
			vanished++
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return true, noSpace(fmt.Errorf("update ref %s: %w", u.Name, err))
		}
		if !time.Now().Before(deadline) {
			return true, &lockExistsError{name: u.Name, lock: lock}
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(wait + rand.N(wait)):
		}
		wait = min(2*wait, 25*time.Millisecond)
	}
}

// current is u's value under its lock: the loose file's, else packed's, else "" (no
// such ref). ok is false when git must be asked: a loose file that is not exactly an
// id and a newline, or a packed name that is a directory of u or u's parent.
func (u *localUpdate) current(packed []byte) (id string, ok bool) {
	data, err := os.ReadFile(u.path)
	switch {
	case err == nil:
		id, found := strings.CutSuffix(string(data), "\n")
		return id, found && isHexID(id)
	case !errors.Is(err, fs.ErrNotExist):
		return "", false
	}
	for line := range strings.SplitSeq(string(packed), "\n") {
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		pid, name, cut := strings.Cut(line, " ")
		switch {
		case !cut || !isHexID(pid):
			return "", false
		case name == u.Name:
			id = pid
		case strings.HasPrefix(name, u.Name+"/") || strings.HasPrefix(u.Name, name+"/"):
			return "", false
		}
	}
	return id, true
}

// check compares the ref's value cur ("" none) with the value u expects, in the words
// git's refusals use (isCASFailure).
func (u *localUpdate) check(cur string) error {
	switch {
	case u.Old == "":
		return nil
	case IsNullID(u.Old) && cur != "":
		return fmt.Errorf("%w: cannot lock ref '%s': reference already exists", ErrRefConflict, u.Name)
	case IsNullID(u.Old):
		return nil
	case cur == "":
		return fmt.Errorf("%w: cannot lock ref '%s': unable to resolve reference '%s'", ErrRefConflict, u.Name, u.Name)
	case cur != u.Old:
		return fmt.Errorf("%w: cannot lock ref '%s': is at %s but expected %s", ErrRefConflict, u.Name, cur, u.Old)
	}
	return nil
}

// writeLock writes u's new value into its lock file and flushes it.
func (u *localUpdate) writeLock() error {
	if _, err := io.WriteString(u.lock, u.New+"\n"); err != nil {
		return fmt.Errorf("update ref %s: %w", u.Name, err)
	}
	if err := u.lock.Sync(); err != nil {
		return fmt.Errorf("update ref %s: %w", u.Name, err)
	}
	if err := u.lock.Close(); err != nil {
		return fmt.Errorf("update ref %s: %w", u.Name, err)
	}
	return nil
}
