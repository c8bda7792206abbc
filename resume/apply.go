package resume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/recovery"
	"github.com/git-atlas/git-atlas/worktrees"
)

// Ops are the worktree and recovery operations a resume needs; the command line
// wires them to the worktrees and recovery packages, tests may stub them.
type Ops struct {
	// Preserve snapshots a managed worktree when anything in it could be lost, then
	// removes it (a missing one is just pruned). It returns the snapshot id, or "".
	Preserve func(ctx context.Context, run, node, reason string) (string, error)
	// Recreate makes the node's worktree again, clean at its baseline.
	Recreate func(ctx context.Context, run, node string) (string, error)
	// ResetInPlace, when set, does Preserve and Recreate in one, for a worktree that
	// is there and readable: snapshot, then made clean at its baseline where it is.
	// ok is false, with nothing done, for a worktree that must take the slow way.
	ResetInPlace func(ctx context.Context, run, node, reason string) (snap string, ok bool, err error)
	// Replay preserves a stage's work and makes a replay branch at its baseline.
	Replay func(ctx context.Context, run, stage string) (string, error)
	// CopyCheckout makes a temporary worktree holding what the user's checkout holds
	// now (read from it, never changing it), for the verify of a stage that ran
	// there; it returns the copy's path and how to remove it, or "" when there is no
	// user's checkout (a bare repository).
	CopyCheckout func(ctx context.Context, run string) (string, func(context.Context) error, error)
	// IgnoredOf, when set, names the ignored files a snapshot left out (those a reset
	// after it deletes: ignored files stay out of snapshots, which are pushed).
	IgnoredOf func(ctx context.Context, run, snap string) ([]recovery.IgnoredEntry, error)
}

// IgnoredDeleted is an ignored file (or wholly ignored directory) of a node's
// worktree that a resume's reset deleted without keeping its bytes.
type IgnoredDeleted struct {
	Node string `json:"node"`
	recovery.IgnoredEntry
}

// Verify-failure choices (docs/contract.md §6.6).
const (
	OnFailFail       = "fail"
	OnFailRedispatch = "redispatch"
	OnFailReplay     = "replay"
	OnFailStop       = "stop"
)

// HeadlessFailReason is the reason a headless resume gives a run whose verify failed.
const HeadlessFailReason = "resume-verify-failed-headless"

// Options steer one resume.
type Options struct {
	NoVerify      bool
	VerifyTimeout time.Duration
	OnVerifyFail  string // "" = ask on a terminal, fail headless
	Headless      bool
	// Ask puts a question to the person at the terminal; only called when !Headless.
	Ask func(question string, choices []string) (string, error)
	// Warn tells the person something on stderr.
	Warn func(format string, args ...any)
	Ops  Ops
	// Session is the caller's agent session: a live run it drives is its own (a
	// compacted session) and is resumed at once. TakeOver resumes a run another
	// session drives (recorded as driver_taken_over in the resumed event).
	Session  string
	TakeOver bool
	// Key is the repository's session key: the ledger keeps a session's keyed hash
	// (ledger.SessionKey), and Session is compared with it.
	Key ledger.SessionKey
	// Holder, when given, drives the run from the resume on: the reset takes its driver
	// lease (until now + TTL) instead of leaving the run without one, so the driver it
	// replaced cannot write again.
	Holder string
	TTL    time.Duration
	// Host is where an attempt's agent may still run (zero: this machine).
	Host Host
	// Spelling is how the caller's front end writes the steps and request fields
	// the plan and its next action name (docs/contract.md §4.6).
	Spelling fault.Spelling
	// Ignored is --include-ignored with its cap, for the snapshots the resets take:
	// ignored files stay out of them unless IncludeIgnored (of the options, only it
	// and IgnoredCap are read). The plan lists those a reset would delete.
	Ignored recovery.Options
}

// Owns reports whether the run's live driver is the caller: its session, or its
// holder (as every run write judges it, ledger.ClaimDriver).
func (o Options) Owns(r *ledger.Run, now time.Time) bool {
	return o.asker().Drives(r, now)
}

// spelling is the caller's front end's spelling; neutral words when it gave none.
func (o Options) spelling() fault.Spelling {
	if o.Spelling.Step == nil {
		return plainSpelling
	}
	return o.Spelling
}

