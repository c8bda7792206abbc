package ledger

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// This file is the job machine of graph runs (docs/contract.md §5.3): pure functions over a
// Header and a State, no I/O. Callers run them inside gitstate.Store.Update, which hands them
// a fresh state on every compare-and-swap try; that retry loop, not a lock, is what
// keeps concurrent claims correct. Every function either fully applies its change or
// returns an error with the state untouched.

// Receipt statuses a worker reports (docs/contract.md §4.2).
const (
	ReceiptOK      = "ok"
	ReceiptTimeout = "timeout"
	ReceiptFailed  = "failed"
)

// Reasons a claim grants nothing (docs/contract.md §4.7).
const (
	// ReasonWaiting: nothing is ready now, but running jobs may change that.
	ReasonWaiting = "waiting"
	// ReasonHalted: nothing is ready and nothing runs; no claim will ever succeed.
	ReasonHalted = "halted"
	// ReasonGasExhausted: a job would be ready but the run has no gas left.
	ReasonGasExhausted = "gas_exhausted"
	// ReasonFinished: the graph has jobs and every one ended (DONE or FAILED), or the
	// run itself is finished: nothing is left to claim, and nothing is stuck.
	ReasonFinished = "finished"
)

// DefaultMaxAttempts is a graph run's per-job attempt limit when the header names none.
const DefaultMaxAttempts = 2

// overlapShown bounds how many overlapping paths a refused job add names.
const overlapShown = 10

// JobSpec is a job to add to a graph run.
type JobSpec struct {
	ID     string
	Needs  []string
	Scope  []string // canonical globs (CanonicalScope)
	Verify string
	Kind   string
	// Criteria are the run's success criteria this job meets (CheckCriteria).
	Criteria []string
}

// Grant is what a claim gave: a job and its lease, or nothing and the reason.
type Grant struct {
	Job       *Job // nil when nothing was granted; points into the state
	Lease     string
	Attempt   int
	Epoch     int
	ExpiresAt string
	Reason    string // ReasonWaiting, ReasonHalted, ReasonGasExhausted or ReasonFinished when Job is nil
}

// Outcome is what a receipt or a reap did to one job.
type Outcome struct {
	ID       string
	Lease    string // the lease that ended
	From     string
	To       string
	Attempts int
	// Cascaded are the PENDING jobs that failed with this one because they need it.
	Cascaded []string
	// Dropped are the children this job's ok receipt added (expansion) that never
	// ran: the job did not end DONE (its verify failed, its lease ran out), so the
	// expansion did not hold. A retry's next receipt may add them again.
	Dropped []string
}

// Frontier is the claimable edge of a graph run.
type Frontier struct {
	Ready        []string // claimable now, in the order jobs were added
	Running      []string
	GasLimit     int
	GasSpent     int
	GasRemaining int
	// Reason is "" when a job is ready, else why nothing can be granted.
	Reason string
}

// MaxAttempts is the run's per-job attempt limit.
func MaxAttempts(h *Header) int {
	if h.MaxAttempts > 0 {
		return h.MaxAttempts
	}
	return DefaultMaxAttempts
}

// GasLimit is the run's total claim budget: the header's (--gas), else the one fixed
// at the first claim, else (nothing claimed yet) jobs × max_attempts + jobs, which
// leaves every job all its attempts plus one claim lost to a resume.
func GasLimit(h *Header, s *State) int {
	if h.Gas > 0 {
		return h.Gas
	}
	if s.GasFixed > 0 {
		return s.GasFixed
	}
	n := len(s.Jobs)
	return n*MaxAttempts(h) + n
}

// fixGas pins the default gas limit at the first claim that grants a job, so that
// jobs added later (by `job add` or an expansion) share that budget instead of
// growing it: a run that keeps adding jobs stays bounded.
func fixGas(h *Header, s *State) {
	if h.Gas == 0 && s.GasFixed == 0 {
		s.GasFixed = GasLimit(h, s)
	}
}

// GasRemaining is the gas left to charge; never below zero.
func GasRemaining(h *Header, s *State) int {
	if left := GasLimit(h, s) - s.GasSpent; left > 0 {
		return left
	}
	return 0
}

