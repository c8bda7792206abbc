// Package ops holds one function per user operation (docs/contract.md §4): start, transition,
// event, finish, heartbeat, undo, job add/claim/renew/done/list, reap, worktree
// add/list/remove, union, resume detect/plan/apply, recover, recovery
// list/show/restore, audit, gc, import, push, pull.
//
// Each takes a typed request and returns a typed result and an error whose kind is a
// fault kind (exit codes are decided by internal/cli from it). Every front end calls
// these and nothing below them for a user operation: the command line
// (internal/cli is parse → call → print), the MCP server, remote coordination and
// the benchmarks. Business rules (which transitions are allowed, what a claim
// records, what a finish clears) live here or in the domain packages below, never in
// a front end.
//
// A result is the operation's JSON document (docs/contract.md §4.7): its fields, in order, are
// what `--json` prints, so a front end prints it as it is.
//
// An operation never prints and never prompts: what a person must confirm is asked
// by the front end before it calls, and the request says that it was confirmed.
package ops

import (
	"context"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/hooks"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/progress"
	"github.com/git-atlas/git-atlas/ledger"
)

// Ops is the operations on one repository. Make one with New; its methods may be
// called from several goroutines at once (each builds its own ledger store).
type Ops struct {
	Repo *git.Repository
	// Remote, when set, makes every ledger write go through that git remote (docs/contract.md
	// §10.1) and reads fetch the run first.
	Remote *gitstate.Remote
	// Progress receives the progress of long operations (audit, gc, union,
	// snapshots, import); nil reports nothing.
	Progress progress.Reporter
	// Clock is the time of the operations' ledger writes, and of a request whose Now
	// is zero (nil: the system clock, in UTC). A test gives its own.
	Clock ledger.Clock
	// Spelling is how the front end writes the steps and request fields a result
	// names (docs/contract.md §4.6): a next action's command and reason. The zero
	// one: neutral words (fault.Step's String).
	Spelling fault.Spelling

	mu     sync.Mutex
	stores []*gitstate.Store
	// ledgerMoved, when set (a test's stop point), runs after every ledger write of
	// the operations' stores, as soon as the ref moved: what it sees is what a kill
	// right then would leave.
	ledgerMoved func(ctx context.Context, s *gitstate.Store)
}

// New returns the operations on repo.
func New(repo *git.Repository) *Ops { return &Ops{Repo: repo} }

// Store returns a ledger store over the repository (and its remote) that writes as
// w, by the operations' clock; every write through it refreshes the post-checkout
// hint (hooks.KeepHint). What its remote syncs did is reported by Kept and
// RemoteNotes.
func (o *Ops) Store(w ledger.Writer) *gitstate.Store {
	s := gitstate.New(o.Repo)
	s.Remote = o.Remote
	s.Writer = w
	s.Clock = o.Clock
	s.AfterWrite = hooks.KeepHint // every front end's writes keep the hook's hint
	if stop := o.ledgerMoved; stop != nil {
		s.AfterWrite = func(ctx context.Context, s *gitstate.Store) { stop(ctx, s); hooks.KeepHint(ctx, s) }
	}
	o.mu.Lock()
	o.stores = append(o.stores, s)
	o.mu.Unlock()
	return s
}

// now is the time by the operations' clock, the same as their stores'.
func (o *Ops) now() time.Time { return o.Clock.Now() }

// orNow is t, or the time now by the operations' clock when t is zero (a request's
// Now).
func (o *Ops) orNow(t time.Time) time.Time {
	if t.IsZero() {
		return o.now()
	}
	return t
}

// Reader returns a store for reads only.
func (o *Ops) Reader() *gitstate.Store { return o.Store(ledger.Writer{Role: ledger.RoleObserver}) }

// Kept returns the diverged chains the operations' remote syncs kept aside (for the
// front end to report).
func (o *Ops) Kept() []gitstate.Diverged {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []gitstate.Diverged
	for _, s := range o.stores {
		out = append(out, s.Kept()...)
	}
	return out
}

