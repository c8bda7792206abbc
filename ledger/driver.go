package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// DefaultDriverTTL is how long a driver lease lasts when --ttl names nothing.
const DefaultDriverTTL = 10 * time.Minute

// Writer roles: who a process's ledger writes come from (docs/contract.md §5.1).
const (
	// RoleDriver: run writes (start, transition, event, finish, heartbeat, job add,
	// union, recover, undo, worktree add/remove of a stage or without a job lease).
	// Each is checked against the driver lease and, with a holder, takes or renews
	// it (ClaimDriver).
	RoleDriver = iota
	// RoleWorker: a worker's job-lease writes (job claim/renew/done, its verify,
	// worktree add with a job lease) and reap (it ends only leases that already ran
	// out, whoever asks: a fleet of workers reaps with no orchestrator). They hold
	// job leases and never touch, nor are checked against, the driver lease.
	RoleWorker
	// RoleResume: resume's own writes; resume decides for itself whether a live run is
	// the caller's (its session, or --take-over) before it writes anything.
	RoleResume
	// RoleObserver: records of what was observed (the post-checkout hook marking a
	// worktree untrusted): never refused for the driver's sake, never a lease.
	RoleObserver
)

// Writer is who makes a store's writes: the --holder, --session and --take-over of
// the command, and its role.
type Writer struct {
	Holder   string
	Session  string
	TakeOver bool
	TTL      time.Duration
	Role     int
	// Stage and Token: the write is a report on Stage carrying its stage token
	// (--lease). The stage's current token is the driver's delegation to whoever does
	// the attempt's work: such a report is accepted from a holder that is not the
	// driver, and leaves the driver lease as it is.
	Stage, Token string
	// To is the status the report moves the stage to ("" for a heartbeat): a delegated
	// report only ends or beats the open attempt (verifying, passed, failed).
	To string
	// seen is the driver lease live when a --take-over command first read the run
	// (nil: none): the take-over replaces that driver only (gitstate.Store.Update sets it).
	seen    *Lease
	seenSet bool
	// Key seals Session for the ledger and compares it with the stored one
	// (session.go); a Store's writes use the store's (gitstate.Store.Writing).
	Key SessionKey
}

// SawDriver returns w set to take over only the driver lease of r as read at now
// (gitstate.Store.Update calls it with the run as the command first read it).
func (w Writer) SawDriver(r *Run, now time.Time) Writer {
	w.seen, w.seenSet = nil, true
	if l := liveLease(r, now); l != nil {
		c := *l
		w.seen = &c
	}
	return w
}

// sameLease reports whether a and b are the same grant (nil: no live driver).
func sameLease(a, b *Lease) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Holder == b.Holder && a.Session == b.Session && a.ExpiresAt == b.ExpiresAt
}

// liveLease is the run's driver lease when it is live at now, else nil.
func liveLease(r *Run, now time.Time) *Lease {
	if !r.Live(now) {
		return nil
	}
	return r.State.Driver
}

// TakeOver is a driver lease replaced by --take-over: recorded as its own
// driver_taken_over event, in the same ref update as the write that took it. A
// renewal by the driving session under another holder name is one too, recorded as
// driver_renamed (Renamed): never silently (docs/contract.md §5.1).
type TakeOver struct {
	Old Lease `json:"old"`
	New Lease `json:"new"`

	renamed bool
}

// Renamed: the lease was renewed by its session under a new holder name.
func (t *TakeOver) Renamed() bool { return t.renamed }

// Driven reports whether the run is being driven at now: its driver lease is live and
// the current stage's open attempt (if any) is not dead of idleness. A run that is not
// driven is interrupted when running or blocked (resume.Interrupted).
func (r *Run) Driven(now time.Time) bool {
	return r.Live(now) && !r.AttemptIdle(now)
}