// LeaseToken is the fencing token of a claim: the job, its attempt count when it was
// claimed, the run's epoch, and a random nonce. Within one ledger, job, attempt and
// epoch already tell two claims apart: a job leaves RUNNING only through a receipt or
// reap (attempts or state change) or a resume (epoch + 1). The nonce tells apart two
// claims made from the same state in two clones before they synced (both would be
// x#0@0): once one side's ledger is kept, the other side's worker holds a token that
// matches nothing. Tokens without a nonce (older ledgers) still parse.
func LeaseToken(job string, attempt, epoch int, nonce string) string {
	tok := job + "#" + strconv.Itoa(attempt) + "@" + strconv.Itoa(epoch)
	if nonce != "" {
		tok += "." + nonce
	}
	return tok
}

// RandomNonce is the nonce of a new lease or stage token a store issues unless its
// Nonces says otherwise: 8 hex digits from crypto/rand.
func RandomNonce() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ParseLeaseToken splits a token made by LeaseToken, <job>#<attempt>@<epoch>.<nonce>
// or, from an older ledger, <job>#<attempt>@<epoch>; anything else is a usage error.
func ParseLeaseToken(tok string) (job string, attempt, epoch int, nonce string, err error) {
	bad := func() error {
		return fault.Usage("malformed lease token %q: want <job>#<attempt>@<epoch>.<nonce>, as job claim printed it", tok)
	}
	rest, ep, ok := cut(tok, "@")
	if !ok {
		return "", 0, 0, "", bad()
	}
	job, at, ok := cut(rest, "#")
	if !ok || ValidName("job", job) != nil {
		return "", 0, 0, "", bad()
	}
	if attempt, ok = natural(at); !ok {
		return "", 0, 0, "", bad()
	}
	ep, nonce, hasNonce := strings.Cut(ep, ".")
	if epoch, ok = natural(ep); !ok || (hasNonce && !validNonce(nonce)) {
		return "", 0, 0, "", bad()
	}
	return job, attempt, epoch, nonce, nil
}

// validNonce accepts 1 to 32 lower-case hex digits.
func validNonce(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func cut(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+len(sep):], true
}

