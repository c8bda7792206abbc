package gitstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Ref prefixes of the ledger (docs/contract.md §3).
const (
	RunsPrefix = "refs/atlas/runs/"
	PinsPrefix = "refs/atlas/pins/"
	// IncomingPrefix is where a pull or a remote sync fetches to before it moves the
	// ledger's refs: outside refs/atlas/, so nothing reads a half-fetched ref as a run.
	IncomingPrefix = "refs/atlas-incoming/"
)

// RunRef is the ref of a run's ledger.
func RunRef(id string) string { return RunsPrefix + id }

// PinRef is the ref that keeps one of a run's baselines alive.
func PinRef(id, name string) string { return PinsPrefix + id + "/" + name }

// ErrCorrupt marks a run whose ledger cannot be read.
var ErrCorrupt = errors.New("corrupt ledger")

// Store keeps runs as commit chains under refs/atlas/runs.
type Store struct {
	Repo *git.Repository
	// MaxTries bounds the compare-and-swap retries of one write.
	MaxTries int
	// Writer is who this process writes as (docs/contract.md §5.1): every write of the RoleDriver
	// is checked against the run's driver lease and takes or renews it (ClaimDriver),
	// on each compare-and-swap try.
	Writer ledger.Writer
	// Remote, when set, makes every write a write through that git remote (docs/contract.md
	// §10.1, remote.go) and makes reads fetch the run first.
	Remote *Remote
	// Clock is the time the store's writes are dated by and its leases judged at (nil:
	// the system clock, in UTC). Whoever opens the store sets it (ops: Ops.Clock); a
	// test gives its own.
	Clock ledger.Clock
	// Nonces makes the nonce of each lease and stage token the store's writers issue
	// (nil: RandomNonce). A test that compares tokens gives its own.
	Nonces func() string
	// AfterWrite, when set, runs after every ledger write that Create or Update made,
	// once the run's writer lock is released: derived data that depends on every run
	// (the post-checkout hint, hooks.KeepHint) is kept in step by it. Whoever opens a
	// store for a front end sets it (ops, hooks), so every command's writes keep it,
	// whatever command wrote. It must never fail the write.
	AfterWrite func(ctx context.Context, s *Store)
	// Unsigned: the events this store writes carry text from elsewhere (an import of
	// another system's files), not this clone's: they get no MAC (textmac.go).
	Unsigned bool

	remote     remoteState
	tries      atomic.Int64
	keyOnce    sync.Once
	key        ledger.SessionKey
	keyErr     error
	commonOnce sync.Once
	commonDir  string
	rootOnce   sync.Once
	rootDir    string
	rootErr    error
}

// New returns a store over repo.
func New(repo *git.Repository) *Store { return &Store{Repo: repo, MaxTries: 400} }

// SessionKey is the repository's key for session ids (session.go), read (or made)
// once per store.
func (s *Store) SessionKey() (ledger.SessionKey, error) {
	s.keyOnce.Do(func() { s.key, s.keyErr = LoadSessionKey(s.Repo) })
	return s.key, s.keyErr
}

// Writing is the store's Writer with the repository's session key: what its writes
// apply the driver rule with (ClaimDriver). A writer that names a session needs the
// key (a session is never written in the clear).
func (s *Store) Writing() (ledger.Writer, error) {
	w := s.Writer
	if w.Key.IsZero() {
		k, err := s.SessionKey()
		if err != nil && w.Session != "" {
			return w, err
		}
		w.Key = k
	}
	return w, nil
}

// Now is the time by the store's clock.
func (s *Store) Now() time.Time { return s.Clock.Now() }

// Nonce is a nonce for a new lease or stage token: Nonces, or RandomNonce.
func (s *Store) Nonce() string {
	if s.Nonces != nil {
		return s.Nonces()
	}
	return ledger.RandomNonce()
}

// Change is what one ledger write does: the event, and refs to move in the same
// transaction as the run's ref (pins, recovery refs, branches).
type Change struct {
	Event ledger.Event
	Refs  []git.RefUpdate
}

// Load reads a run from its ledger tip. A run that exists but cannot be read is
// reported with ErrCorrupt, never skipped silently.
func (s *Store) Load(ctx context.Context, id string) (*ledger.Run, error) {
	if err := ledger.ValidName("run", id); err != nil {
		return nil, err
	}
	if err := s.fetchRun(ctx, id); err != nil {
		return nil, err
	}
	return s.loadLocal(ctx, id)
}

