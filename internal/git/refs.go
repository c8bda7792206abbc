package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// RefUpdate is one change in a ref transaction. Old is the value the ref must have
// ("" = don't care, ZeroID = must not exist); New is the new value (ZeroID = delete).
type RefUpdate struct {
	Name string
	New  string
	Old  string
}

// ErrRefConflict means a compare-and-swap lost: some ref was not at its expected value.
var ErrRefConflict = errors.New("ref changed concurrently")

// ErrStaleLockRemoved (always with ErrRefConflict) means the transaction failed on a
// lock file a killed git left, which was removed: the same transaction can be tried
// again at once.
var ErrStaleLockRemoved = errors.New("removed a stale lock")

// ErrRefLocked (always with ErrRefConflict) means the transaction failed on a ref's
// lock file that is not yet old enough to be a killed git's (StaleLockAge): another
// git holds it now, or one was killed a moment ago. Trying again later succeeds.
var ErrRefLocked = errors.New("a ref is locked")

// UpdateRefs applies all updates in one transaction: in process where that is certain
// to do what git does (reftx.go: the ledger's own refs, and the creation or check of
// git-atlas's branches), else through `git update-ref --stdin`. Both take git's
// <ref>.lock files, so a concurrent `git update-ref` is never lost (docs/git-notes.md),
// and both flush the refs before they report success: each ref's file is flushed
// before it is renamed into place, and syncRefDirs then flushes the directories that
// hold the new names (docs/contract.md §11.12: a transaction is durable when it
// returns).
func (r *Repository) UpdateRefs(ctx context.Context, msg string, updates ...RefUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	names := make([]string, len(updates))
	for i, u := range updates {
		names[i] = u.Name
	}
	e := r.refsEffect(names)
	start := time.Now()
	local := false
	write := func() error {
		done, err := r.updateRefsLocal(ctx, msg, updates, e)
		if done {
			local = true
			return err
		}
		_, err = (cmd{dir: r.CommonDir, args: updateRefArgs(msg), stdin: updateRefInput(updates, r.NullID()), eff: &e}).run(ctx)
		return err
	}
	var err error
	if e.list {
		err = r.changeList(func(list []WorktreeInfo) bool { return movedTips(list, updates) }, write)
	} else {
		err = write()
	}
	if local {
		if lerr := r.lockError(err); lerr != nil {
			return lerr
		}
		return err
	}
	if err == nil {
		return r.syncRefDirs(start, names)
	}
	if IsNoSpace(err) {
		return noSpace(err)
	}
	if lerr := r.lockError(err); lerr != nil {
		return lerr
	}
	var ge *Error
	if errors.As(err, &ge) && isCASFailure(ge.Stderr) {
		return fmt.Errorf("%w: %s", ErrRefConflict, strings.TrimSpace(ge.Stderr))
	}
	return err
}

// updateRefArgs are `git update-ref --stdin`'s arguments for a transaction with msg.
func updateRefArgs(msg string) []string {
	args := []string{"update-ref", "-z", "--stdin"}
	if msg != "" {
		args = append(args, "-m", msg)
	}
	return args
}

// updateRefInput is the transaction as `git update-ref -z --stdin` reads it.
func updateRefInput(updates []RefUpdate, null string) []byte {
	var in bytes.Buffer
	in.WriteString("start\x00")
	for _, u := range updates {
		if IsNullID(u.Old) {
			u.Old = null
		}
		switch {
		case IsNullID(u.New):
			fmt.Fprintf(&in, "delete %s\x00%s\x00", u.Name, u.Old)
		default:
			fmt.Fprintf(&in, "update %s\x00%s\x00%s\x00", u.Name, u.New, u.Old)
		}
	}
	in.WriteString("prepare\x00commit\x00")
	return in.Bytes()
}

// lockError says whether err is a git's failure on a ref lock file that exists: with
// ErrStaleLockRemoved when the lock was a killed git's and is gone now (clearStaleLock),
// with ErrRefLocked when it is still there; nil for any other error.
func (r *Repository) lockError(err error) error {
	return r.lockErrorOf(err, func(stderr string) bool { return clearStaleLock(stderr, r.CommonDir, r.LockAge()) })
}