// natural parses a canonical non-negative decimal ("0", "12"; not "01", "+1", "-0").
func natural(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// AddJobs adds jobs to a graph run. Needs may name jobs already in the run or in the
// same batch; unknown needs, duplicate ids, a job needing itself, a cycle, and a
// need on a job that already FAILED (it could never run) are refused, and then
// nothing is added.
func AddJobs(s *State, specs []JobSpec) error {
	known := map[string]*Job{}
	for i := range s.Jobs {
		known[s.Jobs[i].ID] = &s.Jobs[i]
	}
	batch := map[string]bool{}
	// Jobs and stages share the worktree namespace: <root>/<run>/<name>, branch
	// atlas/<run>/node/<name>.
	var taken, stages []string
	for _, st := range s.Stages {
		stages = append(stages, st.Name)
	}
	for _, j := range s.Jobs {
		taken = append(taken, j.ID)
	}
	for _, sp := range specs {
		if err := CheckNodeName("job", sp.ID); err != nil {
			return err
		}
		if known[sp.ID] != nil || batch[sp.ID] {
			return fault.Conflict("job %q already exists in run %s", sp.ID, s.RunID).WithHint("job ids are unique within a run; pick another")
		}
		if twin := CaseTwin(sp.ID, taken); twin != "" {
			return fault.Usage("job %q differs from job %q only in case: on a case-insensitive file system they would share a worktree and a branch", sp.ID, twin).WithHint("pick another id")
		}
		for _, st := range stages {
			if strings.EqualFold(st, sp.ID) {
				return fault.Usage("job %q has the name of stage %q of run %s: they would share a worktree and a branch", sp.ID, st, s.RunID).WithHint("pick another id")
			}
		}
		batch[sp.ID] = true
		taken = append(taken, sp.ID)
	}
	for _, sp := range specs {
		seen := map[string]bool{}
		for _, n := range sp.Needs {
			if err := ValidName("job", n); err != nil {
				return err
			}
			if n == sp.ID {
				return fault.Usage("job %s cannot need itself: that is a cycle", sp.ID)
			}
			if seen[n] {
				return fault.Usage("job %s names need %s twice", sp.ID, n)
			}
			seen[n] = true
			if known[n] == nil && !batch[n] {
				return fault.NotFound("job %s needs %q, which run %s does not have", sp.ID, n, s.RunID).WithHint("add %s first; `%s` shows the jobs", n, fault.Do("job list", "run", s.RunID))
			}
			if j := known[n]; j != nil && j.State == JobFailed {
				return fault.Refused("job %s needs %s, which has FAILED: it could never run", sp.ID, n)
			}
		}
	}
	if cyc := batchCycle(specs); cyc != nil {
		return fault.Usage("jobs form a cycle: %s", strings.Join(cyc, " -> "))
	}
	for _, sp := range specs {
		needs := append([]string{}, sp.Needs...)
		s.Jobs = append(s.Jobs, Job{ID: sp.ID, State: JobPending, Needs: needs, Scope: sp.Scope, Verify: sp.Verify, Kind: sp.Kind, Criteria: sp.Criteria})
	}
	return nil
}

// batchCycle finds a cycle among the batch's jobs (existing jobs cannot be on one:
// they were added before anything could need them). It returns the path, or nil.
func batchCycle(specs []JobSpec) []string {
	needs := map[string][]string{}
	for _, sp := range specs {
		needs[sp.ID] = sp.Needs
	}
	const (
		unseen = iota
		onPath
		finished
	)
	mark := map[string]int{}
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		mark[id] = onPath
		path = append(path, id)
		for _, n := range needs[id] {
			if _, inBatch := needs[n]; !inBatch {
				continue
			}
			switch mark[n] {
			case onPath:
				for i, p := range path {
					if p == n {
						return append(append([]string{}, path[i:]...), n)
					}
				}
			case unseen:
				if c := visit(n); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[id] = finished
		return nil
	}
	for _, sp := range specs {
		if mark[sp.ID] == unseen {
			if c := visit(sp.ID); c != nil {
				return c
			}
		}
	}
	return nil
}

func firstMatching(files, scope []string, limit int) []string {
	var out []string
	if len(scope) == 0 {
		return nil
	}
	for _, f := range files {
		if matchAny(scope, f) {
			out = append(out, f)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	return out
}

func matching(files, scope []string) []string {
	if len(scope) == 0 {
		return nil
	}
	var out []string
	for _, f := range files {
		if matchAny(scope, f) {
			out = append(out, f)
		}
	}
	return out
}

func matchAny(scope []string, file string) bool {
	for _, g := range scope {
		if ok, _ := doublestar.Match(g, file); ok {
			return true
		}
	}
	return false
}

// CheckOverlap refuses a job whose scope matches a file of the baseline tree that
// another job's scope also matches, naming up to 10 of those files.
func CheckOverlap(s *State, sp JobSpec, files []string) error {
	mine := matching(files, sp.Scope)
	if len(mine) == 0 {
		return nil
	}
	var others []string
	var first string
	var paths []string
	for _, j := range s.Jobs {
		if len(j.Scope) == 0 {
			continue
		}
		if p := firstMatching(mine, j.Scope, overlapShown+1); len(p) > 0 {
			if first == "" {
				first, paths = j.ID, p
			} else {
				others = append(others, j.ID)
			}
		}
	}
	if first == "" {
		return nil
	}
	more := ""
	if len(paths) > overlapShown {
		paths, more = paths[:overlapShown], ", …"
	}
	msg := fmt.Sprintf("scope of job %s overlaps job %s on files of the baseline: %s%s", sp.ID, first, strings.Join(paths, ", "), more)
	if len(others) > 0 {
		msg += fmt.Sprintf(" (and overlaps %s)", strings.Join(others, ", "))
	}
	return fault.Named(fault.ErrRefused, "%s", msg).WithHint("narrow {scope}, or pass {allow_overlap} if the jobs may touch the same files")
}

// eligible: PENDING, under the attempt limit, every need DONE (gas aside).
func eligible(h *Header, s *State, j *Job) bool {
	if j.State != JobPending || j.Attempts >= MaxAttempts(h) {
		return false
	}
	if parentOwesVerify(s, j) {
		return false
	}
	for _, n := range j.Needs {
		if d := s.Job(n); d == nil || d.State != JobDone {
			return false
		}
	}
	return true
}

// Ready lists the jobs a claim may take now, in the order they were added.
func Ready(h *Header, s *State) []string {
	if GasRemaining(h, s) == 0 {
		return nil
	}
	var ids []string
	for i := range s.Jobs {
		if eligible(h, s, &s.Jobs[i]) {
			ids = append(ids, s.Jobs[i].ID)
		}
	}
	return ids
}

// Running lists the jobs that hold a lease.
func Running(s *State) []string {
	var ids []string
	for _, j := range s.Jobs {
		if j.State == JobRunning {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// JobFrontier reports what can be claimed and, when nothing can, why: gas_exhausted
// when a job would be ready but for gas, else waiting while jobs run, else finished
// when every job ended (DONE or FAILED), else halted (no jobs, or a PENDING job that
// can never become ready).
func JobFrontier(h *Header, s *State) Frontier {
	f := Frontier{Ready: Ready(h, s), Running: Running(s), GasLimit: GasLimit(h, s), GasSpent: s.GasSpent, GasRemaining: GasRemaining(h, s)}
	if len(f.Ready) > 0 {
		return f
	}
	for i := range s.Jobs {
		if f.GasRemaining == 0 && eligible(h, s, &s.Jobs[i]) {
			f.Reason = ReasonGasExhausted
			return f
		}
	}
	switch {
	case len(f.Running) > 0:
		f.Reason = ReasonWaiting
	case allEnded(s):
		f.Reason = ReasonFinished
	default:
		f.Reason = ReasonHalted
	}
	return f
}

// allEnded: the graph has jobs and every one is DONE or FAILED.
func allEnded(s *State) bool {
	for _, j := range s.Jobs {
		if j.State != JobDone && j.State != JobFailed {
			return false
		}
	}
	return len(s.Jobs) > 0
}

// Halted reports that no job is ready and none runs: no claim can ever succeed again.
func Halted(h *Header, s *State) bool {
	f := JobFrontier(h, s)
	return len(f.Ready) == 0 && len(f.Running) == 0
}

// Claim takes the named job, or the first ready one: PENDING → RUNNING, one gas
// charged (never refunded), attempts unchanged, a lease token for the job's attempt
// count and the run's epoch, expiring at now + ttl. With nothing ready it grants
// nothing and says why (no error): the caller decides what that means to it. nonce
// is the new token's nonce (gitstate.Store.Nonce).
func Claim(h *Header, s *State, want, holder string, now time.Time, ttl time.Duration, nonce string) (Grant, error) {
	if ttl <= 0 {
		return Grant{}, fault.Usage("lease ttl must be positive, got %s", ttl)
	}
	var j *Job
	if want != "" {
		if err := ValidName("job", want); err != nil {
			return Grant{}, err
		}
		if j = s.Job(want); j == nil {
			return Grant{}, fault.NotFound("run %s has no job %q", s.RunID, want)
		}
		if err := whyNotReady(h, s, j); err != nil {
			return Grant{}, err
		}
	} else {
		f := JobFrontier(h, s)
		if len(f.Ready) == 0 {
			return Grant{Epoch: s.Epoch, Reason: f.Reason}, nil
		}
		j = s.Job(f.Ready[0])
	}
	g := Grant{Lease: LeaseToken(j.ID, j.Attempts, s.Epoch, nonce), Attempt: j.Attempts, Epoch: s.Epoch, ExpiresAt: Stamp(now.Add(ttl))}
	j.State, j.Lease, j.Holder, j.ExpiresAt = JobRunning, g.Lease, holder, g.ExpiresAt
	fixGas(h, s)
	s.GasSpent++
	g.Job = j
	return g, nil
}

// whyNotReady refuses a named claim with what stands in its way.
func whyNotReady(h *Header, s *State, j *Job) error {
	switch {
	case j.State == JobRunning:
		return fault.Refused("job %s is RUNNING under lease %s until %s", j.ID, j.Lease, j.ExpiresAt).WithHint("a lease ends with its receipt, or `%s` after it expires", fault.Do("reap", "run", s.RunID))
	case j.State != JobPending:
		return fault.Refused("job %s is %s: only a PENDING job can be claimed", j.ID, j.State)
	case j.Attempts >= MaxAttempts(h):
		return fault.Refused("job %s has used its %d attempt(s)", j.ID, j.Attempts)
	}
	var waiting []string
	for _, n := range j.Needs {
		if d := s.Job(n); d == nil || d.State != JobDone {
			state := "missing"
			if d != nil {
				state = d.State
			}
			waiting = append(waiting, n+" ("+state+")")
		}
	}
	if len(waiting) > 0 {
		return fault.Refused("job %s is not ready: it needs %s", j.ID, strings.Join(waiting, ", "))
	}
	if parentOwesVerify(s, j) {
		return fault.Refused("job %s is not ready: the receipt of %s that added it waits for %s's verify", j.ID, j.Parent, j.Parent)
	}
	if GasRemaining(h, s) == 0 {
		return fault.Refused("run %s has no gas left (%d of %d spent)", s.RunID, s.GasSpent, GasLimit(h, s))
	}
	return nil
}

// current returns the job whose current lease is token, or the error that says why
// the token is malformed (usage), the job unknown (not found) or the token stale
// (conflict). A token from an older epoch or attempt never matches: fencing.
func current(s *State, id, token string) (*Job, error) {
	if err := ValidName("job", id); err != nil {
		return nil, err
	}
	_, _, epoch, _, err := ParseLeaseToken(token)
	if err != nil {
		return nil, err
	}
	j := s.Job(id)
	if j == nil {
		return nil, fault.NotFound("run %s has no job %q", s.RunID, id)
	}
	if j.State == JobRunning && j.Lease == token && !j.VerifyOwed {
		return j, nil
	}
	why := fmt.Sprintf("job %s is %s", j.ID, j.State)
	if j.State == JobRunning {
		why += " under lease " + j.Lease
	}
	if j.VerifyOwed {
		why += "; its ok receipt was applied and its verify is under way"
	}
	if epoch < s.Epoch {
		why += fmt.Sprintf("; the token is from epoch %d, the run is at epoch %d", epoch, s.Epoch)
	}
	return nil, fault.Conflict("stale lease %s for job %s: %s; nothing changed", token, j.ID, why).WithHint("the lease was ended by a receipt, a reap or a resume: discard this attempt's result and claim again")
}

// Renew extends the job's lease to now + ttl; the token must be the current one.
// An expired lease that nobody reaped is still current and may be renewed: only a
// receipt, a reap or a resume ends a lease.
func Renew(s *State, id, token string, now time.Time, ttl time.Duration) error {
	if ttl <= 0 {
		return fault.Usage("lease ttl must be positive, got %s", ttl)
	}
	j, err := current(s, id, token)
	if err != nil {
		return err
	}
	j.ExpiresAt = Stamp(now.Add(ttl))
	return nil
}

// Done applies a receipt: ok → DONE; timeout → PENDING with attempts + 1 while that
// stays under the limit, else FAILED; failed → FAILED. A FAILED job fails the PENDING
// jobs that need it, transitively (they could never run). result, when not empty, is
// kept on the job. The token must be the job's current lease.
func Done(h *Header, s *State, id, token, status string, result json.RawMessage) (Outcome, error) {
	switch status {
	case ReceiptOK, ReceiptTimeout, ReceiptFailed:
	default:
		return Outcome{}, fault.Usage("unknown receipt status %q (valid: ok, timeout, failed)", status)
	}
	j, err := current(s, id, token)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{ID: j.ID, Lease: j.Lease, From: j.State}
	if len(result) > 0 {
		j.Result = append(json.RawMessage{}, result...)
	}
	switch status {
	case ReceiptOK:
		receiptOK(s, j)
	case ReceiptTimeout:
		timeout(h, j)
	case ReceiptFailed:
		endLease(j, JobFailed)
		j.Reason = "receipt"
	}
	o.To, o.Attempts = j.State, j.Attempts
	if j.State != JobDone && j.State != JobRunning {
		releasePorts(s, id)
	}
	if j.State == JobFailed {
		o.Cascaded = failDependents(s)
	}
	return o, nil
}

// releasePorts frees the block of ports of job id's worktree once its lease ended
// other than DONE (fenced: a timeout, a reap, a resume; or failed), in the same write
// (docs/contract.md §15): another node may take those ports, and the job's next holder
// gets a block again with its worktree.
func releasePorts(s *State, id string) {
	if w := s.Worktree(id); w != nil {
		w.Ports = nil
	}
}

func endLease(j *Job, to string) {
	j.State, j.Lease, j.Holder, j.ExpiresAt = to, "", "", ""
}

// timeout is the RUNNING → PENDING/FAILED transition of a timed-out attempt.
func timeout(h *Header, j *Job) {
	j.Attempts++
	if j.Attempts < MaxAttempts(h) {
		endLease(j, JobPending)
		return
	}
	endLease(j, JobFailed)
	j.Reason = "attempts"
}

// failDependents fails every PENDING job with a FAILED need, to a fixed point, and
// returns them in the order they failed.
func failDependents(s *State) []string {
	var failed []string
	for changed := true; changed; {
		changed = false
		for i := range s.Jobs {
			j := &s.Jobs[i]
			if j.State != JobPending {
				continue
			}
			for _, n := range j.Needs {
				if d := s.Job(n); d != nil && d.State == JobFailed {
					endLease(j, JobFailed)
					j.Reason = "dependency " + n + " failed"
					failed = append(failed, j.ID)
					changed = true
					break
				}
			}
		}
	}
	return failed
}

// Expired lists the running jobs whose lease ended at or before now. A lease whose
// expiry cannot be read counts as expired, so a damaged one cannot hold a job forever.
func Expired(s *State, now time.Time) []string {
	var ids []string
	for _, j := range s.Jobs {
		if j.State != JobRunning || j.VerifyOwed {
			continue // an owed verify is not the worker's lease: resume settles it
		}
		if t, err := ParseStamp(j.ExpiresAt); err != nil || !now.Before(t) {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// Reap gives every expired lease the timeout transition, in job order.
func Reap(h *Header, s *State, now time.Time) []Outcome {
	return timeoutAll(h, s, Expired(s, now))
}

// timeoutAll gives each job of ids the timeout transition, failing the dependants of
// any that fails.
func timeoutAll(h *Header, s *State, ids []string) []Outcome {
	var out []Outcome
	for _, id := range ids {
		j := s.Job(id)
		o := Outcome{ID: id, Lease: j.Lease, From: j.State}
		owed := j.VerifyOwed
		timeout(h, j)
		releasePorts(s, id)
		o.To, o.Attempts = j.State, j.Attempts
		if j.State == JobFailed {
			o.Cascaded = failDependents(s)
		}
		if owed {
			o.Dropped = dropUnstarted(s, id) // last: it moves the jobs j points into
		}
		out = append(out, o)
	}
	return out
}

// parentOwesVerify reports whether j was added by a receipt whose verify has not
// passed yet (its parent is RUNNING with the verify owed): such a child waits, as the
// seeds expand only a node that reached DONE. (An imported kimi-atlas job's parent is
// the integration node that runs after it: that parent owes no verify here.)
func parentOwesVerify(s *State, j *Job) bool {
	if j.Parent == "" {
		return false
	}
	p := s.Job(j.Parent)
	return p != nil && p.State == JobRunning && p.VerifyOwed
}

// dropUnstarted removes the PENDING jobs parent's receipt added that never ran, once
// parent's owed verify has ended other than DONE: the receipt's expansion did not
// hold. No gas was spent on them (parentOwesVerify kept them from being claimed). It
// returns their ids.
func dropUnstarted(s *State, parent string) []string {
	if p := s.Job(parent); p == nil || p.State == JobDone || (p.State == JobRunning && p.VerifyOwed) {
		return nil
	}
	var dropped []string
	kept := s.Jobs[:0]
	for _, j := range s.Jobs {
		if j.Parent == parent && j.State == JobPending && j.Attempts == 0 && j.Lease == "" {
			dropped = append(dropped, j.ID)
			continue
		}
		kept = append(kept, j)
	}
	s.Jobs = kept
	if p := s.Job(parent); p != nil && p.State == JobFailed && len(dropped) > 0 {
		// The parent will not run again, so neither will its children: a job that
		// needs one of them would wait forever. (A parent that goes back to PENDING
		// may add them again with its next receipt; those wait.)
		gone := map[string]bool{}
		for _, id := range dropped {
			gone[id] = true
		}
		for i := range s.Jobs {
			j := &s.Jobs[i]
			for _, n := range j.Needs {
				if j.State == JobPending && gone[n] {
					j.State, j.Reason = JobFailed, "dependency "+n+" was dropped with its failed parent "+parent
					break
				}
			}
		}
		failDependents(s)
	}
	return dropped
}

// ResumeReset is the job half of a resume (docs/contract.md §6.5): every RUNNING job goes back to
// PENDING with its lease cleared; attempts and gas are unchanged. A job whose receipt
// arrived with its verify owed is left for the resume to verify (OwedVerifies). It returns the
// reset jobs. The caller must raise s.Epoch in the same ledger event, so that every
// token issued before the resume is stale.
func ResumeReset(s *State) []string {
	var ids []string
	for i := range s.Jobs {
		if s.Jobs[i].State == JobRunning && !s.Jobs[i].VerifyOwed {
			endLease(&s.Jobs[i], JobPending)
			releasePorts(s, s.Jobs[i].ID)
			ids = append(ids, s.Jobs[i].ID)
		}
	}
	return ids
}

// ReapRunning gives every RUNNING job the timeout transition, expired or not, in job
// order: what `finish --force` does before it finishes a run with running jobs, so
// that no lease outlives the run silently.
func ReapRunning(h *Header, s *State) []Outcome {
	return timeoutAll(h, s, Running(s))
}

// CheckLease reports whether token is job id's current lease: nil when it is, else the
// error that says why (usage: malformed; not found: no such job; conflict: stale).
func CheckLease(s *State, id, token string) error {
	_, err := current(s, id, token)
	return err
}