// LoadLocal reads a run from this repository's ledger as it is, never from a remote
// (even when the store writes through one): for derived data that describes the
// local ledger, such as the post-checkout hint.
func (s *Store) LoadLocal(ctx context.Context, id string) (*ledger.Run, error) {
	if err := ledger.ValidName("run", id); err != nil {
		return nil, err
	}
	return s.loadLocal(ctx, id)
}

// loadLocal reads a run from this repository's ledger tip, as it is.
func (s *Store) loadLocal(ctx context.Context, id string) (*ledger.Run, error) {
	tip, err := s.Repo.ReadRef(ctx, RunRef(id))
	if err != nil {
		return nil, err
	}
	if tip == "" {
		return nil, fault.NotFound("no run %q", id).WithHint("`%s` shows every run", fault.Do("list", "all", true))
	}
	return s.loadAt(ctx, id, tip)
}

func (s *Store) loadAt(ctx context.Context, id, tip string) (*ledger.Run, error) {
	specs, err := blobSpecs(tip, "run.json", "state.json")
	if err != nil {
		return nil, unreadable(id, "its tip: %v", err)
	}
	blobs, err := s.Repo.BlobsAt(ctx, specs)
	if err != nil {
		return nil, err
	}
	r, err := decodeRun(id, tip, blobs[0], blobs[1])
	if err != nil && blobs[0].Err != nil {
		return nil, s.diagnose(ctx, id, tip, err)
	}
	if r != nil {
		s.localize(ctx, r)
	}
	return r, err
}

// diagnose says why run.json could not be read when the tip itself is the problem
// (a missing object, a blob): "no such path run.json" would send the user looking in
// the wrong place. It runs only on the error path.
func (s *Store) diagnose(ctx context.Context, id, tip string, err error) error {
	oid, perr := git.ParseOID(tip)
	if perr != nil {
		return unreadable(id, "its tip: %v", perr)
	}
	typ, terr := s.Repo.ObjectType(ctx, oid)
	switch {
	case errors.Is(terr, git.ErrNotFoundObject):
		return unreadable(id, "its ref points at %s, which is missing from the object store", tip)
	case terr == nil && typ != "commit":
		return unreadable(id, "its ref points at a %s (%s), not a ledger commit", typ, tip)
	}
	return err
}

// unreadable is the error of a run whose ledger cannot be read (ErrCorrupt). It has no
// kind of its own (exit 1, "failure"): it is neither a refusal by the state machine
// nor a missing run, and nothing an orchestrator should retry. A document's value it
// quotes (ledger.DocumentError) is pulled text, withheld from agents (fault.Withheld).
func unreadable(id, format string, args ...any) *fault.Error {
	e := &fault.Error{Msg: fmt.Sprintf("run %s is unreadable: ", id) + fmt.Sprintf(format, args...), Err: ErrCorrupt,
		Hint: fmt.Sprintf("inspect it with `git log -p %s`; other runs are unaffected", RunRef(id))}
	for _, a := range args {
		if err, ok := a.(error); ok {
			if de, ok := errors.AsType[*ledger.DocumentError](err); ok {
				e.Withheld = append(e.Withheld, de.Withheld()) // the value it quotes is pulled text
			}
		}
	}
	return e
}

func decodeRun(id, tip string, header, state git.Blob) (*ledger.Run, error) {
	if err := readable(id, tip, header, state); err != nil {
		return nil, err
	}
	r := &ledger.Run{}
	r.StoredAt(tip, header.ID)
	if err := ledger.DecodeDoc(header.Data, &r.Header); err != nil {
		return nil, unreadable(id, "run.json: %v", err)
	}
	if err := ledger.DecodeDoc(state.Data, &r.State); err != nil {
		return nil, unreadable(id, "state.json: %v", err)
	}
	if err := sameRun(id, r); err != nil {
		return nil, err
	}
	return r, nil
}

// readable fails when run.json or state.json could not be read from the tip.
func readable(id, tip string, header, state git.Blob) error {
	for _, b := range []struct {
		name string
		blob git.Blob
	}{{"run.json", header}, {"state.json", state}} {
		if errors.Is(b.blob.Err, git.ErrNotFoundObject) {
			return unreadable(id, "ledger commit %s has no readable %s", tip, b.name)
		}
		if b.blob.Err != nil {
			return unreadable(id, "%s: %v", b.name, b.blob.Err)
		}
	}
	return nil
}

