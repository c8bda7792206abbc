package resume

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// tailBytes is how much of a verify command's output the ledger keeps.
const tailBytes = 4096

// DefaultVerifyTimeout bounds a verify command when --verify-timeout is not given.
const DefaultVerifyTimeout = 10 * time.Minute

// verifyFirst runs the interrupted stage's safe verify command and acts on it (docs/contract.md
// §6.6). With nothing to verify, it records why in the result and leaves the stage.
func verifyFirst(ctx context.Context, repo *git.Repository, store *gitstate.Store, r *ledger.Run, opt Options, res *Result) error {
	st := res.InterruptedStage
	switch {
	case st == nil:
		return nil
	case !inFlight(st.Status):
		res.VerifySkipped = "stage " + st.Name + " is " + st.Status + ": no work in flight"
		return nil
	case !st.HasVerify:
		res.VerifySkipped = "stage " + st.Name + " has no verify command"
		return nil
	case !st.VerifySafe:
		res.VerifySkipped = fault.Textf("verify of stage %s is not marked safe ({verify_safe}): not run unattended", st.Name).Spell(opt.spelling())
		return nil
	case opt.NoVerify:
		res.VerifySkipped = fault.Textf("{no_verify}").Spell(opt.spelling())
		return clearMark(ctx, store, r.Header.RunID)
	}
	approved, err := approve(ctx, repo, r.Header.RunID, st, opt)
	if err != nil {
		return err
	}
	if approved == nil {
		// The resume's mark stays at its verify phase: a resume after `git atlas
		// trust` runs the verify then.
		res.VerifyUntrusted = true
		res.VerifySkipped = fault.Textf("verify of stage %s (%q) came with the run from elsewhere and is not trusted here: not run; read it, then `%s`", st.Name, st.VerifyCommand, fault.Do("trust", "run", r.Header.RunID)).Spell(opt.spelling())
		return nil
	}
	var dir string
	switch verifyIn(r, st.Name) {
	case VerifyInWorktree:
		wt, err := worktrees.Own(ctx, repo, r.Header.RunID, *r.State.Worktree(st.Name))
		if err != nil {
			if !worktrees.Foreign(err) {
				return err
			}
			res.VerifySkipped = "stage " + st.Name + "'s worktree is not one git-atlas manages: not verified there (" + err.Error() + ")"
			return clearMark(ctx, store, r.Header.RunID)
		}
		dir = wt.Path
	case VerifyInNone:
		res.VerifySkipped = "stage " + st.Name + "'s worktree is missing: its work is not there to verify"
		return clearMark(ctx, store, r.Header.RunID)
	default:
		// The stage ran in the user's checkout: verify a copy, never the checkout.
		if opt.Ops.CopyCheckout == nil {
			return errors.New("verify of a stage without a worktree needs a checkout copy, which is not wired")
		}
		path, remove, err := opt.Ops.CopyCheckout(ctx, r.Header.RunID)
		if err != nil {
			return fmt.Errorf("copy your checkout for the verify of stage %s: %w", st.Name, err)
		}
		if path == "" {
			return fault.Refused("stage %s has no worktree and the repository is bare: cannot verify", st.Name)
		}
		defer func() {
			if err := remove(context.WithoutCancel(ctx)); err != nil && opt.Warn != nil {
				opt.Warn("could not remove the verify copy %s: %v", path, err)
			}
		}()
		dir = path
	}
	if hold, err := scopeHold(ctx, repo, r, st.Name, store.Writer.Holder, opt.spelling()); err != nil || hold != "" {
		if err != nil {
			return err
		}
		res.VerifySkipped = hold
		return clearMark(ctx, store, r.Header.RunID)
	}
	timeout := opt.VerifyTimeout
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	vr := runCommand(ctx, *approved, dir, NodeEnv(r, dir), timeout, store.Now())
	res.Verify, res.VerifyTimeout = vr, timeout.String()
	if vr.Passed {
		return record(ctx, store, r.Header.RunID, st.Name, vr, "advance", func(run *ledger.Run, at string) error {
			if err := ledger.ApplyStageTransition(run, st.Name, ledger.StagePassed, "resume: verify passed", gitid.OID{}, at, ""); err != nil {
				return err
			}
			if _, s, ok := run.Stage(st.Name); ok {
				verified := true
				s.Verified, s.Unverified = &verified, ""
			}
			next := ledger.StageCompleted
			if st.HasGate {
				next = ledger.StageGated
			}
			return ledger.ApplyStageTransition(run, st.Name, next, "resume: verify passed", gitid.OID{}, at, "")
		})
	}
	choice := opt.OnVerifyFail
	if choice == "" {
		if opt.Headless {
			choice = OnFailFail
		} else {
			ans, err := opt.Ask("verify of stage "+st.Name+" "+Outcome(vr, timeout)+". What now?", []string{OnFailRedispatch, OnFailReplay, OnFailStop})
			if err != nil {
				return err
			}
			choice = ans
		}
	}
	res.VerifyChoice = choice
	id := r.Header.RunID
	switch choice {
	case OnFailRedispatch:
		// The new attempt starts clean: the failed work is snapshotted, then its
		// worktree recreated at its baseline.
		if err := resetStageWorktree(ctx, r, st.Name, opt, res); err != nil {
			return err
		}
		return record(ctx, store, id, st.Name, vr, choice, func(run *ledger.Run, at string) error {
			if err := failStage(run, st.Name, at); err != nil {
				return err
			}
			if err := ledger.ApplyStageTransition(run, st.Name, ledger.StageDispatched, "resume: redispatch after failed verify", dispatchBase(run, st.Name), at, store.Nonce()); err != nil {
				return err
			}
			// The new attempt is the resumer's (docs/contract.md §5.2: its own session goes on with it).
			_, s, _ := run.Stage(st.Name)
			a := &s.Attempts[len(s.Attempts)-1]
			a.Holder, a.Session = opt.Holder, opt.Session
			return nil
		})
	case OnFailReplay:
		if err := record(ctx, store, id, st.Name, vr, choice, func(run *ledger.Run, at string) error {
			return failStage(run, st.Name, at)
		}); err != nil {
			return err
		}
		if opt.Ops.Replay == nil {
			return errors.New("replay is not wired")
		}
		branch, err := opt.Ops.Replay(ctx, id, st.Name)
		res.Replay = branch
		return err
	case OnFailStop, OnFailFail:
		status, reason := ledger.RunStopped, "resume-verify-failed"
		if choice == OnFailFail {
			status = ledger.RunFailed
			if opt.Headless && opt.OnVerifyFail == "" {
				reason = HeadlessFailReason
			}
		}
		if err := record(ctx, store, id, st.Name, vr, choice, func(run *ledger.Run, at string) error {
			if err := failStage(run, st.Name, at); err != nil {
				return err
			}
			run.State.Status, run.State.Reason = status, reason
			return nil
		}); err != nil {
			return err
		}
		return &fault.Error{Kind: fault.ErrVerifyFailed, Msg: "verify of stage " + st.Name + " " + Outcome(vr, timeout) + ": run " + id + " " + status + " (" + reason + ")"}
	default:
		return fault.Named(fault.ErrUsage, "unknown {on_verify_fail} %q (valid: fail, redispatch, replay, stop)", choice)
	}
}

