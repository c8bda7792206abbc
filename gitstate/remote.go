package gitstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Remote is the git remote a store writes through (docs/contract.md §10.1). A write is made on
// the remote's tip of the run and pushed atomically, leased on that tip, together
// with the other refs of the same step and the run's refs the remote lacks (pins,
// recovery refs, node branches that fast-forward it); only then do the local refs
// move. So a write is done when the remote holds it, and the local ledger is never
// ahead of the remote's. A lost lease fetches again and re-runs the write (its
// preconditions checked again), bounded, then a conflict.
type Remote struct {
	// Name is a configured remote, a URL or a path: anything git reaches.
	Name string
	// NoFetch makes reads use the local ledger as it is; writes always fetch.
	NoFetch bool
	// MaxTries bounds the fetch-and-push rounds of one write (0: 60).
	MaxTries int
}

func (r *Remote) tries() int {
	if r.MaxTries > 0 {
		return r.MaxTries
	}
	return 60
}

// DivergedPrefix holds local ledger chains that a remote's replaced:
// refs/atlas/diverged/<run>/<n>, n = 1, 2, ... (kept, readable with `log --diverged`,
// carried by push and pull like a pin: written once, never overwritten).
const DivergedPrefix = "refs/atlas/diverged/"

// BranchesPrefix is the namespace of the runs' branches (nodes, union, replays).
const BranchesPrefix = "refs/heads/atlas/"

// DivergedRef is the ref of a run's n-th kept diverged chain.
func DivergedRef(id string, n int) string { return DivergedPrefix + id + "/" + strconv.Itoa(n) }

// NextDivergedRef is the first DivergedRef of run id that none of the ref sets
// (name → id) holds.
func NextDivergedRef(id string, sets ...map[string]string) string {
	n := 0
	prefix := DivergedPrefix + id + "/"
	for _, set := range sets {
		for name := range set {
			if k, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && strings.HasPrefix(name, prefix) && k > n {
				n = k
			}
		}
	}
	return DivergedRef(id, n+1)
}

// Diverged is a local chain of a run that a remote's chain replaced: the remote's
// wins the run's ref, the local one is kept under Ref.
type Diverged struct {
	RunID  string `json:"run_id"`
	Ref    string `json:"ref"`
	Local  string `json:"local"`
	Remote string `json:"remote"`
}

// remoteState is what a store learned from its remote during one command.
type remoteState struct {
	mu sync.Mutex
	// seen is, per run, the remote's refs of that run when last listed or pushed.
	seen     map[string]map[string]string
	diverged []Diverged
	notes    []fault.Text
}

// Kept returns the diverged chains this store kept aside while syncing with its
// remote (for the front end to report).
func (s *Store) Kept() []Diverged {
	s.remote.mu.Lock()
	defer s.remote.mu.Unlock()
	return slices.Clone(s.remote.diverged)
}

// RemoteNotes returns what went wrong after a remote write was done (the remote holds
// it; moving a local ref failed): for the front end to warn about, in its own words
// for the request fields a note names.
func (s *Store) RemoteNotes() []fault.Text {
	s.remote.mu.Lock()
	defer s.remote.mu.Unlock()
	return slices.Clone(s.remote.notes)
}

func (s *Store) note(format string, args ...any) {
	s.remote.mu.Lock()
	s.remote.notes = append(s.remote.notes, fault.Textf(format, args...))
	s.remote.mu.Unlock()
}

// scope is the set of refs one sync looks at.
type scope struct {
	run      string   // the run whose refs these are ("": every run's)
	patterns []string // for ls-remote and for-each-ref
	match    func(name string) bool
}

// runScope is everything of one run: its ledger, pins, recovery refs, kept diverged
// chains and branches.
func runScope(id string) scope {
	prefixes := []string{PinsPrefix + id + "/", ledger.RecoveryPrefix + id + "/", DivergedPrefix + id + "/", BranchesPrefix + id + "/"}
	return scope{
		run:      id,
		patterns: append([]string{RunRef(id)}, prefixes...),
		match: func(name string) bool {
			if name == RunRef(id) {
				return true
			}
			for _, p := range prefixes {
				if strings.HasPrefix(name, p) {
					return true
				}
			}
			return false
		},
	}
}

