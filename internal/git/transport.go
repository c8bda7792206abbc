package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// remoteGit runs a transport command (ls-remote, fetch, push) from where git itself
// would run it: the top of the worktree the repository was opened from (the git dir
// when bare), so a relative remote URL such as ../remote.git means what it means to
// git. These commands read and write refs and objects only, never a working tree.
func (r *Repository) remoteGit(ctx context.Context, args ...string) ([]byte, error) {
	dir := r.TopLevel
	if dir == "" {
		dir = r.GitDir
	}
	return cmd{dir: dir, args: args}.run(ctx)
}

// Remotes returns the names of the repository's configured remotes: what `git remote`
// prints, read from the configuration listing where that is certain (remotesOf).
func (r *Repository) Remotes(ctx context.Context) ([]string, error) {
	if names, ok := remotesOf(r.configIn(ctx, r.CommonDir)); ok {
		return names, nil
	}
	out, err := r.git(ctx, "remote")
	if err != nil {
		return nil, err
	}
	var names []string
	for l := range strings.SplitSeq(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	return names, nil
}

// remotesOf is the remotes `git remote` lists for configuration l: every name that
// some remote.<name>.<key> names, sorted as git sorts them (bytes), each once. ok is
// false, and git is asked, when l could not be read or a name is one git warns about
// or would print oddly (empty, starting with "/", holding a newline).
func remotesOf(l *configList) (names []string, ok bool) {
	if l.err != nil {
		return nil, false
	}
	seen := map[string]bool{}
	for _, e := range l.entries {
		rest, found := strings.CutPrefix(e.key, "remote.")
		dot := strings.LastIndexByte(rest, '.')
		if !found || dot < 0 {
			continue // remote.pushdefault and the like: no remote
		}
		name := rest[:dot]
		if name == "" || name[0] == '/' || strings.ContainsAny(name, "\n\x00") {
			return nil, false
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, true
}

// LsRemote lists the remote's refs under the given prefixes (each ending in "/"),
// through `git ls-remote`: whatever transport git uses for that remote.
func (r *Repository) LsRemote(ctx context.Context, remote string, prefixes ...string) ([]Ref, error) {
	args := []string{"ls-remote", "--refs", "--", remote}
	for _, p := range prefixes {
		args = append(args, p+"*")
	}
	out, err := r.remoteGit(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("ls-remote %s: %w", remote, err)
	}
	var refs []Ref
	for line := range strings.SplitSeq(string(out), "\n") {
		id, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				refs = append(refs, Ref{ID: id, Name: name})
				break
			}
		}
	}
	return refs, nil
}

// Fetch fetches the remote with explicit refspecs only (custom refs need them,
// docs/git-notes.md §5): no tags, no FETCH_HEAD, no submodules, no opportunistic update of
// remote-tracking branches (--refmap=), no auto-gc. It changes no working tree.
func (r *Repository) Fetch(ctx context.Context, remote string, refspecs ...string) error {
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-gc", "--refmap=", "--", remote}
	args = append(args, refspecs...)
	start := time.Now()
	if _, err := r.remoteGit(ctx, args...); err != nil {
		return fmt.Errorf("fetch %s: %w", remote, r.objectsWritten(start, err))
	}
	return r.syncObjectDirs(start)
}

// PushRef is one ref of an atomic, leased push: the remote ref Name is set to the
// local object ID only if the remote still has Expect ("" = must not exist).
type PushRef struct {
	Name   string
	ID     string
	Expect string
}

// ErrPushRejected means the remote refused an atomic push (a lease was stale or a
// ref moved): nothing was pushed.
var ErrPushRejected = errors.New("push rejected")

// PushAtomic pushes all refs in one `git push --atomic`, each with
// --force-with-lease=<ref>:<expect>, so either every ref moves from the value the
// caller saw to its new value or none does.
func (r *Repository) PushAtomic(ctx context.Context, remote string, refs []PushRef) error {
	if len(refs) == 0 {
		return nil
	}
	args := []string{"push", "--atomic", "--porcelain", "--no-recurse-submodules", "--no-verify"}
	for _, p := range refs {
		args = append(args, "--force-with-lease="+p.Name+":"+p.Expect)
	}
	args = append(args, "--", remote)
	for _, p := range refs {
		args = append(args, p.ID+":"+p.Name)
	}
	out, err := r.remoteGit(ctx, args...)
	if err == nil {
		return nil
	}
	var rejected []string
	declined := false
	for line := range strings.SplitSeq(string(out), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 3 && f[0] == "!" {
			_, dst, _ := strings.Cut(f[1], ":")
			rejected = append(rejected, dst+" "+f[2])
			declined = declined || byPolicy(f[2])
		}
	}
	if declined {
		d := &PushDeclinedError{Refs: rejected}
		if ge, ok := errors.AsType[*Error](err); ok {
			d.Message = remoteMessage(ge.Stderr)
		}
		return d
	}
	if len(rejected) > 0 {
		return fmt.Errorf("%w: %s", ErrPushRejected, strings.Join(rejected, "; "))
	}
	return fmt.Errorf("push %s: %w", remote, err)
}

// ErrPushDeclined means the remote refused a push by its own policy (a hook that
// declined, a protected or hidden ref): not a lost lease, so trying again changes
// nothing. Nothing was pushed.
var ErrPushDeclined = errors.New("push declined by the remote")

// PushDeclinedError is a push the remote declined: the refs with git's reasons, and
// what the remote said (its "remote:" lines, a hook's message).
type PushDeclinedError struct {
	Refs    []string
	Message string
}

func (e *PushDeclinedError) Error() string {
	msg := "the remote declined the push (" + strings.Join(e.Refs, "; ") + ")"
	if e.Message != "" {
		msg += "; it said: " + e.Message
	}
	return msg
}

func (e *PushDeclinedError) Unwrap() error { return ErrPushDeclined }

// byPolicy reports whether a rejected ref's status (push --porcelain's summary and
// reason) is the remote's policy rather than a race: git rejects a stale lease or a
// non-fast-forward itself ("[rejected]"), and a remote that finds a ref moved under
// its lock fails the update or the atomic transaction; every other refusal by the
// remote ("[remote rejected]": a hook declined, a ref is protected, hidden or may
// not be deleted) is its policy.
func byPolicy(status string) bool {
	reason, ok := strings.CutPrefix(status, "[remote rejected]")
	if !ok {
		return false
	}
	reason = strings.TrimSpace(reason)
	for _, race := range []string{"failed to update ref", "failed to lock", "cannot lock ref", "atomic transaction failed",
		"atomic push failure", "incorrect old value", "but expected"} {
		if strings.Contains(reason, race) {
			return false
		}
	}
	return true
}

// remoteMessage is what the remote printed during a push (its "remote:" lines, the
// padding git adds to clear progress output trimmed), one line per line.
func remoteMessage(stderr string) string {
	var lines []string
	for l := range strings.SplitSeq(stderr, "\n") {
		if m, ok := strings.CutPrefix(strings.TrimRight(l, " \r"), "remote: "); ok {
			if m = strings.TrimSpace(m); m != "" {
				lines = append(lines, m)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) commit b; false
// when either object is missing.
func (r *Repository) IsAncestor(ctx context.Context, a, b OID) (bool, error) {
	if !r.HasObject(ctx, a) || !r.HasObject(ctx, b) {
		return false, nil
	}
	return r.Contains(ctx, b, a)
}

// HaveCommonAncestor reports whether commits a and b share any history (`git
// merge-base` finds a base); both must exist (else an error). Two ledger chains of
// one id that share none are two runs, not one run that diverged.
func (r *Repository) HaveCommonAncestor(ctx context.Context, a, b OID) (bool, error) {
	_, err := r.git(ctx, "merge-base", "--end-of-options", a.String(), b.String())
	if err == nil {
		return true, nil
	}
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 && strings.TrimSpace(ge.Stderr) == "" {
		return false, nil
	}
	return false, err
}

// Contains reports whether commit a is in the history of commit b (or is b), as
// `merge-base --is-ancestor a b` says; both must exist (else an error).
func (r *Repository) Contains(ctx context.Context, b, a OID) (bool, error) {
	if contains, ok := r.containsLocal(b, a); ok {
		return contains, nil
	}
	_, err := r.git(ctx, "merge-base", "--is-ancestor", "--end-of-options", a.String(), b.String())
	if err == nil {
		return true, nil
	}
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return false, err
}

// looseHistory is the loose object store, for a walk in process of the history
// between commits a and b: ok only where git would see the parents the commits
// record (no replace ref, no grafts file, GIT_GRAFT_FILE unset, no shallow file) and
// a is a commit, loose or packed (git's error for a missing or other object is git's
// to give). The walk reads only loose commits; a is where it stops, never read.
func (r *Repository) looseHistory(a, b OID) (looseWriter, bool) {
	g, goGit := r.objects.(*goGitStore)
	_, graftFile := os.LookupEnv("GIT_GRAFT_FILE")
	if !goGit || graftFile || a.IsZero() || b.IsZero() || r.mayReplace() {
		return looseWriter{}, false
	}
	for _, name := range []string{"shallow", "info/grafts"} {
		if _, err := os.Lstat(filepath.Join(r.CommonDir, name)); !errors.Is(err, fs.ErrNotExist) {
			return looseWriter{}, false
		}
	}
	l := g.loose()
	if typ, _, whole := l.readLoose(a.String()); !whole || typ != "commit" {
		if typ, found := l.packedType(a.String()); !found || typ != "commit" {
			return looseWriter{}, false
		}
	}
	return l, true
}

// ancestryWalkMost is how many commits containsLocal reads before it leaves the
// question to git, whose commit-graph answers a long history faster.
const ancestryWalkMost = 1000

// containsLocal is Contains answered from loose commits in process: ok only where
// every commit of b's history it must read to be sure is a whole loose commit (the
// ledger's own and a test's are; a real history is packed and goes to git), a is a
// commit, at most ancestryWalkMost of them are read, and nothing can make git see
// other parents (looseHistory).
func (r *Repository) containsLocal(b, a OID) (contains, ok bool) {
	l, ok := r.looseHistory(a, b)
	if !ok {
		return false, false
	}
	if b == a {
		return true, true
	}
	return l.walkLoose(b, a, func(parents []OID) (done, ok bool) {
		return slices.Contains(parents, a), true
	})
}

// walkLoose visits from's history breadth first, each commit once, reading only whole
// loose commits and never stop (nor past it): visit sees the parents of each commit
// read and says whether the walk is done there or cannot be answered in process.
// ok is false too where a commit to read is not a whole loose commit, or more than
// ancestryWalkMost would be read.
func (l looseWriter) walkLoose(from, stop OID, visit func(parents []OID) (done, ok bool)) (done, ok bool) {
	seen := map[OID]bool{from: true, stop: true}
	queue := []OID{from}
	for n := 0; len(queue) > 0; n++ {
		id := queue[0]
		queue = queue[1:]
		if n == ancestryWalkMost {
			return false, false
		}
		typ, data, whole := l.readLoose(id.String())
		if !whole || typ != "commit" {
			return false, false
		}
		info, err := parseCommit(id.String(), data)
		if err != nil {
			return false, false
		}
		if done, ok := visit(info.Parents); done || !ok {
			return done, ok
		}
		for _, p := range info.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, true
}