// approve returns the stage's verify cleared to run: trusted here (this repository
// wrote it, or a person ran `git atlas trust`), or, on a terminal, approved by the
// person now. Headless (also with --yes) an untrusted command is never run: nil.
func approve(ctx context.Context, repo *git.Repository, run string, st *StageInfo, opt Options) (*trust.Approved, error) {
	a, ok, err := trust.Gate(ctx, repo, run, st.VerifyCommand)
	if err != nil {
		return nil, err
	}
	if ok {
		return &a, nil
	}
	if opt.Headless || opt.Ask == nil {
		return nil, nil
	}
	ans, err := opt.Ask(fmt.Sprintf("verify of stage %s runs %s, which came with run %s and was not written in this repository. Run it?", st.Name, text.ShowCommand(st.VerifyCommand), run), []string{"no", "once", "trust"})
	if err != nil {
		return nil, err
	}
	switch ans {
	case "once":
		a := trust.Once(st.VerifyCommand)
		return &a, nil
	case "trust":
		if err := trust.Record(ctx, repo, run, st.VerifyCommand); err != nil {
			return nil, err
		}
		a := trust.Once(st.VerifyCommand)
		return &a, nil
	}
	return nil, nil
}

// resetStageWorktree preserves and recreates the worktree a stage ran in, if it has one.
func resetStageWorktree(ctx context.Context, r *ledger.Run, stage string, opt Options, res *Result) error {
	for _, w := range r.State.Worktrees {
		if w.Node == stage || w.Stage == stage {
			if err := resetOne(ctx, r.Header.RunID, w.Node, "resume: redispatch after failed verify", opt, res); err != nil {
				return err
			}
		}
	}
	return nil
}