// allScope is every run's refs (reads that list runs).
var allScope = scope{
	patterns: []string{"refs/atlas/", BranchesPrefix},
	match: func(name string) bool {
		return strings.HasPrefix(name, "refs/atlas/") || strings.HasPrefix(name, BranchesPrefix)
	},
}

func (s *Store) localRefs(ctx context.Context, sc scope) (map[string]string, error) {
	refs, err := s.Repo.ListRefs(ctx, sc.patterns...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(refs))
	for _, r := range refs {
		if sc.match(r.Name) {
			m[r.Name] = r.ID
		}
	}
	return m, nil
}

// fetchRun brings run id up to date from the remote before a read, once per command.
func (s *Store) fetchRun(ctx context.Context, id string) error {
	if s.Remote == nil || s.Remote.NoFetch {
		return nil
	}
	s.remote.mu.Lock()
	_, done := s.remote.seen[id]
	s.remote.mu.Unlock()
	if done {
		return nil
	}
	var err error
	for range 5 {
		// A conflict is a local writer that moved a ref meanwhile: look again.
		if _, err = s.sync(ctx, runScope(id)); !errors.Is(err, fault.ErrConflict) {
			return err
		}
	}
	return err
}

// fetchAll brings every run up to date from the remote before a listing.
func (s *Store) fetchAll(ctx context.Context) error {
	if s.Remote == nil || s.Remote.NoFetch {
		return nil
	}
	_, err := s.sync(ctx, allScope)
	return err
}

