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
// git-atlas's own branches (refs/heads/atlas/) are taken for two kinds of update, the
// two a worktree's ledger write makes: a creation, whose reflog git starts with
// "<null> <new> <committer>\t<msg>" just before the ref's rename (core.logAllRefUpdates,
// unset: yes unless core.bare says the repository is bare), and a check (old and new
// the same), which git makes under the lock and writes nothing for. A new branch must
// name a commit known in process (knownCommit: loose, or a packed entry of type
// commit; git refuses anything else for a branch).
//
// It takes only what it is certain to do exactly as git would, and leaves the rest to
// git (done false, nothing changed, every lock it took removed): a repository go-git
// does not open (any extension: sha256, reftable, worktree config), refs outside
// refs/atlas/ and those two kinds of branch update (HEAD and other branches move
// worktrees and get reflogs), a ref that has a reflog file (git appends to it),
// core.logAllRefUpdates=always, a shared repository (git adjusts each file's mode),
// deletions (they rewrite packed-refs), a new value that is neither a whole loose
// object nor named by a pack's index (git checks that it exists; the ledger's own
// objects are loose when written, a clone's baseline is packed; an object whose
// packed bytes are damaged passes this check where git's read of it would fail), a
// packed one while a replace ref exists, a
// branch's reflog line git would write otherwise (core.bare unset, a message it
// normalises, an identity it takes from the account), and any ref git would refuse or
// that is not a plain file holding an id (a symbolic ref, a directory where the ref
// should be, a file where a directory should be, a packed name that is a prefix of it
// or the reverse).

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
	// verify: old and new the same, a branch's check: nothing is written.
	verify bool
	// reflog is the line git starts a new branch's reflog with, "" none, and logPath
	// where it goes.
	reflog, logPath string
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
func (r *Repository) updateRefsLocal(ctx context.Context, msg string, updates []RefUpdate, e effect) (done bool, err error) {
	timeout, cfg, ok := r.localRefsAllowed(ctx)
	if !ok {
		return false, nil
	}
	ups := make([]*localUpdate, len(updates))
	seen := map[string]bool{}
	var branches branchLog
	// A pin and a branch often name the same object: each is looked at once.
	objects := map[string][2]bool{}
	known := func(id string) (exists, commit bool) {
		k, ok := objects[id]
		if !ok {
			k[0], k[1] = r.knownObject(id)
			objects[id] = k
		}
		return k[0], k[1]
	}
	for i, u := range updates {
		if seen[u.Name] {
			return false, nil
		}
		seen[u.Name] = true
		ups[i] = &localUpdate{RefUpdate: u, path: filepath.Join(r.CommonDir, filepath.FromSlash(u.Name))}
		if strings.HasPrefix(u.Name, "refs/") && !strings.HasPrefix(u.Name, "refs/atlas/") {
			if !r.localBranchAllowed(cfg, msg, ups[i], &branches, known) {
				return false, nil
			}
		} else if !r.localUpdateAllowed(u, known) {
			return false, nil
		}
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
		if u.verify {
			continue
		}
		if err := u.writeLock(); err != nil {
			return true, noSpace(err)
		}
	}
	if err := ctx.Err(); err != nil {
		return true, err
	}
	names := make([]string, 0, len(ups))
	noted := false
	for _, u := range ups {
		if u.verify {
			continue // released, unchanged, by the deferred release
		}
		if !noted {
			// A branch made: the worktree list's epochs move, as around git's process.
			e.note()
			defer e.note()
			noted = true
		}
		if u.reflog != "" {
			if err := appendReflog(u.logPath, u.reflog); err != nil {
				return true, noSpace(fmt.Errorf("update ref %s: reflog: %w", u.Name, err))
			}
		}
		if err := os.Rename(u.path+".lock", u.path); err != nil {
			return true, noSpace(fmt.Errorf("update ref %s: %w", u.Name, err))
		}
		u.lock = nil
		names = append(names, u.Name)
	}
	return true, noSpace(r.syncRefDirs(start, names))
}

// branchLog is what a transaction's branch creations need for their reflogs, worked
// out once: whether git writes one, and the committer it names.
type branchLog struct {
	decided, logs bool
	ident         string
}