func failStage(run *ledger.Run, stage, at string) error {
	_, st, ok := run.Stage(stage)
	if !ok || st.Status == ledger.StageFailed {
		return nil
	}
	if st.Status == ledger.StageDispatched || st.Status == ledger.StageVerifying {
		return ledger.ApplyStageTransition(run, stage, ledger.StageFailed, "resume: verify failed", gitid.OID{}, at, "")
	}
	return nil
}

func dispatchBase(run *ledger.Run, stage string) gitid.OID {
	if wt := run.State.Worktree(stage); wt != nil && !wt.Head.IsZero() {
		return wt.Head
	}
	return run.Header.Baseline
}

// record writes the verify result and its consequence in one event, and ends the
// resume in progress.
func record(ctx context.Context, store *gitstate.Store, id, stage string, vr *ledger.VerifyResult, action string, apply func(*ledger.Run, string) error) error {
	_, err := store.Update(ctx, id, func(run *ledger.Run) (*gitstate.Change, error) {
		at := ledger.Stamp(store.Now())
		_, st, ok := run.Stage(stage)
		if !ok {
			return nil, fault.NotFound("run %s has no stage %q", id, stage)
		}
		st.Verify = vr
		if err := apply(run, at); err != nil {
			return nil, err
		}
		run.State.Resuming = doneMark(run.State.Resuming)
		data := ledger.StageResumedData{Action: action, StageVerified: &ledger.StageVerified{
			VerifyResult: map[bool]string{true: "pass", false: "fail"}[vr.Passed], ExitCode: vr.ExitCode, TimedOut: vr.TimedOut, Tail: vr.Tail}}
		return &gitstate.Change{Event: ledger.StageResumedEvent(ledger.About{Stage: stage}, data)}, nil
	})
	return err
}

func clearMark(ctx context.Context, store *gitstate.Store, id string) error {
	_, err := store.Update(ctx, id, func(run *ledger.Run) (*gitstate.Change, error) {
		if run.State.Resuming == nil || run.State.Resuming.Phase == ledger.ResumeDone {
			return nil, nil
		}
		run.State.Resuming = doneMark(run.State.Resuming)
		return &gitstate.Change{Event: ledger.StageResumedEvent(ledger.About{}, ledger.StageResumedData{Action: "no-verify"})}, nil
	})
	return err
}

// Outcome says how a verify ended, in words: "passed", "failed (exit N)", or
// "timed out after D" (a killed command's exit code says nothing about it).
func Outcome(vr *ledger.VerifyResult, timeout time.Duration) string {
	switch {
	case vr.TimedOut && timeout > 0:
		return "timed out after " + timeout.String()
	case vr.TimedOut:
		return "timed out"
	case vr.Passed:
		return "passed"
	}
	return "failed (exit " + itoa(vr.ExitCode) + ")"
}

// RunVerify runs a verify command with sh in dir, killing its whole process group at
// the timeout, and keeps the exit code and the output's tail. A timed-out command is
// recorded as TimedOut, with exit code 124 as timeout(1) reports it. It runs only a
// command cleared by package trust: a command carried by a run from elsewhere never
// runs before a person trusts it here (docs/contract.md §10). at is when it starts, by the
// caller's clock (the result's At).
func RunVerify(ctx context.Context, approved trust.Approved, dir string, timeout time.Duration, at time.Time) *ledger.VerifyResult {
	return runCommand(ctx, approved, dir, nil, timeout, at)
}