// sync lists the remote's refs of sc, fetches those whose objects this repository may
// lack (all but those its own ref reaches, Reaches; into a staging namespace outside
// refs/atlas/, dropped in the same transaction), screens them (Screen) and then moves
// local refs by compare-and-swap the way pull does: missing refs are created, ledger
// refs and branches fast-forwarded (never a branch checked out in a worktree), pins and
// recovery refs never overwritten. A ledger ref that diverged (the remote and this
// repository both have events the other lacks) takes the remote's chain, and the local
// one is kept under DivergedRef. A local ledger ahead of the remote is left: the next
// write pushes it. A ref the screen refuses is left as it is and noted (a name of no
// git-atlas shape under refs/heads/atlas/, a person's branch, silently); when it is the
// ledger of sc's own run, sync fails for that run (another run with the same id: a
// conflict). It returns the remote's refs (name → id) and remembers them per run.
func (s *Store) sync(ctx context.Context, sc scope) (map[string]string, error) {
	remote := s.Remote.Name
	listed, err := s.Repo.LsRemote(ctx, remote, sc.patterns...)
	if err != nil {
		return nil, remoteError(remote, err)
	}
	theirs := map[string]string{}
	for _, r := range listed {
		if sc.match(r.Name) {
			theirs[r.Name] = r.ID
		}
	}
	local, err := s.localRefs(ctx, sc)
	if err != nil {
		return nil, err
	}
	var ups []git.RefUpdate
	var specs []string
	staging := IncomingPrefix + randomHex() + "/"
	for _, name := range slices.Sorted(maps.Keys(theirs)) {
		if _, err := ParseCarriedRef(name); err != nil {
			continue // never taken: nothing of it is fetched
		}
		if rv := theirs[name]; !Reaches(ctx, s.Repo, local[name], rv) {
			specs = append(specs, "+"+name+":"+staging+name)
		}
	}
	if len(specs) > 0 {
		if err := s.Repo.Fetch(ctx, remote, specs...); err != nil {
			return nil, remoteError(remote, err)
		}
		staged, err := s.Repo.ListRefs(ctx, staging)
		if err != nil {
			return nil, err
		}
		for _, r := range staged {
			// The remote may have moved since it was listed: what was fetched is newer.
			theirs[strings.TrimPrefix(r.Name, staging)] = r.ID
			ups = append(ups, git.RefUpdate{Name: r.Name, New: git.ZeroID, Old: r.ID})
		}
	}
	screened, err := Screen(ctx, s.Repo, theirs, local)
	if err != nil {
		_ = s.dropStaging(context.WithoutCancel(ctx), staging)
		return nil, err
	}
	var kept []Diverged
	var notes []fault.Text
	var checkedOut map[string]bool
	for _, in := range screened {
		name, rv, lv := in.Name, in.Remote, in.Local
		if in.Skip != "" {
			if sc.run != "" && name == RunRef(sc.run) && (in.Fault || in.Collided) {
				_ = s.dropStaging(context.WithoutCancel(ctx), staging)
				if in.Collided {
					return nil, Collision(remote, []string{sc.run})
				}
				return nil, fmt.Errorf("run %s on %s: %s; nothing of it was taken", sc.run, remote, in.Skip)
			}
			if in.Kind != 0 || !strings.HasPrefix(name, BranchesPrefix) {
				notes = append(notes, fault.Textf("%s's %s is left out here: %s", remote, name, in.Skip))
			}
			continue
		}
		switch in.Rel {
		case Missing:
			ups = append(ups, git.RefUpdate{Name: name, New: rv, Old: git.ZeroID})
		case Forward:
			if in.Kind == KindBranch {
				if checkedOut == nil {
					if checkedOut, err = s.checkedOut(ctx); err != nil {
						return nil, err
					}
				}
				if checkedOut[name] {
					continue // its worktree's HEAD: never moved under it
				}
			}
			ups = append(ups, git.RefUpdate{Name: name, New: rv, Old: lv})
		case Split:
			if in.Kind != KindRun {
				continue // a diverged branch stays as it is
			}
			aside := NextDivergedRef(in.Run, local, theirs)
			local[aside] = lv // taken, for another run's pick in this loop
			ups = append(ups, git.RefUpdate{Name: aside, New: lv, Old: git.ZeroID}, git.RefUpdate{Name: name, New: rv, Old: lv})
			kept = append(kept, Diverged{RunID: in.Run, Ref: aside, Local: lv, Remote: rv})
		}
		// Same, Behind (events written here only: the next write pushes them) and
		// Differs (written once) leave the local ref.
	}
	if err := s.Repo.UpdateRefs(ctx, "atlas: fetch from "+remote, ups...); err != nil {
		_ = s.dropStaging(context.WithoutCancel(ctx), staging)
		if errors.Is(err, git.ErrRefConflict) {
			return nil, fault.Conflict("a ref of this repository changed while it was brought up to date from %s", remote).WithHint("retry the command")
		}
		return nil, err
	}
	s.remote.mu.Lock()
	defer s.remote.mu.Unlock()
	s.remote.diverged = append(s.remote.diverged, kept...)
	s.remote.notes = append(s.remote.notes, notes...)
	if s.remote.seen == nil {
		s.remote.seen = map[string]map[string]string{}
	}
	if sc.run != "" {
		s.remote.seen[sc.run] = theirs
	}
	return theirs, nil
}

func (s *Store) dropStaging(ctx context.Context, staging string) error {
	refs, err := s.Repo.ListRefs(ctx, staging)
	if err != nil || len(refs) == 0 {
		return err
	}
	del := make([]git.RefUpdate, len(refs))
	for i, r := range refs {
		del[i] = git.RefUpdate{Name: r.Name, New: git.ZeroID}
	}
	return s.Repo.UpdateRefs(ctx, "", del...)
}

func (s *Store) checkedOut(ctx context.Context) (map[string]bool, error) {
	wts, err := s.Repo.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, w := range wts {
		if w.Branch != "" {
			m[w.Branch] = true
		}
	}
	return m, nil
}