// localBranchAllowed reports whether u, an update outside refs/atlas/, is one
// updateRefsLocal may make (a creation or a check of a branch of git-atlas's, see
// above), and fills in what it writes.
func (r *Repository) localBranchAllowed(cfg *configList, msg string, u *localUpdate, b *branchLog, known func(id string) (exists, commit bool)) bool {
	if !strings.HasPrefix(u.Name, "refs/heads/atlas/") || !plainRefName(u.Name) || !isHexID(u.New) || len(u.New) != len(r.NullID()) {
		return false
	}
	if u.Old == u.New {
		u.verify = true // git locks, compares and writes nothing, its reflog untouched
		return true
	}
	if !IsNullID(u.Old) || (msg != "" && !plainReflogMsg(msg)) {
		return false
	}
	if _, commit := known(u.New); !commit {
		return false
	}
	u.logPath = filepath.Join(r.CommonDir, "logs", filepath.FromSlash(u.Name))
	if !freeForFile(r.CommonDir, u.logPath) {
		return false
	}
	if !b.decided {
		logs, ok := branchReflogs(cfg)
		if !ok {
			return false
		}
		if logs {
			if b.ident, ok = committerIdent(cfg, time.Now()); !ok {
				return false
			}
		}
		b.decided, b.logs = true, logs
	}
	if b.logs {
		u.reflog = reflogLine(r.NullID(), u.New, b.ident, msg)
	}
	return true
}

// branchReflogs reports whether git run in the common dir starts a new branch's
// reflog (files_log_ref_write: core.logAllRefUpdates, and when that is unset, "not a
// bare repository"); ok is false where this code would have to guess (core.bare unset,
// values git reads otherwise). "always" never gets here (localRefsAllowed).
func branchReflogs(cfg *configList) (logs, ok bool) {
	if e, set := cfg.get("core.logallrefupdates"); set {
		if e.bare {
			return true, true
		}
		return parseBool(e.value)
	}
	e, set := cfg.get("core.bare")
	if !set {
		return false, false
	}
	if e.bare {
		return false, true // an implicit true: bare
	}
	bare, ok := parseBool(e.value)
	return !bare, ok
}

// freeForFile reports whether a file can be made at path under root as git would
// make it: nothing there, and every directory above it either a directory or absent.
func freeForFile(root, path string) bool {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	for dir := filepath.Dir(path); len(dir) > len(root); dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return err == nil && fi.IsDir()
	}
	return true
}

// localRefsAllowed reports whether the repository's refs can be written in process,
// and the lock timeout to use.
func (r *Repository) localRefsAllowed(ctx context.Context) (time.Duration, *configList, bool) {
	if _, goGit := r.objects.(*goGitStore); !goGit || r.configs == nil {
		return 0, nil, false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return 0, nil, false
	}
	cfg := r.configIn(ctx, r.CommonDir)
	if cfg.err != nil {
		return 0, nil, false
	}
	if strings.EqualFold(cfg.str("core.logallrefupdates"), "always") {
		return 0, nil, false
	}
	if e, set := cfg.get("core.sharedrepository"); set {
		if v, ok := parseBool(e.value); e.bare || !ok || v {
			if !strings.EqualFold(e.value, "umask") {
				return 0, nil, false
			}
		}
	}
	timeout := refLockTimeout
	if e, set := cfg.get("core.filesreflocktimeout"); set {
		ms, err := strconv.Atoi(e.value)
		if err != nil || ms < 0 {
			return 0, nil, false
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	return timeout, cfg, true
}

// localUpdateAllowed reports whether u is an update updateRefsLocal may make, known
// telling what is known in process of its object (knownObject).
func (r *Repository) localUpdateAllowed(u RefUpdate, known func(id string) (exists, commit bool)) bool {
	if !strings.HasPrefix(u.Name, "refs/atlas/") || !plainRefName(u.Name) || IsNullID(u.New) || !isHexID(u.New) {
		return false
	}
	if len(u.New) != len(r.NullID()) || (u.Old != "" && (!isHexID(u.Old) || len(u.Old) != len(u.New))) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "logs", filepath.FromSlash(u.Name))); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	exists, _ := known(u.New) // a pin at a clone's baseline: a packed one
	return exists
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

// current is u's value under its lock (refValue).
func (u *localUpdate) current(packed []byte) (id string, ok bool) {
	return refValue(u.path, u.Name, packed)
}

// refValue is the value of ref name, whose loose file is path: the loose file's, else
// packed's, else "" (no such ref). ok is false when git must be asked: a loose file
// that is not exactly an id and a newline, or a packed name that is a directory of
// name or name's parent.
func refValue(path, name string, packed []byte) (id string, ok bool) {
	data, err := os.ReadFile(path)
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
		pid, packedName, cut := strings.Cut(line, " ")
		switch {
		case !cut || !isHexID(pid):
			return "", false
		case packedName == name:
			id = pid
		case strings.HasPrefix(packedName, name+"/") || strings.HasPrefix(name, packedName+"/"):
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