// runCommand is RunVerify with env added to the command's environment.
func runCommand(ctx context.Context, approved trust.Approved, dir string, env []string, timeout time.Duration, at time.Time) *ledger.VerifyResult {
	command := approved.Command()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out tailBuffer
	// At the deadline the whole group goes, not only sh; a descendant that left the
	// group and keeps the output pipes open is waited for no longer than WaitDelay.
	sh := git.Shell{Dir: dir, Script: command, Env: env, Stdout: &out, Stderr: &out, WaitDelay: 5 * time.Second}
	vr := &ledger.VerifyResult{Command: command, At: ledger.Stamp(at)}
	res := sh.Run(tctx)
	if !res.Started {
		vr.ExitCode, vr.Tail = 127, res.Err.Error()
		return vr
	}
	vr.TimedOut = errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil && res.Err != nil
	if res.Err != nil {
		vr.ExitCode = 1
		if res.ExitCode >= 0 {
			vr.ExitCode = res.ExitCode
		}
		if vr.TimedOut {
			vr.ExitCode = 124
		}
	}
	vr.Passed = vr.ExitCode == 0 && !vr.TimedOut
	vr.Tail = out.String()
	return vr
}

// tailBuffer keeps the last tailBytes written to it.
type tailBuffer struct{ b bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if t.b.Len() > 2*tailBytes {
		keep := append([]byte(nil), t.b.Bytes()[t.b.Len()-tailBytes:]...)
		t.b.Reset()
		t.b.Write(keep)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b.Bytes()
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }

// doneMark ends the verify phase of a resume mark.
func doneMark(m *ledger.ResumeMark) *ledger.ResumeMark {
	if m == nil {
		return &ledger.ResumeMark{Phase: ledger.ResumeDone}
	}
	c := *m
	c.Phase = ledger.ResumeDone
	return &c
}

// Why a stage passed unverified (StageState.Unverified, docs/contract.md §5.2).
const (
	UnverifiedNoVerify  = "no_verify" // the stage has no verify command
	UnverifiedNotSafe   = "not_safe"  // its verify is not marked verify_safe: never run unattended
	UnverifiedUntrusted = "untrusted" // its verify came from elsewhere and is not trusted here
)

// VerifyForPass runs the verify of a stage reported passed (docs/contract.md §5.2: "passed" is
// git-atlas's word, not the agent's), where resume would: the stage's worktree, else a
// temporary copy of the user's checkout (ops.CopyCheckout), with timeout. It returns
// the result, or nil and why the stage passes unverified (UnverifiedNoVerify,
// UnverifiedNotSafe, UnverifiedUntrusted). A stage whose worktree is missing has no
// work to verify: refused (exit 4).
func VerifyForPass(ctx context.Context, repo *git.Repository, r *ledger.Run, stage string, timeout time.Duration, ops Ops, now time.Time) (*ledger.VerifyResult, string, error) {
	def, _, ok := r.Stage(stage)
	switch {
	case !ok:
		return nil, "", fault.NotFound("run %s has no stage %q", r.Header.RunID, stage)
	case def.Verify == "":
		return nil, UnverifiedNoVerify, nil
	case !def.VerifySafe:
		return nil, UnverifiedNotSafe, nil
	}
	approved, ok, err := trust.Gate(ctx, repo, r.Header.RunID, def.Verify)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, UnverifiedUntrusted, nil
	}
	var dir string
	switch verifyIn(r, stage) {
	case VerifyInWorktree:
		dir = r.State.Worktree(stage).Path
	case VerifyInNone:
		return nil, "", fault.NotFound("stage %s's worktree is missing: its work is not there to verify; nothing was written", stage).
			WithHint("recreate it (`%s`), or report the stage failed", fault.Do("resume", "run", r.Header.RunID))
	default:
		if ops.CopyCheckout == nil {
			return nil, "", errors.New("verify of a stage without a worktree needs a checkout copy, which is not wired")
		}
		path, remove, err := ops.CopyCheckout(ctx, r.Header.RunID)
		if err != nil {
			return nil, "", fmt.Errorf("copy your checkout for the verify of stage %s: %w", stage, err)
		}
		if path == "" {
			return nil, "", fault.Refused("stage %s has no worktree and the repository is bare: cannot verify", stage)
		}
		defer func() { _ = remove(context.WithoutCancel(ctx)) }()
		dir = path
	}
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	return runCommand(ctx, approved, dir, NodeEnv(r, dir), timeout, now), "", nil
}