// ClaimDriver applies the driver rule of docs/contract.md §5.1 to a run write by w at now, on the
// state the write starts from (gitstate.Store.Update calls it on every compare-and-swap try):
//   - no live driver: a named holder becomes the driver until now + TTL;
//   - a live driver that is w's holder, or whose session is w's: renewed;
//   - another live driver: refused (exit 3, the JSON error names it), unless
//     TakeOver, which makes w's holder the driver and is returned to be recorded.
//
// A write naming no holder is refused on a live run (unless its session drives it);
// a stage report carrying the stage's current token is accepted from anyone (the
// token is the driver's delegation) and renews nothing.
// A finished run has no driver to claim.
func ClaimDriver(r *Run, w Writer, now time.Time) (*TakeOver, error) {
	if RunTerminal(r.State.Status) {
		return nil, nil
	}
	if w.TakeOver && w.Holder == "" {
		return nil, fault.Named(fault.ErrUsage, "{take_over} needs {holder}: the new driver must have a name")
	}
	ttl := w.TTL
	if ttl <= 0 {
		ttl = DefaultDriverTTL
	}
	lease := func() *Lease {
		return &Lease{Holder: w.Holder, Session: w.Key.Seal(w.Session), ExpiresAt: Stamp(now.Add(ttl))}
	}
	d := r.State.Driver
	if cur := liveLease(r, now); w.TakeOver && w.seenSet && cur != nil && !sameLease(w.seen, cur) &&
		cur.Holder != w.Holder && !w.Key.Matches(cur.Session, w.Session) {
		// Another writer took the run (or its driver renewed) after this command read
		// it: a take-over replaces the driver it saw, never one it did not.
		return nil, DriverRefused(r, w)
	}
	if !r.Live(now) {
		if w.Holder != "" {
			r.State.Driver = lease()
		}
		return nil, nil
	}
	bySession := w.Key.Matches(d.Session, w.Session)
	own := (w.Holder != "" && d.Holder == w.Holder) || bySession
	switch {
	case own && w.Holder == "":
		if d.Session != "" && !Sealed(d.Session) {
			d.Session = w.Key.Reseal(d.Session) // an earlier release's plain id, hashed now
		}
		return nil, nil // the driving session, writing without a name: nothing to renew
	case own:
		l := lease()
		if l.Session == "" && d.Holder == w.Holder {
			l.Session = w.Key.Reseal(d.Session)
		}
		old := *d
		old.Extra = nil
		r.State.Driver = l
		if d.Holder != w.Holder {
			// The session's own lease, under a new name: recorded with both names.
			return &TakeOver{Old: old, New: *l, renamed: true}, nil
		}
		return nil, nil
	case w.TakeOver:
		old := *d
		old.Extra = nil
		r.State.Driver = lease()
		return &TakeOver{Old: old, New: *r.State.Driver}, nil
	case w.Token != "":
		// A subagent's report with the attempt's token: accepted when the token is
		// current (a stale one is refused, exit 3) and the report is the attempt's own
		// (its heartbeat, or verifying, passed, failed while it is open), the driver
		// lease untouched. Anything else (a gate, a re-dispatch) is the driver's.
		if err := CheckStageToken(r, w.Stage, w.Token); err != nil {
			return nil, err
		}
		_, st, _ := r.Stage(w.Stage)
		if OpenAttempt(st) != nil && (w.To == "" || w.To == StageVerifying || w.To == StagePassed || w.To == StageFailed) {
			return nil, nil
		}
	}
	return nil, DriverRefused(r, w)
}

// DriverRefused is the error of a write refused because another driver's lease is
// live: exit 3, naming holder and expiry (also as the JSON error's `driver`), never
// its session (docs/contract.md §5.1: in a shared ledger it would be a credential).
func DriverRefused(r *Run, w Writer) error {
	d := r.State.Driver
	who := d.Holder
	var e *fault.Error
	if w.Holder == "" {
		e = fault.Named(fault.ErrConflict, "run %s is driven by %s until %s: a write that names no {holder} is refused while a driver is live; nothing was written", r.Header.RunID, who, d.ExpiresAt)
	} else {
		e = fault.Conflict("run %s is driven by %s until %s, not by %s: nothing was written", r.Header.RunID, who, d.ExpiresAt, w.Holder)
	}
	return e.WithHint("only the run's driver writes to it: wait for its lease to expire, or pass {holder} NAME {take_over} to replace it (recorded as driver_taken_over)").
		WithField("driver", map[string]string{"holder": d.Holder, "expires_at": d.ExpiresAt}).WithQuoted(d.Holder)
}

// CheckStageToken refuses a stage report whose token is not the stage's current one
// (exit 3: a subagent of attempt 1 cannot report after attempt 2 was dispatched); a
// malformed token or one of another stage is a usage error. An empty token checks
// nothing (the driver's own report).
func CheckStageToken(r *Run, stage, token string) error {
	if token == "" {
		return nil
	}
	name, _, _, _, err := ParseLeaseToken(token)
	if err != nil {
		return fault.Usage("malformed stage token %q: want <stage>#<attempt>@<epoch>.<nonce>, as the dispatch printed it", token)
	}
	if name != stage {
		return fault.Usage("stage token %q is for stage %s, not %s", token, name, stage)
	}
	_, st, ok := r.Stage(stage)
	if !ok {
		return fault.NotFound("run %s has no stage %q", r.Header.RunID, stage)
	}
	cur := ""
	if n := len(st.Attempts); n > 0 {
		cur = st.Attempts[n-1].Lease
	}
	if cur != token {
		e := fault.Conflict("stage token %s of run %s is stale: nothing was written", token, r.Header.RunID)
		if cur != "" {
			return e.WithHint("stage %s's current attempt is %d (token %s); a report of an older attempt changes nothing", stage, len(st.Attempts), cur)
		}
		return e.WithHint("stage %s has no attempt a token can report on (none was dispatched, or undo went back to before it)", stage)
	}
	return nil
}

// OpenAttempt is the stage's current attempt while its work is under way
// (dispatched or verifying), or nil.
func OpenAttempt(st *StageState) *Attempt {
	if st == nil || len(st.Attempts) == 0 || (st.Status != StageDispatched && st.Status != StageVerifying) {
		return nil
	}
	return &st.Attempts[len(st.Attempts)-1]
}