// asker is who the resume's next action is for.
func (o Options) asker() Asker {
	return Asker{Holder: o.Holder, Session: o.Session, Key: o.Key, Spelling: o.Spelling}
}

// Result is what `resume` reports: the plan's fields, what was done, and what next.
type Result struct {
	*Plan
	Resumed            bool     `json:"resumed"`
	ResetJobs          []string `json:"reset_jobs"`
	Snapshots          []string `json:"snapshots"`
	RecreatedWorktrees []string `json:"recreated_worktrees"`
	// IgnoredDeleted are the ignored files the resets deleted, by node, name, count and
	// size (their snapshots leave them out).
	IgnoredDeleted []IgnoredDeleted     `json:"ignored_deleted"`
	Verify         *ledger.VerifyResult `json:"verify"`
	// VerifyTimeout is the time limit the verify ran under (a Go duration).
	VerifyTimeout   string `json:"verify_timeout,omitempty"`
	VerifySkipped   string `json:"verify_skipped,omitempty"`
	VerifyUntrusted bool   `json:"verify_untrusted,omitempty"`
	VerifyChoice    string `json:"verify_choice,omitempty"`
	Replay          string `json:"replay_branch,omitempty"`
	// JobVerifies are the owed job verifies this resume ran and recorded.
	JobVerifies []JobVerified `json:"job_verifies"`
	// UntrustedJobVerifies are the owed job verifies left owed, not run, because their
	// command is not trusted here (docs/contract.md §10): `git atlas trust RUN`, then resume.
	UntrustedJobVerifies []string `json:"untrusted_job_verifies,omitempty"`
	// SetAside are directories of this run's checkouts that git could not read (a
	// checkout killed before git wrote its HEAD, then written into), renamed aside
	// whole instead of snapshotted: this resume's and earlier ones, until a person
	// removes them (worktrees.SetAside).
	SetAside []string `json:"set_aside,omitempty"`
}