// sameRun fails when the documents name another run than their ref, or hold a value
// no write makes (CheckDocuments). Every read of a run's documents or summary line
// passes through it.
func sameRun(id string, r *ledger.Run) error {
	if r.Header.RunID != id || r.State.RunID != id {
		names := fmt.Sprintf("%q/%q", r.Header.RunID, r.State.RunID)
		return unreadable(id, "documents name run %s", names).
			WithWithheld(fault.Withheld{Text: names, Stand: "another (its name withheld: the ledger's text)"})
	}
	if err := ledger.CheckDocuments(&r.Header, &r.State); err != nil {
		return unreadable(id, "%v", err)
	}
	return nil
}

func (s *Store) afterWrite(ctx context.Context) {
	if s.AfterWrite != nil {
		s.AfterWrite(ctx, s)
	}
}

// Create writes a new run's first ledger commit; it fails with a conflict if the run
// exists. refs (pins) are created in the same transaction.
func (s *Store) Create(ctx context.Context, h ledger.Header, st ledger.State, ev ledger.Event, refs ...git.RefUpdate) (*ledger.Run, error) {
	if err := ledger.ValidName("run", h.RunID); err != nil {
		return nil, err
	}
	if err := h.CheckMode(); err != nil {
		return nil, err
	}
	// Run ids that differ only in case share a ledger ref file and a worktree
	// directory on a case-insensitive file system: one such run is a duplicate there,
	// so it is one everywhere (a run may be pulled to such a system).
	existing, err := s.Repo.ListRefs(ctx, strings.TrimSuffix(RunsPrefix, "/"))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, ref := range existing {
		ids = append(ids, strings.TrimPrefix(ref.Name, RunsPrefix))
	}
	if twin := ledger.CaseTwin(h.RunID, ids); twin != "" {
		return nil, fault.Named(fault.ErrConflict, "run %q already exists as %q: run ids that differ only in case would share a ledger ref and a worktree directory on a case-insensitive file system", h.RunID, twin).WithHint("pick another {id}")
	}
	h.Schema, st.Schema = ledger.Schema, ledger.Schema
	hb, err := ledger.EncodeDoc(&h)
	if err != nil {
		return nil, err
	}
	hblob, err := s.Repo.WriteBlob(ctx, hb)
	if err != nil {
		return nil, fmt.Errorf("write run.json: %w", err)
	}
	r := &ledger.Run{Header: h, State: st}
	r.StoredAt("", hblob.String())
	r.State.Seq = 0
	tip, err := s.commit(ctx, r, "", &ev)
	if err != nil {
		return nil, err
	}
	up := append([]git.RefUpdate{{Name: RunRef(h.RunID), New: tip, Old: git.ZeroID}}, refs...)
	if s.Remote != nil {
		if err := s.createRemote(ctx, h.RunID, up); err != nil {
			return nil, err
		}
		r.Tip = tip
		return r, nil
	}
	// A lock on the run's ref is a start of the same id under way, or one a kill left
	// (with its pin: adoptLeftoverPins): wait for the one, remove the other once stale.
	write := func() error {
		return s.Repo.WaitLocks(ctx, func() error { return s.Repo.UpdateRefs(ctx, "atlas: start "+h.RunID, up...) })
	}
	err = write()
	if errors.Is(err, git.ErrRefConflict) {
		// Looked at only when the write lost: a start reads no ref it need not.
		cur, rerr := s.Repo.ReadRef(ctx, RunRef(h.RunID))
		if rerr != nil {
			return nil, rerr
		}
		if cur != "" {
			return nil, fault.Named(fault.ErrConflict, "run %q already exists", h.RunID).WithHint("pick another {id}")
		}
		adopted, aerr := s.adoptLeftoverPins(ctx, h.RunID, up[1:])
		if aerr != nil {
			return nil, aerr
		}
		if adopted {
			err = write()
		}
		if errors.Is(err, git.ErrRefConflict) {
			return nil, fault.Named(fault.ErrConflict, "run %q was not created: a ref of it changed meanwhile (%v)", h.RunID, err).WithHint("run the command again")
		}
	}
	if err != nil {
		return nil, err
	}
	r.Tip = tip
	s.afterWrite(ctx)
	return r, nil
}