// RemoteNotes returns what went wrong after remote writes were done (the remote holds
// them; moving a local ref failed).
func (o *Ops) RemoteNotes() []fault.Text {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []fault.Text
	for _, s := range o.stores {
		out = append(out, s.RemoteNotes()...)
	}
	return out
}

// Tries is how many compare-and-swap tries the operations' ledger writes have made
// (for benchmarks: contention shows as more tries than writes).
func (o *Ops) Tries() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n int64
	for _, s := range o.stores {
		n += s.Tries()
	}
	return n
}

// Driver is who writes as a run's driver (docs/contract.md §5.1): --holder, --session,
// --take-over and --ttl of the driver's commands.
type Driver struct {
	Holder   string `json:"holder,omitempty" help:"${driver_holder}"`
	Session  string `json:"session,omitempty" wire:"session" help:"${driver_session}"`
	TakeOver bool   `json:"take_over,omitempty" help:"${driver_take_over}"`
	// TTL is how long the driver lease lasts (0: ledger.DefaultDriverTTL).
	TTL time.Duration `json:"ttl,omitempty" help:"${driver_ttl}"`
}

// Check fills d's default TTL and refuses a driver the ledger could not record: a
// bad session name, a negative TTL, a take-over without a name.
func (d *Driver) Check() error {
	if d.TTL < 0 {
		return fault.Named(fault.ErrUsage, "{ttl} must be positive")
	}
	if d.TTL == 0 {
		d.TTL = ledger.DefaultDriverTTL
	}
	if d.Session != "" {
		if err := ledger.ValidName("session", d.Session); err != nil {
			return err
		}
	}
	if d.TakeOver && d.Holder == "" {
		return fault.Named(fault.ErrUsage, "{take_over} needs {holder}: the new driver must have a name")
	}
	return nil
}

// Writer is the driver as the ledger's writer.
func (d Driver) Writer() ledger.Writer {
	ttl := d.TTL
	if ttl == 0 {
		ttl = ledger.DefaultDriverTTL
	}
	return ledger.Writer{Holder: d.Holder, Session: d.Session, TakeOver: d.TakeOver, TTL: ttl, Role: ledger.RoleDriver}
}

// driverStore checks d and returns a store writing as it.
func (o *Ops) driverStore(d Driver) (*gitstate.Store, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	return o.Store(d.Writer()), nil
}

// Worker is a worker holding job leases (--holder, --ttl of the job commands): its
// writes never touch the run's driver lease (docs/contract.md §5.1).
type Worker struct {
	Holder string `json:"holder,omitempty" help:"${worker_holder}"`
	// TTL is how long a job lease lasts.
	TTL time.Duration `json:"ttl,omitempty" help:"${worker_ttl}"`
}

// Check fills w's default TTL (ledger.DefaultDriverTTL, as a driver's) and refuses
// a negative one.
func (w *Worker) Check() error {
	if w.TTL < 0 {
		return fault.Named(fault.ErrUsage, "{ttl} must be positive, got %s", w.TTL).WithHint("e.g. {ttl} 10m, {ttl} 90s")
	}
	if w.TTL == 0 {
		w.TTL = ledger.DefaultDriverTTL
	}
	return nil
}

// workerStore returns a store writing as w.
func (o *Ops) workerStore(w Worker) *gitstate.Store {
	return o.Store(ledger.Writer{Holder: w.Holder, Role: ledger.RoleWorker})
}

// loadRuns reads the run named run, or every run when run is "": a run that cannot
// be read is left out and its error returned in unreadable (one corrupt run never
// stops the others).
func loadRuns(ctx context.Context, store *gitstate.Store, run string) (runs []*ledger.Run, unreadable []error, err error) {
	if run != "" {
		r, err := store.Load(ctx, run)
		if err != nil {
			return nil, nil, err
		}
		return []*ledger.Run{r}, nil, nil
	}
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if e.Err != nil {
			unreadable = append(unreadable, e.Err)
			continue
		}
		runs = append(runs, e.Run)
	}
	return runs, unreadable, nil
}