// Apply resumes run id (docs/contract.md §6 steps 4-7). It is idempotent and crash-safe: each step
// is its own ledger write, worktrees are snapshotted before they are removed, and a
// resume killed after its reset continues that reset instead of raising the epoch
// again (State.Resuming).
func Apply(ctx context.Context, repo *git.Repository, store *gitstate.Store, id string, opt Options) (*Result, error) {
	// One resume of a run at a time (docs/contract.md §6, "Concurrent resumes"): the others stop
	// here, before they read or change anything. The lock dies with its holder, so a
	// killed resume never blocks the next one.
	release, ok, err := repo.TryMutex("resume/" + id)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", id, err)
	}
	if !ok {
		return nil, fault.Conflict("run %s is being resumed by another process: nothing was done", id).
			WithHint("wait for it to finish; `%s` shows where it stands", fault.Do("resume", "run", id, "plan", true))
	}
	defer release()
	r, err := store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := r.Writable(); err != nil {
		return nil, err
	}
	if ledger.RunTerminal(r.State.Status) {
		return nil, fault.Refused("run %s is %s: there is nothing to resume", id, r.State.Status)
	}
	if r.HandsOff() && !opt.TakeOver {
		// Another engine's run, or dispatch-only: nothing is written, reset or run;
		// the plan says who owns it and how to resume it there (docs/contract.md §6).
		plan, err := makePlan(ctx, repo, r, store.Now(), false, opt.Host, opt.asker(), nil)
		if err != nil {
			return nil, err
		}
		return &Result{Plan: plan, ResetJobs: []string{}, Snapshots: []string{}, RecreatedWorktrees: []string{}, IgnoredDeleted: []IgnoredDeleted{}, JobVerifies: []JobVerified{}}, nil
	}
	if opt.TakeOver && opt.Holder == "" {
		return nil, fault.Named(fault.ErrUsage, "resume {take_over} needs {holder}: the replaced driver must not be able to write again")
	}
	if r.HandsOff() {
		if r, err = takeOverOwner(ctx, store, id, opt.Holder); err != nil {
			return nil, err
		}
	}
	now := store.Now()
	plan, err := makePlan(ctx, repo, r, now, !opt.NoVerify, opt.Host, opt.asker(), nil)
	if err != nil {
		return nil, err
	}
	res := &Result{Plan: plan, ResetJobs: []string{}, Snapshots: []string{}, RecreatedWorktrees: []string{}, IgnoredDeleted: []IgnoredDeleted{}, JobVerifies: []JobVerified{}}
	if plan.Live && !opt.Owns(r, now) && !opt.TakeOver {
		return res, nil // never reset a run another live driver is working on
	}
	if a := OthersLiveAttempt(r, now, opt.Host, opt.asker()); a != nil && !opt.TakeOver {
		// docs/contract.md §5.2: an attempt whose agent is live (its pid alive here, or a
		// heartbeat inside its idle budget) is never acted on without --take-over:
		// no verify, no reset, no re-dispatch. Nothing is written.
		if plan.NextAction.Action != NextWait {
			plan.NextAction = NextAction{Action: NextWait, Stage: r.CurrentStage().Name, Attempt: a.N, PID: a.PID}
			plan.NextAction.why("attempt %d of stage %s is live and is not yours: never a second agent on one attempt ({take_over} replaces it, recorded)", a.N, r.CurrentStage().Name)
			plan.NextAction.Spell(opt.Spelling)
		}
		return res, nil
	}
	if plan.Live {
		// The caller's own run (its session), or --take-over: resumed at once.
		plan.OwnSession = opt.Owns(r, now)
		plan.Live = false
	}
	if plan.Baseline.SHA == "" {
		return nil, fault.NotFound("run %s has no baseline commit (it was imported without one): there is nothing to reset its worktrees to", id).
			WithHint("finish it (`%s`), or start a new run from where it ended", fault.Do("finish", "run", id, "status", ledger.RunFailed))
	}
	if !plan.Baseline.Present {
		return nil, fault.NotFound("run %s: baseline %s is missing from the repository", id, plan.Baseline.SHA).
			WithHint("fetch it, or restore refs/atlas/pins/%s/baseline", id)
	}
	if !plan.ConfigDrift.Match {
		msg := fmt.Sprintf("config changed since run %s started (hash %s, now %s); the run keeps its frozen stage definitions", id, short(plan.ConfigDrift.Stored), short(plan.ConfigDrift.Current))
		if opt.Headless {
			opt.Warn("%s", msg)
		} else {
			ans, err := opt.Ask(msg+". Continue?", []string{"yes", "no"})
			if err != nil {
				return nil, err
			}
			if ans != "yes" {
				return nil, fault.Refused("resume of %s cancelled: config drift", id)
			}
		}
	}

	for _, w := range plan.Worktrees {
		if w.Busy {
			return nil, fault.Conflict("run %s: the worktree of node %s is %s: nothing was done", id, w.Node, w.Reason).
				WithHint("run the resume again once it is made")
		}
	}

	// A resume that already reset this run, with nothing else written since, is
	// continued: worktrees are checked again (an agent may have written after it), but
	// the epoch is not raised twice. A stopped run always starts afresh.
	mark := r.State.Resuming
	continuing := mark != nil && r.State.Status != ledger.RunStopped
	if err := resetWorktrees(ctx, id, plan, opt, res); err != nil {
		return nil, err
	}
	if !continuing {
		if r, err = reset(ctx, store, id, plan, opt, res); err != nil {
			return nil, err
		}
	} else {
		res.ResetJobs = append(res.ResetJobs, mark.ResetJobs...)
		if r, err = store.Load(ctx, id); err != nil {
			return nil, err
		}
	}
	res.Resumed = true
	if continuing && mark.Phase == ledger.ResumeDone {
		res.VerifySkipped = "already resumed: nothing happened since"
		if err := takeDriver(ctx, store, id, opt); err != nil {
			return nil, err
		}
		if err := settleOwed(ctx, store, id, opt, res); err != nil {
			return nil, err
		}
		return finish(ctx, repo, store, id, res, nil, opt)
	}

	verr := verifyFirst(ctx, repo, store, r, opt, res)
	if verr != nil && !errors.Is(verr, fault.ErrVerifyFailed) {
		return nil, verr
	}
	if err := settleOwed(ctx, store, id, opt, res); err != nil {
		return nil, err
	}
	return finish(ctx, repo, store, id, res, verr, opt)
}