// lockErrorOf is lockError with clear deciding, and removing, a stale lock.
func (r *Repository) lockErrorOf(err error, clear func(stderr string) bool) error {
	var msg string
	if ge, ok := errors.AsType[*Error](err); ok {
		msg = ge.Stderr
	} else if le, ok := errors.AsType[*lockExistsError](err); ok {
		msg = le.Error() // in git's words (reftx.go)
	} else {
		return nil
	}
	if clear(msg) {
		return fmt.Errorf("%w: %w: %s", ErrRefConflict, ErrStaleLockRemoved, strings.TrimSpace(msg))
	}
	if strings.Contains(msg, ".lock': File exists") {
		return fmt.Errorf("%w: %w: %s", ErrRefConflict, ErrRefLocked, strings.TrimSpace(msg))
	}
	return nil
}

// WaitLocks runs write, and again while it fails on a ref lock in the way: at once
// when the lock was a killed git's and is removed (at most ten times), and every
// 200 ms while a lock is younger than the repository's lock age, up to twice that age
// in all. A live git's lock goes within milliseconds; a killed git's becomes stale
// after LockAge and is removed then. For writes that must not give up on a lock a
// killed process left: a gc half-done, a worktree reset half-way. Before its first
// wait it tells r.OnLockWait, when set, which lock is in the way.
func (r *Repository) WaitLocks(ctx context.Context, write func() error) error {
	deadline := time.Now().Add(2 * r.LockAge())
	tell := r.TellLockWait()
	for removed := 0; ; {
		err := write()
		switch {
		case errors.Is(err, ErrStaleLockRemoved) && removed < 10:
			removed++
			continue
		case errors.Is(err, ErrRefLocked) && time.Now().Before(deadline):
			tell(err)
			select {
			case <-ctx.Done():
				return err
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		return err
	}
}

// TellLockWait returns what a loop that waits out ref locks calls before each wait,
// with the error that made it wait: the first ref-lock error (ErrRefLocked) is told to
// r.OnLockWait, when set, with the lock's path and r.LockAge; nothing else is told.
func (r *Repository) TellLockWait() func(err error) {
	told := false
	return func(err error) {
		if told || r.OnLockWait == nil || !errors.Is(err, ErrRefLocked) {
			return
		}
		told = true
		r.OnLockWait(lockPath(err.Error()), r.LockAge())
	}
}

// syncRefDirs flushes, after a ref transaction that began at start, the directory of
// every ref it moved, created or deleted, and each directory above it up to the
// common dir (which holds packed-refs) that changed since start: git renames a ref's
// lock file over it, may make its directories, and rewrites packed-refs for a
// deletion, and flushes none of those directories.
func (r *Repository) syncRefDirs(start time.Time, names []string) error {
	since := start.Add(-objectDirSlack)
	done := map[string]bool{}
	for _, name := range names {
		dir := filepath.Join(r.CommonDir, filepath.FromSlash(name))
		own := true
		for len(dir) > len(r.CommonDir) {
			dir = filepath.Dir(dir)
			if done[dir] {
				break
			}
			done[dir] = true
			fi, err := os.Stat(dir)
			if err != nil {
				continue // removed with the ref's deletion: its parent holds that
			}
			if own || !fi.ModTime().Before(since) {
				if err := SyncDir(dir); err != nil {
					return err
				}
			}
			own = false
		}
	}
	return nil
}

// SyncRefs flushes the directories that hold the named refs, and every one above
// them up to the common dir (packed-refs'): the barrier before a destructive step that
// relies on refs another process may have written without flushing them.
func (r *Repository) SyncRefs(names ...string) error {
	return r.syncRefDirs(time.Time{}, names)
}

// DefaultStaleLockAge is how old a ref lock of git-atlas's own namespaces must be
// before it is taken for the leftover of a killed git (a transaction holds its locks
// for milliseconds). git never removes such a lock itself, and every later write of
// that run would fail until someone did. Repository.StaleLockAge overrides it.
const DefaultStaleLockAge = 10 * time.Second

// clearStaleLock removes the lock file named in update-ref's "Unable to create
// '<lock>': File exists" when it is older than age and belongs to refs/atlas/,
// an atlas/ branch, or is the repository's packed-refs.lock (commonDir's), and says
// whether it did (the caller retries).
//
// packed-refs.lock is every ref's, not only git-atlas's: a deletion of a packed ref
// takes it, so a git-atlas command killed while deleting (gc, a kill -9 sweep found)
// leaves it, and from then on every deletion of a packed ref in the repository fails,
// the user's too, until someone removes it. A live git holds it for the time of one
// rewrite of packed-refs, and gives up waiting for it itself after
// core.packedRefsTimeout (1 s by default): one ten times older is a dead git's. Its
// removal loses nothing: git writes the new packed-refs into the lock and renames it,
// so a lock left behind is a rewrite that never happened, and packed-refs is intact.
func clearStaleLock(stderr, commonDir string, age time.Duration) bool {
	return clearStaleLockOf(stderr, age, func(lock string) bool { return atlasRefLock(lock, commonDir) })
}

// atlasRefLock reports whether lock is a ref lock of git-atlas's own namespaces or
// commonDir's packed-refs.lock.
func atlasRefLock(lock, commonDir string) bool {
	return strings.Contains(lock, "/refs/atlas/") || strings.Contains(lock, "/refs/heads/atlas/") || isPackedRefsLock(lock, commonDir)
}

// clearStaleLockOf is clearStaleLock for the locks owned says are git-atlas's.
func clearStaleLockOf(stderr string, age time.Duration, owned func(lock string) bool) bool {
	lock := lockPath(stderr)
	if lock == "" || !owned(lock) {
		return false
	}
	st, err := os.Stat(lock)
	if err != nil || time.Since(st.ModTime()) < age {
		return false
	}
	return os.Remove(lock) == nil
}

// lockPath is the lock file git names in "Unable to create '<lock>': File exists"
// (update-ref's words, and the in-process transaction's), or "" when msg names none.
func lockPath(msg string) string {
	const pre, post = "Unable to create '", "': File exists"
	_, after, ok := strings.Cut(msg, pre)
	if !ok {
		return ""
	}
	lock, _, ok := strings.Cut(after, post)
	if !ok || !strings.HasSuffix(lock, ".lock") {
		return ""
	}
	return lock
}

// isPackedRefsLock reports whether lock is commonDir's packed-refs.lock.
func isPackedRefsLock(lock, commonDir string) bool {
	if filepath.Base(lock) != "packed-refs.lock" || commonDir == "" {
		return false
	}
	a, err := os.Stat(filepath.Dir(lock))
	if err != nil {
		return false
	}
	b, err := os.Stat(commonDir)
	return err == nil && os.SameFile(a, b)
}

// isCASFailure recognises update-ref's refusals that mean "someone else moved it".
// Locale is fixed to C, so the messages are stable.
func isCASFailure(stderr string) bool {
	for _, s := range []string{"but expected", "reference already exists", "unable to resolve reference", "cannot lock ref", "is at", "reference is missing"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// Ref is a ref name and the object it points to.
type Ref struct {
	Name string
	ID   string
}

// ListRefs returns every ref under the prefixes (each a ref name or a prefix ending
// in "/"), in one for-each-ref; none when every prefix certainly has no ref (no fork
// at all). It asks for nothing that needs the target object (no %(objecttype)):
// for-each-ref dies on the first ref whose object is missing, and one corrupt ref
// must not hide all the others.
func (r *Repository) ListRefs(ctx context.Context, prefixes ...string) ([]Ref, error) {
	empty := len(prefixes) > 0
	for _, p := range prefixes {
		empty = empty && r.noRefsUnder(p)
	}
	if empty {
		return nil, nil
	}
	if refs, ok := r.listRefsLocal(prefixes); ok {
		return refs, nil
	}
	out, err := r.git(ctx, append([]string{"for-each-ref", "--format=%(objectname) %(refname)", "--"}, prefixes...)...)
	if err != nil {
		return nil, fmt.Errorf("list refs %s: %w", strings.Join(prefixes, " "), err)
	}
	var refs []Ref
	for line := range strings.SplitSeq(string(out), "\n") {
		id, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		refs = append(refs, Ref{ID: id, Name: name})
	}
	return refs, nil
}

// ReadRef returns the id a ref points to, or "" when it does not exist.
func (r *Repository) ReadRef(ctx context.Context, name string) (string, error) {
	return r.objects.readRef(ctx, name)
}

// noRefsUnder reports whether the repository certainly has no ref under prefix (a
// directory of refs, "refs/atlas/runs"), read from the files alone: refs kept as files
// (no reftable), no loose directory for prefix, and a small packed-refs (or none) that
// does not name it. Anything less certain says false, and git is asked: a repository
// with no runs (most of those an agent opens, where `resume --brief` runs at every
// session start) then costs no for-each-ref process.
func (r *Repository) noRefsUnder(prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	if !strings.HasPrefix(prefix, "refs/") || strings.ContainsAny(prefix, "*?[") {
		return false // a pattern: git's to match
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, filepath.FromSlash(prefix))); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	data, ok := readPackedRefs(r.CommonDir)
	if !ok {
		return false
	}
	// Under the prefix, or the prefix itself as a whole ref name (a packed ref).
	return !bytes.Contains(data, []byte(" "+prefix+"/")) && !bytes.Contains(data, []byte(" "+prefix+"\n"))
}

// listRefsLocal is ListRefs read from the ref files in process, where that is certain
// to be what for-each-ref prints: a repository whose refs go-git reads (files backend,
// no extension), prefixes that are plain ref names outside the per-worktree
// namespaces, every loose ref under them a plain file holding an object id under a
// name git accepts, and a packed-refs of at most a mebibyte. ok is false for anything
// else, and git is asked. Loose refs are read before packed-refs: `git pack-refs`
// writes packed-refs before it deletes the loose files, so a ref being packed is seen
// in one or the other.
func (r *Repository) listRefsLocal(prefixes []string) ([]Ref, bool) {
	if _, goGit := r.objects.(*goGitStore); !goGit || len(prefixes) == 0 {
		return nil, false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	var clean []string
	for _, p := range prefixes {
		p = strings.TrimSuffix(p, "/")
		if !strings.HasPrefix(p, "refs/") || !plainRefName(p) {
			return nil, false
		}
		for _, own := range []string{"refs/bisect", "refs/worktree", "refs/rewritten"} {
			if p == own || strings.HasPrefix(p, own+"/") || strings.HasPrefix(own, p+"/") {
				return nil, false
			}
		}
		clean = append(clean, p)
	}
	found := map[string]string{}
	for _, p := range clean {
		if !readLooseRefs(r.CommonDir, p, found) {
			return nil, false
		}
	}
	data, ok := readPackedRefs(r.CommonDir)
	if !ok {
		return nil, false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		id, name, ok := strings.Cut(line, " ")
		if !ok || !isHexID(id) {
			return nil, false
		}
		if _, loose := found[name]; loose || !underAny(name, clean) {
			continue
		}
		if !plainRefName(name) {
			return nil, false
		}
		found[name] = id
	}
	var refs []Ref
	for name, id := range found {
		refs = append(refs, Ref{Name: name, ID: id})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, true
}

func underAny(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if name == p || strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// readLooseRefs adds the loose refs at name (a ref file, or a directory of them) to
// found; false when one is not certain (see listRefsLocal).
func readLooseRefs(commonDir, name string, found map[string]string) bool {
	p := filepath.Join(commonDir, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	case fi.IsDir():
		entries, err := os.ReadDir(p)
		if err != nil {
			return false
		}
		for _, e := range entries {
			if !readLooseRefs(commonDir, name+"/"+e.Name(), found) {
				return false
			}
		}
		return true
	case !fi.Mode().IsRegular() || !plainRefName(name):
		return false
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true // deleted, or packed: packed-refs is read next
	}
	id := strings.TrimSuffix(string(data), "\n")
	if err != nil || !isHexID(id) {
		return false
	}
	found[name] = id
	return true
}

// plainRefName reports whether name is a ref name git certainly accepts and lists:
// components of letters, digits and "-_.@+", none empty, starting with a dot or
// ending in ".lock", no "..", "@{".
func plainRefName(name string) bool {
	for c := range strings.SplitSeq(name, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") || strings.HasSuffix(c, ".") || strings.Contains(c, "..") || strings.Contains(c, "@{") || c == "@" {
			return false
		}
		for _, ch := range c {
			if (ch < 'a' || ch > 'z') && (ch < 'A' || ch > 'Z') && (ch < '0' || ch > '9') && !strings.ContainsRune("-_.@+", ch) {
				return false
			}
		}
	}
	return true
}

// readPackedRefs is the repository's packed-refs (nil when there is none); ok is false
// when it cannot be read or is larger than a mebibyte (git's to search). Every
// in-process reader of refs reads it through here.
func readPackedRefs(commonDir string) (data []byte, ok bool) {
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	defer f.Close()
	const most = 1 << 20
	data, err = io.ReadAll(io.LimitReader(f, most+1))
	if err != nil || len(data) > most {
		return nil, false
	}
	return data, true
}