// adoptLeftoverPins lets a new run take over the pins of its id that a repository
// holds while it holds no run of that id: a start killed between its two ref updates
// leaves its pin (the transaction renames its locks in name order, the pin's before
// the run's; internal/git/reftx.go), as does a gc killed between dropping a run and
// its pins. Such a pin protects no run's baseline, and refusing the start as "run
// already exists" would send an agent after a run that is not there. Each create-only
// pin of refs found here is leased on its value instead (adopted: any was); the
// write still requires the run's own ref to be absent, so a run made meanwhile wins
// and the start is a conflict as before.
func (s *Store) adoptLeftoverPins(ctx context.Context, id string, refs []git.RefUpdate) (adopted bool, err error) {
	for i, u := range refs {
		if !isPinOf(id, u.Name) || !git.IsNullID(u.Old) {
			continue
		}
		v, err := s.Repo.ReadRef(ctx, u.Name)
		if err != nil {
			return adopted, err
		}
		if v != "" {
			refs[i].Old, adopted = v, true
		}
	}
	return adopted, nil
}

// isPinOf reports whether ref is one of run id's pins.
func isPinOf(id, ref string) bool {
	return strings.HasPrefix(ref, PinsPrefix+id+"/")
}

// commit writes state.json, event.json and a ledger commit on parent.
func (s *Store) commit(ctx context.Context, r *ledger.Run, parent string, ev *ledger.Event) (string, error) {
	now := ledger.Stamp(s.Now())
	r.State.Seq++
	ev.Schema, ev.Seq, ev.Epoch = ledger.Schema, r.State.Seq, r.State.Epoch
	if ev.Time == "" {
		ev.Time = now
	}
	// Written here: its text is this clone's (textmac.go), unless the store says not.
	ev.MAC = ""
	if k, err := s.SessionKey(); err == nil && !s.Unsigned {
		ev.MAC = k.EventMAC(r.Header.RunID, ev)
	}
	// An event that brings its own time (an imported one keeps its original time)
	// dates the state too; every other event is stamped now.
	r.State.UpdatedAt = ev.Time
	if err := ledger.CheckPayload(ev); err != nil {
		return "", fmt.Errorf("run %s event %d not written: %w", r.Header.RunID, ev.Seq, err)
	}
	sb, err := ledger.EncodeDoc(s.portable(&r.State))
	if err != nil {
		return "", err
	}
	eb, err := ledger.EncodeDoc(ev)
	if err != nil {
		return "", err
	}
	sblob, err := s.Repo.WriteBlob(ctx, sb)
	if err != nil {
		return "", fmt.Errorf("write state.json: %w", err)
	}
	eblob, err := s.Repo.WriteBlob(ctx, eb)
	if err != nil {
		return "", fmt.Errorf("write event.json: %w", err)
	}
	tree, err := s.Repo.WriteTree(ctx, []git.TreeEntry{{Name: "run.json", Blob: r.HeaderBlob()}, {Name: "state.json", Blob: sblob.String()}, {Name: "event.json", Blob: eblob.String()}})
	if err != nil {
		return "", fmt.Errorf("write ledger tree: %w", err)
	}
	var parents []git.OID
	if parent != "" {
		p, err := git.ParseOID(parent)
		if err != nil {
			return "", fmt.Errorf("ledger parent: %w", err)
		}
		parents = []git.OID{p}
	}
	msg, err := LedgerMessage(r, ev, tree.String())
	if err != nil {
		return "", err
	}
	c, err := s.Repo.WriteCommit(ctx, tree, parents, msg)
	return c.String(), err
}