// finish re-reads the run and reports the plan as the resume left it.
func finish(ctx context.Context, repo *git.Repository, store *gitstate.Store, id string, res *Result, verr error, opt Options) (*Result, error) {
	r, err := store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	now := store.Now()
	final, err := makePlan(ctx, repo, r, now, false, opt.Host, opt.asker(), nil)
	if err != nil {
		return nil, err
	}
	// What to do next from the run as the resume left it (a verify may have stopped
	// it), not as a plan would reset it; for the resumer, who drives it now.
	final.NextAction = NextFor(r, now, opt.Host, opt.asker())
	res.Plan = final
	if root, err := worktrees.Root(ctx, repo); err == nil {
		res.SetAside = worktrees.SetAside(root, id)
	}
	return res, verr
}

// takeDriver makes opt.Holder the run's driver when an earlier resume already reset
// the run (docs/contract.md §6: `resume RUN --holder X` leaves X driving), unless X already
// drives it. Another live driver is a conflict (Apply answered
// wait before it got here; this is one that came meanwhile).
func takeDriver(ctx context.Context, store *gitstate.Store, id string, opt Options) error {
	if opt.Holder == "" {
		return nil
	}
	_, err := store.Update(ctx, id, func(r *ledger.Run) (*gitstate.Change, error) {
		now := store.Now()
		if d := r.State.Driver; r.Live(now) && d.Holder == opt.Holder && (opt.Session == "" || opt.Key.Matches(d.Session, opt.Session)) {
			return nil, nil // X drives it already
		}
		if r.Live(now) && !opt.Owns(r, now) && !opt.TakeOver {
			return nil, fault.Conflict("run %s gained a live driver (%s) while resuming", id, r.State.Driver.Holder).WithQuoted(r.State.Driver.Holder)
		}
		ttl := opt.TTL
		if ttl <= 0 {
			ttl = ledger.DefaultDriverTTL
		}
		r.State.Driver = &ledger.Lease{Holder: opt.Holder, Session: opt.Key.Seal(opt.Session), ExpiresAt: ledger.Stamp(now.Add(ttl))}
		// A resumed event of its own, at the same epoch: it keeps the earlier reset's
		// mark, so resuming again is still nothing new.
		data := ledger.ResumedData{FromEpoch: r.State.Epoch, Epoch: r.State.Epoch, ResetJobs: []string{},
			Snapshots: []string{}, RecreatedWorktrees: []string{}, Driver: r.State.Driver}
		return &gitstate.Change{Event: ledger.ResumedEvent(ledger.About{Holder: opt.Holder}, data)}, nil
	})
	return err
}

// resetWorktrees preserves and recreates every untrusted worktree. Each removal comes
// after a verified snapshot (recovery), and the snapshot ids are content-derived, so a
// resume killed here and run again makes no duplicate.
func resetWorktrees(ctx context.Context, id string, plan *Plan, opt Options, res *Result) error {
	for _, w := range plan.Worktrees {
		if w.Action == ActionKeep {
			continue
		}
		if err := resetOne(ctx, id, w.Node, "resume: "+w.Reason, opt, res); err != nil {
			return err
		}
	}
	return nil
}

// resetOne preserves one worktree (snapshot when anything could be lost, then
// removal) and recreates it clean, noting both in res.
func resetOne(ctx context.Context, id, node, reason string, opt Options, res *Result) error {
	if opt.Ops.Preserve == nil || opt.Ops.Recreate == nil {
		return fmt.Errorf("resume %s: worktree %s needs a reset but no worktree operations are wired", id, node)
	}
	if opt.Ops.ResetInPlace != nil {
		snap, ok, err := opt.Ops.ResetInPlace(ctx, id, node, reason)
		if err != nil {
			return fmt.Errorf("reset worktree %s: %w", node, err)
		}
		if ok {
			if snap != "" {
				res.Snapshots = append(res.Snapshots, snap)
			}
			res.RecreatedWorktrees = append(res.RecreatedWorktrees, node)
			return noteIgnored(ctx, id, node, snap, opt, res)
		}
	}
	snap, err := opt.Ops.Preserve(ctx, id, node, reason)
	if err != nil {
		return fmt.Errorf("preserve worktree %s: %w", node, err)
	}
	if snap != "" {
		res.Snapshots = append(res.Snapshots, snap)
	}
	if err := noteIgnored(ctx, id, node, snap, opt, res); err != nil {
		return err
	}
	if _, err := opt.Ops.Recreate(ctx, id, node); err != nil {
		return fmt.Errorf("recreate worktree %s: %w", node, err)
	}
	res.RecreatedWorktrees = append(res.RecreatedWorktrees, node)
	return nil
}