// budget reads a stage's wall or idle budget (checked at start: CheckStages).
func budget(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0
	}
	return d
}

// lastSign is the attempt's last sign of life: its heartbeat, else its start.
func lastSign(a *Attempt) (time.Time, bool) {
	s := a.HeartbeatAt
	if s == "" {
		s = a.StartedAt
	}
	t, err := ParseStamp(s)
	return t, err == nil
}

// TimeLeft is what remains of the open attempt a's wall budget (counted from its
// start) and idle budget (from its last sign of life) at now, each rounded to the
// second and never below zero; "" for a budget the stage does not set.
func TimeLeft(def *StageDef, a *Attempt, now time.Time) (wall, idle string) {
	left := func(b time.Duration, since string) string {
		t, err := ParseStamp(since)
		if b == 0 || err != nil {
			return ""
		}
		return max(b-now.Sub(t), 0).Round(time.Second).String()
	}
	sign := a.HeartbeatAt
	if sign == "" {
		sign = a.StartedAt
	}
	return left(budget(def.WallBudget), a.StartedAt), left(budget(def.IdleBudget), sign)
}

// IdleDeadline is when the current stage's open attempt dies of idleness (no heartbeat
// for its stage's idle budget), or the zero time when it cannot (no open attempt, no
// idle budget).
func (r *Run) IdleDeadline() time.Time {
	if r.summary {
		t, _ := ParseStamp(r.idleUntil)
		return t
	}
	cur := r.CurrentStage()
	if cur == nil {
		return time.Time{}
	}
	def, st, ok := r.Stage(cur.Name)
	a := OpenAttempt(st)
	if !ok || a == nil || budget(def.IdleBudget) == 0 {
		return time.Time{}
	}
	t, ok := lastSign(a)
	if !ok {
		return time.Time{}
	}
	return t.Add(budget(def.IdleBudget))
}

// AttemptIdle reports whether the current stage's open attempt is dead at now: no
// heartbeat for its idle budget.
func (r *Run) AttemptIdle(now time.Time) bool {
	t := r.IdleDeadline()
	return !t.IsZero() && !now.Before(t)
}

// WallExceeded says, when the stage's open attempt has run past its wall budget at
// now, why ("attempt 2 of stage code started 3h ago, past its wall budget 2h"); else "".
func WallExceeded(def *StageDef, st *StageState, now time.Time) string {
	a := OpenAttempt(st)
	wall := budget(def.WallBudget)
	if a == nil || wall == 0 {
		return ""
	}
	t, err := ParseStamp(a.StartedAt)
	if err != nil || now.Sub(t) < wall {
		return ""
	}
	return fmt.Sprintf("attempt %d of stage %s started %s ago, past its wall budget %s", a.N, st.Name, now.Sub(t).Round(time.Second), wall)
}

// Heartbeat records a sign of life of the stage's open attempt at now (docs/contract.md §5.1):
// its token, when given, must be the current one (exit 3); an attempt past its wall
// budget is refused (exit 5), as is a stage with no open attempt. holder is the
// driver who asked, whom the refusal's report step names with the token
// (docs/contract.md §11.13).
func Heartbeat(r *Run, stage, token, holder string, now time.Time) error {
	def, st, ok := r.Stage(stage)
	if !ok {
		return fault.NotFound("run %s has no stage %q", r.Header.RunID, stage).WithHint("stages: %s", joinNames(stageNames(r)))
	}
	if err := CheckStageToken(r, stage, token); err != nil {
		return err
	}
	a := OpenAttempt(st)
	if a == nil {
		return fault.Named(fault.ErrRefused, "stage %s is %s: it has no open attempt to heartbeat", stage, st.Status).
			WithHint("a heartbeat is for a dispatched or verifying stage; heartbeat the run alone without {stage}")
	}
	if why := WallExceeded(def, st, now); why != "" {
		return fault.Refused("heartbeat refused: %s", why).
			WithHint("report the attempt (`%s`), or dispatch a new attempt", reportFailed(r.Header.RunID, stage, token, holder))
	}
	a.HeartbeatAt = Stamp(now)
	return nil
}

// reportFailed is the step that reports stage's open attempt failed, with the stage
// token and holder of whoever asked, when they have them.
func reportFailed(run, stage, token, holder string) fault.Step {
	s := fault.Do("transition", "run", run, "stage", stage, "status", StageFailed)
	if token != "" {
		s = s.With("lease", token)
	}
	if holder != "" {
		s = s.With("holder", holder)
	}
	return s
}

// BaselinePinName is the pin of an attempt's baseline, under refs/atlas/pins/<run>/.
func BaselinePinName(stage string, n int) string {
	return fmt.Sprintf("stage/%s/%d", stage, n)
}

func joinNames(n []string) string {
	if len(n) == 0 {
		return "none"
	}
	var out strings.Builder
	out.WriteString(n[0])
	for _, s := range n[1:] {
		out.WriteString(", " + s)
	}
	return out.String()
}