// remoteRefs returns the remote's refs of run id: as last seen in this command, or
// listed again when refresh is set (or nothing was seen yet).
func (s *Store) remoteRefs(ctx context.Context, id string, refresh bool) (map[string]string, error) {
	if !refresh {
		s.remote.mu.Lock()
		m, ok := s.remote.seen[id]
		s.remote.mu.Unlock()
		if ok {
			return m, nil
		}
	}
	return s.sync(ctx, runScope(id))
}

// updateRemote is Update through the remote: sync the run, make the write on its
// tip (attempt: fn re-checks its preconditions on every try), push it leased, and
// only then move the local refs.
func (s *Store) updateRemote(ctx context.Context, id string, wr ledger.Writer, fn func(r *ledger.Run) (*Change, error)) (*ledger.Run, error) {
	tries := s.Remote.tries()
	backoff := 4 * time.Millisecond
	var lastErr error
	for try := range tries {
		theirs, err := s.remoteRefs(ctx, id, try > 0)
		if errors.Is(err, fault.ErrConflict) {
			lastErr = err // a local writer moved a ref during the sync
			if backoff, err = jitter(ctx, backoff, 256*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		w, err := s.attempt(ctx, id, wr, fn)
		if err != nil || w.change == nil {
			return w.run, err
		}
		// A leased push is a forced one: a write must be made on the remote's chain.
		// The local tip may have moved since the sync (a local-only writer); then look
		// again rather than push a chain that drops the remote's events.
		if rt := theirs[RunRef(id)]; rt != "" && rt != w.old {
			if ok, err := IsAncestorID(ctx, s.Repo, rt, w.old); err != nil {
				return nil, err
			} else if !ok {
				lastErr = fmt.Errorf("the local ledger moved off %s's chain during the write", s.Remote.Name)
				continue
			}
		}
		push, err := s.pushPlan(ctx, id, theirs, w.tip, w.change.Refs)
		if err != nil {
			return nil, err
		}
		err = s.Repo.PushAtomic(ctx, s.Remote.Name, push)
		if errors.Is(err, git.ErrPushDeclined) {
			return nil, Declined(s.Remote.Name, "the write to run "+id, err)
		}
		if errors.Is(err, git.ErrPushRejected) {
			lastErr = err
			if backoff, err = jitter(ctx, backoff, 256*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, remoteError(s.Remote.Name, err)
		}
		s.settle(ctx, id, w.old, w.tip, w.change.Refs, push, "atlas: "+string(w.change.Event.Type)+" "+id)
		w.run.Tip = w.tip
		return w.run, nil
	}
	return nil, fault.Conflict("run %s: gave up after %d writes through %s lost to concurrent ones; nothing was written", id, tries, s.Remote.Name).
		WithHint("retry the command; the last refusal: %v", lastErr)
}

// createRemote is Create through the remote: the run's first commit and its refs
// (up[0] is the run's ref) are pushed with the lease "must not exist" first.
func (s *Store) createRemote(ctx context.Context, id string, up []git.RefUpdate) error {
	if tip, err := s.Repo.ReadRef(ctx, RunRef(id)); err != nil {
		return err
	} else if tip != "" {
		return fault.Named(fault.ErrConflict, "run %q already exists", id).WithHint("pick another {id}")
	}
	theirs, err := s.remoteRefs(ctx, id, true)
	if err != nil {
		return err
	}
	if theirs[RunRef(id)] != "" {
		return fault.Named(fault.ErrConflict, "run %q already exists on %s", id, s.Remote.Name).WithHint("pick another {id}")
	}
	// The sync brought the remote's pins of the run here: a pin the remote holds
	// without the run is left over there, as one here is (adoptLeftoverPins).
	if _, err := s.adoptLeftoverPins(ctx, id, up[1:]); err != nil {
		return err
	}
	push, err := s.pushPlan(ctx, id, theirs, up[0].New, up[1:])
	if err != nil {
		return err
	}
	err = s.Repo.PushAtomic(ctx, s.Remote.Name, push)
	if errors.Is(err, git.ErrPushDeclined) {
		return Declined(s.Remote.Name, "run "+id, err)
	}
	if errors.Is(err, git.ErrPushRejected) {
		return fault.Named(fault.ErrConflict, "run %q was created on %s meanwhile; nothing was written", id, s.Remote.Name).WithHint("pick another {id}")
	}
	if err != nil {
		return remoteError(s.Remote.Name, err)
	}
	s.settle(ctx, id, git.ZeroID, up[0].New, up[1:], push, "atlas: start "+id)
	return nil
}

// pushPlan is the atomic push of one write: the run's ref to tip, leased on the
// remote's tip; each ref of the step to its new value, leased on the remote's value
// (a ref the step creates must not exist there with another value); and the run's
// local refs the remote lacks or that fast-forward its branches (a node's commits
// travel with the receipt that reports them).
func (s *Store) pushPlan(ctx context.Context, id string, theirs map[string]string, tip string, refs []git.RefUpdate) ([]git.PushRef, error) {
	run := RunRef(id)
	push := []git.PushRef{{Name: run, ID: tip, Expect: theirs[run]}}
	named := map[string]bool{run: true}
	for _, u := range refs {
		named[u.Name] = true
		to := u.New
		if git.IsNullID(to) {
			to = ""
		}
		rv := theirs[u.Name]
		if rv == to {
			continue
		}
		if git.IsNullID(u.Old) && rv != "" {
			return nil, fault.Conflict("%s already exists on %s with another commit (%s)", u.Name, s.Remote.Name, rv).WithHint("retry the command: it brings that ref here first")
		}
		push = append(push, git.PushRef{Name: u.Name, ID: to, Expect: rv})
	}
	local, err := s.localRefs(ctx, runScope(id))
	if err != nil {
		return nil, err
	}
	// Only refs of git-atlas's shapes at commits go along (a person's own branch
	// atlas/<run>/wip stays here); the step's own refs are the write's.
	var more []git.PushRef
	var ids []string
	for _, name := range slices.Sorted(maps.Keys(local)) {
		lv, rv := local[name], theirs[name]
		if named[name] || lv == rv {
			continue
		}
		if c, err := ParseCarriedRef(name); err != nil || c.Run != id {
			continue
		}
		switch {
		case rv == "":
			more = append(more, git.PushRef{Name: name, ID: lv})
		case strings.HasPrefix(name, BranchesPrefix):
			if ff, err := IsAncestorID(ctx, s.Repo, rv, lv); err != nil {
				continue // its history cannot be read: it stays here, the write goes on
			} else if ff {
				more = append(more, git.PushRef{Name: name, ID: lv, Expect: rv})
			}
		default:
			continue
		}
		ids = append(ids, lv)
	}
	commits, err := Commits(ctx, s.Repo, ids)
	if err != nil {
		return nil, err
	}
	for _, p := range more {
		if commits[p.ID] {
			push = append(push, p)
		}
	}
	return push, nil
}

// settle moves the local refs after the remote took the write, with the same
// compare-and-swap as a local write. When that loses to a local writer, the remote
// is the truth: the run's ref is set to the pushed tip (a local chain the remote does
// not hold is kept under DivergedRef) and the step's other refs are set one by one.
// Nothing here fails the write: what could not be done is noted for the front end.
func (s *Store) settle(ctx context.Context, id, old, tip string, refs []git.RefUpdate, pushed []git.PushRef, msg string) {
	s.remote.mu.Lock()
	if s.remote.seen == nil {
		s.remote.seen = map[string]map[string]string{}
	}
	m := map[string]string{}
	maps.Copy(m, s.remote.seen[id])
	for _, p := range pushed {
		if p.ID == "" {
			delete(m, p.Name)
		} else {
			m[p.Name] = p.ID
		}
	}
	s.remote.seen[id] = m
	s.remote.mu.Unlock()

	run := RunRef(id)
	up := append([]git.RefUpdate{{Name: run, New: tip, Old: old}}, refs...)
	err := s.Repo.UpdateRefs(ctx, msg, up...)
	if err == nil {
		return
	}
	if !errors.Is(err, git.ErrRefConflict) {
		s.note("%s holds the write, but this repository's refs could not be moved (%v): the next command with {remote} brings them", s.Remote.Name, err)
		return
	}
	s.follow(ctx, id, tip, m, msg)
	for _, r := range refs {
		if err := s.Repo.UpdateRefs(ctx, msg, r); err != nil {
			if cur, _ := s.Repo.ReadRef(ctx, r.Name); cur != r.New && (cur != "" || !git.IsNullID(r.New)) {
				s.note("%s holds the write, but %s could not be set here (%v)", s.Remote.Name, r.Name, err)
			}
		}
	}
}

// follow moves the local ledger ref of run id to tip, which the remote holds, after
// a local writer won the local compare-and-swap: a fast-forward, or, when the local
// chain diverged, that chain kept under DivergedRef first; never back to an older tip.
func (s *Store) follow(ctx context.Context, id, tip string, theirs map[string]string, msg string) {
	run := RunRef(id)
	for range 5 {
		cur, err := s.Repo.ReadRef(ctx, run)
		if err != nil || cur == tip {
			return
		}
		up := []git.RefUpdate{{Name: run, New: tip, Old: cur}}
		var kept *Diverged
		if cur == "" {
			up[0].Old = git.ZeroID
		} else if behind, _ := IsAncestorID(ctx, s.Repo, cur, tip); !behind {
			if ahead, _ := IsAncestorID(ctx, s.Repo, tip, cur); ahead {
				return // a newer tip of the remote's is here already
			}
			local, err := s.localRefs(ctx, runScope(id))
			if err != nil {
				break
			}
			aside := NextDivergedRef(id, local, theirs)
			up = append([]git.RefUpdate{{Name: aside, New: cur, Old: git.ZeroID}}, up...)
			kept = &Diverged{RunID: id, Ref: aside, Local: cur, Remote: tip}
		}
		if s.Repo.UpdateRefs(ctx, msg, up...) == nil {
			if kept != nil {
				s.remote.mu.Lock()
				s.remote.diverged = append(s.remote.diverged, *kept)
				s.remote.mu.Unlock()
			}
			return
		}
	}
	s.note("%s holds the write, but this repository's ledger of run %s could not follow it: the next command with {remote} brings it", s.Remote.Name, id)
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Declined is the error of a push the remote declined by its policy (a hook, a
// protected ref; git.ErrPushDeclined): what it refused, with the remote's own
// message. Not a conflict: trying again would be refused again (docs/contract.md §10.1). Its kind
// is none of fault's, so the command exits 1.
func Declined(remote, what string, err error) error {
	msg := fmt.Sprintf("%s declined %s; nothing was written", remote, what)
	if d, ok := errors.AsType[*git.PushDeclinedError](err); ok {
		said := d.Message
		if said == "" {
			said = "(no message)"
		}
		msg = fmt.Sprintf("%s declined %s: %s; nothing was written (%s)", remote, what, said, strings.Join(d.Refs, "; "))
	}
	return (&fault.Error{Err: &declinedError{msg: msg, cause: err}}).
		WithHint("%s", fault.Textf("the remote's policy (a hook, a protected ref) refuses it, and retrying does not change that: ask the remote's owner, or work without {remote}"))
}

// declinedError is Declined's message over git's error (errors.Is finds
// git.ErrPushDeclined).
type declinedError struct {
	msg   string
	cause error
}

func (e *declinedError) Error() string { return e.msg }
func (e *declinedError) Unwrap() error { return e.cause }

// remoteError keeps git's words for an unreachable remote and says which remote.
func remoteError(remote string, err error) error {
	return fmt.Errorf("cannot reach remote %q (check its URL with git remote -v): %w", remote, err)
}
