package ledger

import "github.com/git-atlas/git-atlas/internal/fault"

// Job verify (docs/contract.md §5.3): an ok receipt of a job with a verify command does not make
// it DONE at once. The receipt's write marks the verify owed (the job stays RUNNING,
// its dependants wait); a second write records the verify's result. A verify that
// never finished (the process died) is found by OwedVerifies and run again by resume.

// Reasons a DONE job was not verified (Job.Unverified).
const (
	UnverifiedNoCommand  = "no verify command"
	UnverifiedNoWorktree = "no worktree: the verify was not run (never in your checkout)"
)

// receiptOK applies an ok receipt: DONE at once for a job with no verify command or no
// worktree to run it in (recorded as unverified), else the verify is owed.
func receiptOK(s *State, j *Job) {
	switch {
	case j.Verify == "":
		endLease(j, JobDone)
		j.Unverified = UnverifiedNoCommand
	case s.Worktree(j.ID) == nil:
		endLease(j, JobDone)
		j.Unverified = UnverifiedNoWorktree
	default:
		j.VerifyOwed = true
	}
}

// OwedVerifies lists the jobs whose ok receipt arrived and whose verify has not been
// recorded, in job order.
func OwedVerifies(s *State) []string {
	var ids []string
	for _, j := range s.Jobs {
		if j.State == JobRunning && j.VerifyOwed {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// SettleVerify records the owed verify of job id under lease token: pass → DONE
// (verified); fail or timeout → the timeout path (attempts + 1, PENDING under the
// limit, else FAILED with reason "verify", its PENDING dependants failing with it),
// and the children its receipt added, which never ran, are dropped.
// A job whose verify is no longer owed under that lease (settled by another process,
// or the lease ended) is a conflict and nothing changes: a verify is recorded once.
func SettleVerify(h *Header, s *State, id, token string, vr *VerifyResult) (Outcome, error) {
	j := s.Job(id)
	if j == nil {
		return Outcome{}, fault.NotFound("run %s has no job %q", s.RunID, id)
	}
	if j.State != JobRunning || !j.VerifyOwed || j.Lease != token {
		return Outcome{}, fault.Conflict("job %s has no verify owed under lease %s (it is %s): its result was already recorded", id, token, j.State)
	}
	o := Outcome{ID: j.ID, Lease: j.Lease, From: j.State}
	j.VerifyOwed, j.VerifyResult = false, vr
	if vr.Passed {
		endLease(j, JobDone)
		j.Unverified = ""
	} else {
		timeout(h, j)
		releasePorts(s, id)
		if j.State == JobFailed {
			j.Reason = "verify"
		}
	}
	o.To, o.Attempts = j.State, j.Attempts
	if j.State == JobFailed {
		o.Cascaded = failDependents(s)
	}
	o.Dropped = dropUnstarted(s, id) // last: it moves the jobs j points into
	return o, nil
}

// JobVerified reports a DONE job whose verify passed.
func JobVerified(j *Job) bool {
	return j.State == JobDone && j.VerifyResult != nil && j.VerifyResult.Passed
}
