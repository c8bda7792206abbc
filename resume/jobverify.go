package resume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// ErrUntrusted is the cause of the refusal NodeVerify returns for a command that came
// with the run from elsewhere (a pull, a shared remote, an import) and that nobody
// trusted here (docs/contract.md §10): it is never run, and nothing is recorded.
var ErrUntrusted = errors.New("not trusted here")

// NodeVerify runs a graph run's verify command (a job's, or the run's on the union)
// in dir, a managed worktree, bounded by timeout. Every job and union verify goes
// through here: `job done`, resume's owed verifies and `union --verify`; it runs only
// a command this repository wrote or a person trusted here (package trust), and
// refuses any other with ErrUntrusted as the cause, having run nothing. The store is
// the run's: its repository holds the trust records, its clock dates the result.
func NodeVerify(ctx context.Context, store *gitstate.Store, r *ledger.Run, command, dir string, timeout time.Duration) (*ledger.VerifyResult, error) {
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	approved, ok, err := trust.Gate(ctx, store.Repo, r.Header.RunID, command)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The command is the other clone's text: an agent reads that it was withheld.
		quoted := fmt.Sprintf("the verify %q", command)
		e := fault.New(fault.ErrRefused, "%s came with run %s from elsewhere and was not run", quoted, r.Header.RunID)
		e.Err = ErrUntrusted
		return nil, e.WithHint("read it, then `%s`", fault.Do("trust", "run", r.Header.RunID)).
			WithWithheld(fault.Withheld{Text: quoted, Stand: "its verify command (withheld: not trusted here)"})
	}
	return runCommand(ctx, approved, dir, NodeEnv(r, dir), timeout, store.Now()), nil
}

// JobVerified is one owed job verify that was run and recorded.
type JobVerified struct {
	Job      string               `json:"job"`
	To       string               `json:"to"`
	Attempts int                  `json:"attempts"`
	Cascaded []string             `json:"cascaded"`
	Verify   *ledger.VerifyResult `json:"verify"`
}

// SettleJobVerify runs the owed verify of job id (its ok receipt was recorded with
// the verify owed) in the job's worktree and records the result in a second ledger
// write (`job_verified`): pass → DONE, fail or timeout → attempts + 1, PENDING or
// FAILED. If another process recorded it first, the conflict is returned and nothing
// changes.
func SettleJobVerify(ctx context.Context, store *gitstate.Store, runID, id string, timeout time.Duration) (*ledger.Run, JobVerified, error) {
	r, err := store.Load(ctx, runID)
	if err != nil {
		return nil, JobVerified{}, err
	}
	j := r.State.Job(id)
	if j == nil {
		return nil, JobVerified{}, fault.NotFound("run %s has no job %q", runID, id)
	}
	if !j.VerifyOwed {
		return nil, JobVerified{}, fault.Conflict("job %s of run %s has no verify owed", id, runID)
	}
	lease := j.Lease
	var vr *ledger.VerifyResult
	if wt := r.State.Worktree(id); wt != nil {
		// A verify runs only in a worktree git-atlas manages.
		m, err := worktrees.Own(ctx, store.Repo, runID, *wt)
		if err != nil {
			return nil, JobVerified{}, err
		}
		if vr, err = NodeVerify(ctx, store, r, j.Verify, m.Path, timeout); err != nil {
			return nil, JobVerified{}, err // untrusted: the verify stays owed, nothing written
		}
	} else {
		vr = &ledger.VerifyResult{Command: j.Verify, ExitCode: 127, Tail: "the job's worktree was removed before its verify ran", At: ledger.Stamp(store.Now())}
	}
	var o ledger.Outcome
	r, err = store.Update(ctx, runID, func(run *ledger.Run) (*gitstate.Change, error) {
		var err error
		if o, err = ledger.SettleVerify(&run.Header, &run.State, id, lease, vr); err != nil {
			return nil, err
		}
		data := ledger.JobVerifiedData{Lease: lease, Passed: vr.Passed, ExitCode: vr.ExitCode, TimedOut: vr.TimedOut,
			Tail: vr.Tail, To: o.To, Attempts: o.Attempts, Cascaded: o.Cascaded}
		return &gitstate.Change{Event: ledger.JobVerifiedEvent(ledger.About{Job: id}, data)}, nil
	})
	if err != nil {
		return nil, JobVerified{}, err
	}
	return r, JobVerified{Job: id, To: o.To, Attempts: o.Attempts, Cascaded: nonNil(o.Cascaded), Verify: vr}, nil
}

// settleOwed runs every owed job verify of the run (a receipt whose verify never
// finished), unless --no-verify.
func settleOwed(ctx context.Context, store *gitstate.Store, id string, opt Options, res *Result) error {
	if opt.NoVerify {
		return nil
	}
	r, err := store.Load(ctx, id)
	if err != nil {
		return err
	}
	for _, job := range ledger.OwedVerifies(&r.State) {
		_, v, err := SettleJobVerify(ctx, store, id, job, opt.VerifyTimeout)
		if errors.Is(err, ErrUntrusted) {
			res.UntrustedJobVerifies = append(res.UntrustedJobVerifies, job)
			continue
		}
		if worktrees.Foreign(err) { // never run in a worktree git-atlas does not manage
			if opt.Warn != nil {
				opt.Warn("%v: the verify of job %s is left owed", err, job)
			}
			continue
		}
		if err != nil {
			return err
		}
		res.JobVerifies = append(res.JobVerifies, v)
	}
	return nil
}