// noteIgnored adds to res the ignored files of node's worktree that snap left out:
// the reset that followed it deleted them.
func noteIgnored(ctx context.Context, id, node, snap string, opt Options, res *Result) error {
	if snap == "" || opt.Ops.IgnoredOf == nil {
		return nil
	}
	list, err := opt.Ops.IgnoredOf(ctx, id, snap)
	if err != nil {
		return fmt.Errorf("worktree %s: read snapshot %s: %w", node, snap, err)
	}
	for _, e := range list {
		res.IgnoredDeleted = append(res.IgnoredDeleted, IgnoredDeleted{Node: node, IgnoredEntry: e})
	}
	return nil
}

// reset writes the one `resumed` event: epoch + 1, RUNNING jobs back to PENDING (no
// attempt, no gas refund), the driver lease dropped, a stopped run running again.
func reset(ctx context.Context, store *gitstate.Store, id string, plan *Plan, opt Options, res *Result) (*ledger.Run, error) {
	willVerify := verifyPending(plan, opt)
	return store.Update(ctx, id, func(r *ledger.Run) (*gitstate.Change, error) {
		now := store.Now()
		var taken *ledger.Lease
		if r.Driven(now) && !opt.Owns(r, now) {
			if !opt.TakeOver {
				return nil, fault.Conflict("run %s gained a live driver (%s) while resuming", id, r.State.Driver.Holder).WithQuoted(r.State.Driver.Holder)
			}
			d := *r.State.Driver
			d.Extra = nil
			taken = &d
		}
		if ledger.RunTerminal(r.State.Status) {
			return nil, fault.Conflict("run %s was finished (%s) while resuming", id, r.State.Status)
		}
		from := r.State.Epoch
		resetJobs := ledger.ResumeReset(&r.State)
		r.State.Epoch++ // in the same event: every old lease token is now stale
		own := opt.Owns(r, now)
		if !own || opt.Holder != "" {
			r.State.Driver = nil // a resume by the driving session itself, unnamed, keeps its lease
		}
		if opt.Holder != "" {
			ttl := opt.TTL
			if ttl <= 0 {
				ttl = ledger.DefaultDriverTTL
			}
			r.State.Driver = &ledger.Lease{Holder: opt.Holder, Session: opt.Key.Seal(opt.Session), ExpiresAt: ledger.Stamp(now.Add(ttl))}
		}
		if r.State.Status == ledger.RunStopped {
			r.State.Status, r.State.Reason = ledger.RunRunning, ""
		}
		phase := ledger.ResumeDone
		if willVerify {
			phase = ledger.ResumeVerify
		}
		r.State.Resuming = &ledger.ResumeMark{Phase: phase, Epoch: r.State.Epoch, ResetJobs: resetJobs}
		res.ResetJobs = append(res.ResetJobs[:0], resetJobs...)
		data := ledger.ResumedData{FromEpoch: from, Epoch: r.State.Epoch, ResetJobs: nonNil(resetJobs),
			Snapshots: res.Snapshots, RecreatedWorktrees: res.RecreatedWorktrees, DriverTakenOver: taken}
		return &gitstate.Change{Event: ledger.ResumedEvent(ledger.About{}, data)}, nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// verifyPending reports whether verify-first will run a command for this plan.
func verifyPending(plan *Plan, opt Options) bool {
	st := plan.InterruptedStage
	return !opt.NoVerify && st != nil && inFlight(st.Status) && st.HasVerify && st.VerifySafe
}

// inFlight is a stage whose work was under way when the run was interrupted.
func inFlight(status string) bool {
	return status == ledger.StageDispatched || status == ledger.StageVerifying
}