// Update applies fn to the run's newest state and appends one event, with
// compare-and-swap on the run's ref. fn gets a fresh copy on every try, so it
// re-checks its preconditions against whatever a concurrent writer left; an error
// from fn aborts with nothing written. A write that keeps losing the race fails
// with a conflict after MaxTries. With Remote set, each try is made on the remote's
// tip and is done only once an atomic, leased push put it there (remote.go). Either
// way the driver rule (Writer, ClaimDriver) is applied on every try.
func (s *Store) Update(ctx context.Context, id string, fn func(r *ledger.Run) (*Change, error)) (_ *ledger.Run, err error) {
	wrote := false
	defer func() { // after the lock below is released
		if wrote && err == nil {
			s.afterWrite(ctx)
		}
	}()
	if err := ledger.ValidName("run", id); err != nil {
		return nil, err // before the name reaches a path
	}
	w, err := s.Writing()
	if err != nil {
		return nil, err
	}
	if w.Role == ledger.RoleDriver && w.TakeOver {
		// A take-over replaces the driver this command saw, read before it queues:
		// of several racing take-overs of one driver, one wins and the others find a
		// driver they never saw (exit 3).
		if r, err := s.Load(ctx, id); err == nil {
			w = w.SawDriver(r, s.Now())
		}
	}
	// Queue behind other git-atlas writers of this run rather than race them (see
	// git.Mutex); the CAS below is what makes the write safe.
	defer s.Repo.Mutex(ctx, RunMutex(id), 30*time.Second)()
	if s.Remote != nil {
		r, err := s.updateRemote(ctx, id, w, fn)
		wrote = err == nil && r != nil
		return r, err
	}
	tries := s.MaxTries
	if tries <= 0 {
		tries = 1
	}
	backoff := time.Millisecond
	var lastErr error
	for try := 0; try < tries; try++ {
		wr, err := s.attempt(ctx, id, w, fn)
		if err != nil || wr.change == nil {
			return wr.run, err
		}
		up := append([]git.RefUpdate{{Name: RunRef(id), New: wr.tip, Old: wr.old}}, wr.change.Refs...)
		err = s.Repo.UpdateRefs(ctx, "atlas: "+string(wr.change.Event.Type)+" "+id, up...)
		if err == nil {
			wr.run.Tip, wrote = wr.tip, true
			return wr.run, nil
		}
		if !errors.Is(err, git.ErrRefConflict) {
			return nil, err
		}
		lastErr = err
		// Lost the race: wait a jittered, growing moment and re-read; a caller that
		// gave up (Ctrl-C, a deadline) is not kept waiting, nor retried.
		if backoff, err = jitter(ctx, backoff, 32*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return nil, fault.Conflict("run %s: gave up after %d concurrent updates won", id, tries).WithHint("retry the command; if no other git is running, git's last refusal may name a stale lock file: %s", lastErr)
}

// jitter waits between half and one and a half times backoff (or until ctx ends) and
// returns the next backoff, doubled up to ceiling.
func jitter(ctx context.Context, backoff, ceiling time.Duration) (time.Duration, error) {
	if err := pause(ctx, backoff/2+time.Duration(rand.Int64N(int64(backoff)))); err != nil {
		return backoff, err
	}
	return min(2*backoff, ceiling), nil
}

// stoppedWrites are the events a stopped run still takes (docs/contract.md §5.1): finish, and the
// reaping finish --force does before it; resume writes as RoleResume.
var stoppedWrites = map[ledger.EventType]bool{ledger.EventRunFinished: true, ledger.EventJobReaped: true, ledger.EventWorktreeUntrusted: true}

// written is one try of a write: the run as fn left it, the tip it was made on, the
// commit it made (not yet on any ref) and the change (nil: nothing to write; a
// take-over alone is a change of its own event, with no other ref).
type written struct {
	run      *ledger.Run
	old, tip string
	change   *Change
}

// attempt is one try of a write, the same for a local and a remote write: read the
// local tip, apply the driver rule for w (a take-over is its own event, committed
// under the write that made it, so both land or neither does), let fn mutate a fresh
// copy (re-checking its preconditions), and write the objects of the new ledger
// commit. No ref moves.
func (s *Store) attempt(ctx context.Context, id string, w ledger.Writer, fn func(r *ledger.Run) (*Change, error)) (written, error) {
	s.tries.Add(1)
	r, err := s.loadLocal(ctx, id)
	if err != nil {
		return written{}, err
	}
	if err := r.Writable(); err != nil {
		return written{}, err
	}
	old := r.Tip
	parent := old
	stopped := r.State.Status == ledger.RunStopped
	var took *ledger.TakeOver
	if w.Role == ledger.RoleDriver {
		if took, err = ledger.ClaimDriver(r, w, s.Now()); err != nil {
			return written{}, err
		}
	}
	var takeEv ledger.Event
	if took != nil {
		takeEv = ledger.DriverChangeEvent(ledger.About{Holder: w.Holder}, took)
		if !took.Renamed() {
			r.State.Resuming = nil
		}
		if parent, err = s.commit(ctx, r, old, &takeEv); err != nil {
			return written{}, err
		}
		r.Tip = parent
	}
	ch, err := fn(r)
	if err != nil {
		return written{}, err
	}
	if ch == nil {
		if took == nil {
			return written{run: r}, nil // nothing to write
		}
		return written{run: r, old: old, tip: parent, change: &Change{Event: takeEv}}, nil
	}
	if stopped && w.Role != ledger.RoleResume && !stoppedWrites[ch.Event.Type] {
		return written{}, fault.Refused("run %s is stopped: only resume and finish change it; nothing was written", id).
			WithHint("`%s` to go on, or `%s`", fault.Do("resume", "run", id), fault.Do("finish", "run", id, "status", fault.Placeholder("completed|failed")))
	}
	if !ch.Event.Type.ResumeOwned() {
		r.State.Resuming = nil
	}
	if ch.Event.Holder == "" && w.Role == ledger.RoleDriver {
		ch.Event.Holder = w.Holder
	}
	tip, err := s.commit(ctx, r, parent, &ch.Event)
	if err != nil {
		return written{}, err
	}
	return written{run: r, old: old, tip: tip, change: ch}, nil
}

// Tries is how many compare-and-swap tries the store's writes have made (each reads
// the run and applies its change afresh): contention shows as more tries than writes.
func (s *Store) Tries() int64 { return s.tries.Load() }

// Log returns a run's events, oldest first.
func (s *Store) Log(ctx context.Context, id string) ([]ledger.Event, error) {
	r, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.logFrom(ctx, id, r.Tip)
}

// LogOf returns the events of r as it was read (up to r.Tip), oldest first.
func (s *Store) LogOf(ctx context.Context, r *ledger.Run) ([]ledger.Event, error) {
	return s.logFrom(ctx, r.Header.RunID, r.Tip)
}

// LogDiverged returns the events of run id's n-th kept diverged chain
// (DivergedRef), oldest first.
func (s *Store) LogDiverged(ctx context.Context, id string, n int) ([]ledger.Event, error) {
	if err := ledger.ValidName("run", id); err != nil {
		return nil, err
	}
	if err := s.fetchRun(ctx, id); err != nil {
		return nil, err
	}
	tip, err := s.Repo.ReadRef(ctx, DivergedRef(id, n))
	if err != nil {
		return nil, err
	}
	if tip == "" {
		return nil, fault.NotFound("run %s has no diverged chain %d", id, n).
			WithHint("`git for-each-ref %s%s/` lists the kept ones", DivergedPrefix, id)
	}
	return s.logFrom(ctx, id, tip)
}

func (s *Store) logFrom(ctx context.Context, id, tip string) ([]ledger.Event, error) {
	from, err := git.ParseOID(tip)
	if err != nil {
		return nil, unreadable(id, "its tip: %v", err)
	}
	commits, err := s.Repo.FirstParents(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("walk ledger of %s: %w", id, err)
	}
	specs := make([]git.BlobSpec, len(commits))
	for i, c := range commits {
		specs[len(commits)-1-i] = git.BlobSpec{Commit: c, Path: "event.json"}
	}
	blobs, err := s.Repo.BlobsAt(ctx, specs)
	if err != nil {
		return nil, err
	}
	events := make([]ledger.Event, 0, len(blobs))
	for i, b := range blobs {
		if b.Err != nil {
			return nil, fmt.Errorf("run %s event %d: %w", id, i+1, b.Err)
		}
		var ev ledger.Event
		if err := ledger.DecodeDoc(b.Data, &ev); err != nil {
			return nil, fmt.Errorf("run %s event %d: %w", id, i+1, err)
		}
		if err := ledger.CheckEvent(&ev); err != nil {
			return nil, unreadable(id, "event %d: %v", i+1, err)
		}
		events = append(events, ev)
	}
	return events, nil
}

// MarshalState and friends expose the documents' canonical encoding (for --json).
func MarshalState(s *ledger.State) (json.RawMessage, error)   { return json.Marshal(s) }
func MarshalHeader(h *ledger.Header) (json.RawMessage, error) { return json.Marshal(h) }
func MarshalEvent(e *ledger.Event) (json.RawMessage, error)   { return json.Marshal(e) }

// RunMutex names the mutex writers of run id queue on (git.Mutex); gc removes its file
// with the run.
func RunMutex(id string) string { return "runs/" + id }

// pause waits d, or until ctx ends (then it returns ctx's error).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
