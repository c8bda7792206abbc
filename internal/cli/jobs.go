package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/trust"
)

// JobCmd is `git atlas job`: the DAG of a graph run (SPEC §4.2, §5.3).
type JobCmd struct {
	Add   JobAddCmd   `cmd:"" help:"Add a job to a graph run."`
	Claim JobClaimCmd `cmd:"" help:"Claim the next ready job (or --job J) and print its lease token."`
	Renew JobRenewCmd `cmd:"" help:"Extend a job's lease; the token must be the current one."`
	Done  JobDoneCmd  `cmd:"" help:"Apply a worker's receipt: ok, timeout or failed."`
	List  JobListCmd  `cmd:"" help:"List a graph run's jobs, the ready ones, and the gas left."`
}

// graphRun refuses job commands on single runs, and writes on finished runs.
func graphRun(r *gitstate.Run, write bool) error {
	if r.Header.Kind != gitstate.KindGraph {
		return fault.Usage("run %s is a %s run: jobs belong to graph runs", r.Header.RunID, r.Header.Kind).WithHint("start a graph run with `git atlas start --graph`")
	}
	if write && gitstate.RunTerminal(r.State.Status) {
		return fault.Refused("run %s is %s: its jobs can no longer change", r.Header.RunID, r.State.Status)
	}
	return nil
}

func positiveTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fault.Usage("--ttl must be positive, got %s", ttl).WithHint("e.g. --ttl 10m, --ttl 90s")
	}
	return nil
}

func eventData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings, ints and raw JSON always marshal
	}
	return b
}

// jsonObject checks that --data is one JSON object and returns it compacted.
func jsonObject(flag, s string) (json.RawMessage, error) {
	if s == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		return nil, fault.Usage("%s must be a JSON object: %s", flag, strings.TrimSpace(s))
	}
	return json.Marshal(obj)
}

// JobAddCmd is `git atlas job add RUN JOB`.
type JobAddCmd struct {
	RunID        string   `arg:"" name:"run" help:"The graph run."`
	Job          string   `arg:"" name:"job" help:"The job id (unique in the run)."`
	Needs        []string `help:"A job that must be DONE first (repeatable, or comma-separated)." placeholder:"JOB"`
	Scope        []string `sep:"none" help:"A path glob the job may touch (repeatable; never split on commas: a comma belongs inside braces, src/{a,b}/**)." placeholder:"GLOB"`
	Verify       string   `help:"The job's verify command." placeholder:"CMD"`
	Kind         string   `help:"A label for the kind of work (e.g. code, review)." placeholder:"K"`
	Criterion    []string `sep:"none" help:"A run criterion (start --criterion) this job meets (repeatable; must be one of the run's)." placeholder:"TEXT"`
	AllowOverlap bool     `name:"allow-overlap" help:"Accept a scope that matches files another job's scope matches."`
	DriverFlags
}

// Help is the command's long help.
func (c *JobAddCmd) Help() string {
	return `Refused: a cycle or a job needing itself (exit 2), an unknown dependency (exit 4),
a duplicate id (exit 3), a dependency that has FAILED (exit 5), and a scope that matches a
file of the run's baseline tree another job's scope also matches (exit 5, naming up to 10
paths; --allow-overlap accepts it), and a --criterion that is not one of the run's (exit 4,
naming them). A job without --scope claims no files.`
}

// Run adds the job.
func (c *JobAddCmd) Run(env *Env) error {
	if err := gitstate.CheckNodeName("job", c.Job); err != nil {
		return err
	}
	if c.Kind != "" {
		if err := gitstate.ValidName("kind", c.Kind); err != nil {
			return err
		}
	}
	scope, err := gitstate.CanonicalScope(c.Scope)
	if err != nil {
		return err
	}
	spec := gitstate.JobSpec{ID: c.Job, Needs: c.Needs, Scope: scope, Verify: c.Verify, Kind: c.Kind, Criteria: c.Criterion}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	// The baseline is frozen in the header: list its files once, outside the retry loop.
	var files []string
	if len(scope) > 0 && !c.AllowOverlap {
		r, err := store.Load(env.Ctx, c.RunID)
		if err != nil {
			return err
		}
		if err := graphRun(r, true); err != nil {
			return err
		}
		if files, err = store.Repo.TreeFiles(env.Ctx, r.Header.Baseline); err != nil {
			return err
		}
	}
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		if files != nil {
			if err := gitstate.CheckOverlap(&r.State, spec, files); err != nil {
				return nil, err
			}
		}
		if err := gitstate.CheckCriteria(&r.Header, []gitstate.JobSpec{spec}); err != nil {
			return nil, err
		}
		if err := gitstate.CheckJobCap(&r.Header, &r.State, 1); err != nil {
			return nil, err
		}
		if err := gitstate.AddJobs(&r.State, []gitstate.JobSpec{spec}); err != nil {
			return nil, err
		}
		data := eventData(map[string]any{"needs": r.State.Job(c.Job).Needs, "scope": scope, "verify": c.Verify, "kind": c.Kind, "allow_overlap": c.AllowOverlap, "criteria": c.Criterion})
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventJobAdded, Job: c.Job, Holder: c.Holder, Data: data}}, nil
	})
	if err != nil {
		return err
	}
	if c.Verify != "" { // written here: it may run here (SPEC §10)
		if err := trust.Record(env.Ctx, store.Repo, c.RunID, c.Verify); err != nil {
			return err
		}
	}
	j := r.State.Job(c.Job)
	return env.out(map[string]any{"run_id": c.RunID, "job": j}, func(w io.Writer) {
		fmt.Fprintf(w, "%s: added %s\n", c.RunID, c.Job)
	})
}

// JobClaimCmd is `git atlas job claim RUN`.
type JobClaimCmd struct {
	RunID string `arg:"" name:"run" help:"The graph run."`
	Job   string `name:"job" help:"Claim this job rather than the next ready one." placeholder:"J"`
	WorkerFlags
}

// Help is the command's long help: what a claim that grants nothing means.
func (c *JobClaimCmd) Help() string {
	return `Takes the named job, or the first ready job in the order jobs were added: PENDING -> RUNNING,
one gas charged (never refunded), a lease token <job>#<attempt>@<epoch>.<nonce> valid until now + --ttl (the random nonce
makes two clones' claims of one job differ). --holder names the worker: a job lease
never touches the run's driver lease (SPEC §5.1).

With nothing to grant, "job" and "lease" are null and "reason" says why:
  waiting        jobs are running and may make others ready: poll again     exit 0
  finished       every job ended (DONE or FAILED), or the run is finished:
                 nothing is left to claim; stop                              exit 5
  halted         no job is ready and none runs, and not every job ended
                 (e.g. no jobs yet): stop                                    exit 5
  gas_exhausted  a job would be ready, but the run has no gas left: stop     exit 5
Exit 0 always means "claim again later"; every reason to stop claiming exits 5.
A named job that is not ready is refused (exit 5); an unknown one is not found (exit 4).
Expired leases are not taken over by a claim: ` + "`git atlas reap RUN`" + ` returns them.`
}

// claimView is the JSON of a claim (SPEC §4.7); the pointers are null when nothing
// was granted.
type claimView struct {
	RunID        string        `json:"run_id"`
	Job          *gitstate.Job `json:"job"`
	Lease        *string       `json:"lease"`
	Attempt      *int          `json:"attempt"`
	Epoch        int           `json:"epoch"`
	ExpiresAt    *string       `json:"expires_at"`
	Reason       *string       `json:"reason"`
	GasRemaining int           `json:"gas_remaining"`
}

// Run claims.
func (c *JobClaimCmd) Run(env *Env) error {
	if err := positiveTTL(c.TTL); err != nil {
		return err
	}
	if c.Job != "" {
		if err := gitstate.ValidName("job", c.Job); err != nil {
			return err
		}
	}
	store, err := c.WorkerFlags.store(env)
	if err != nil {
		return err
	}
	var g gitstate.Grant
	var running []string
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if err := graphRun(r, false); err != nil {
			return nil, err
		}
		if gitstate.RunTerminal(r.State.Status) {
			// A finished run has nothing to claim: said as a reason, like a graph whose
			// jobs all ended, not as a stuck run.
			g = gitstate.Grant{Epoch: r.State.Epoch, Reason: gitstate.ReasonFinished}
			return nil, nil
		}
		if r.State.Status == gitstate.RunStopped {
			return nil, fault.Refused("run %s is stopped: nothing can be claimed", c.RunID).WithHint("`git atlas resume %s` first", c.RunID)
		}
		now := gitstate.Now()
		var err error
		if g, err = gitstate.Claim(&r.Header, &r.State, c.Job, c.Holder, now, c.TTL); err != nil {
			return nil, err
		}
		if g.Job == nil {
			running = gitstate.Running(&r.State)
			return nil, nil // nothing granted: nothing to write
		}
		data := eventData(map[string]any{"lease": g.Lease, "attempt": g.Attempt, "expires_at": g.ExpiresAt,
			"gas_spent": r.State.GasSpent, "gas_limit": gitstate.GasLimit(&r.Header, &r.State)})
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventJobClaimed, Job: g.Job.ID, Holder: c.Holder, Data: data}}, nil
	})
	if err != nil {
		return err
	}
	view := claimView{RunID: c.RunID, Epoch: g.Epoch, GasRemaining: gitstate.GasRemaining(&r.Header, &r.State)}
	if g.Job == nil {
		view.Reason = &g.Reason
		stop := claimStop(r, g.Reason)
		if stop == nil {
			return env.out(view, func(w io.Writer) {
				fmt.Fprintf(w, "nothing to claim yet: waiting on %s\n", strings.Join(running, ", "))
			})
		}
		if env.JSON {
			if err := printJSON(env.Stdout, view); err != nil {
				return err
			}
		}
		return stop
	}
	view.Job, view.Lease, view.Attempt, view.ExpiresAt = g.Job, &g.Lease, &g.Attempt, &g.ExpiresAt
	return env.out(view, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s (until %s)\n", g.Job.ID, g.Lease, g.ExpiresAt)
	})
}

// claimStop is the error of a claim that will never be granted again (exit 5), or nil
// for waiting.
func claimStop(r *gitstate.Run, reason string) error {
	count := map[string]int{}
	for _, j := range r.State.Jobs {
		count[j.State]++
	}
	switch reason {
	case gitstate.ReasonFinished:
		if gitstate.RunTerminal(r.State.Status) {
			return fault.Refused("run %s is %s: nothing is left to claim", r.Header.RunID, r.State.Status)
		}
		return fault.Refused("run %s's graph is finished: every job ended (%d done, %d failed); nothing is left to claim",
			r.Header.RunID, count[gitstate.JobDone], count[gitstate.JobFailed]).
			WithHint("integrate with `git atlas union %s`, then `git atlas finish %s`", r.Header.RunID, r.Header.RunID)
	case gitstate.ReasonHalted:
		return fault.Refused("run %s has halted: no job is ready and none is running (%d done, %d failed, %d pending)",
			r.Header.RunID, count[gitstate.JobDone], count[gitstate.JobFailed], count[gitstate.JobPending]).
			WithHint("finish it with `git atlas finish %s --status completed|failed`, or add jobs", r.Header.RunID)
	case gitstate.ReasonGasExhausted:
		return fault.Refused("run %s has no gas left: %d of %d spent", r.Header.RunID, r.State.GasSpent, gitstate.GasLimit(&r.Header, &r.State)).
			WithHint("a job is ready but cannot be charged; gas is never refunded")
	}
	return nil
}

// JobRenewCmd is `git atlas job renew RUN JOB --lease TOKEN`.
type JobRenewCmd struct {
	RunID string `arg:"" name:"run" help:"The graph run."`
	Job   string `arg:"" name:"job" help:"The job."`
	Lease string `required:"" help:"The job's current lease token." placeholder:"TOKEN"`
	WorkerFlags
}

// Help is the command's long help.
func (c *JobRenewCmd) Help() string {
	return `The lease then lasts until now + --ttl. A token that is not the job's current one is rejected
with exit 3 and changes nothing; a malformed token is a usage error (exit 2). A lease that
expired but was not reaped is still current and may be renewed.`
}

// Run renews.
func (c *JobRenewCmd) Run(env *Env) error {
	if err := positiveTTL(c.TTL); err != nil {
		return err
	}
	store, err := c.WorkerFlags.store(env)
	if err != nil {
		return err
	}
	var j *gitstate.Job
	_, err = store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		now := gitstate.Now()
		if err := gitstate.Renew(&r.State, c.Job, c.Lease, now, c.TTL); err != nil {
			return nil, err
		}
		j = r.State.Job(c.Job)
		data := eventData(map[string]any{"lease": j.Lease, "expires_at": j.ExpiresAt})
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventJobRenewed, Job: c.Job, Holder: c.Holder, Data: data}}, nil
	})
	if err != nil {
		return err
	}
	return env.out(map[string]any{"run_id": c.RunID, "job": j, "lease": j.Lease, "expires_at": j.ExpiresAt}, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s (until %s)\n", j.ID, j.Lease, j.ExpiresAt)
	})
}

// JobDoneCmd is `git atlas job done RUN JOB --lease TOKEN --status S`.
type JobDoneCmd struct {
	RunID  string `arg:"" name:"run" help:"The graph run."`
	Job    string `arg:"" name:"job" help:"The job."`
	Lease  string `required:"" help:"The lease token the claim printed." placeholder:"TOKEN"`
	Status string `required:"" enum:"ok,timeout,failed" help:"ok, timeout or failed."`
	Data   string `help:"A JSON object kept as the job's result." placeholder:"JSON"`
	// Children is the expansion: jobs added in the receipt's own write.
	Children string `help:"With --status ok: a JSON list of child jobs (job add's shape: id, needs, scope, verify, criterion, kind) added in the same write." placeholder:"FILE"`
	// VerifyTimeout bounds the job's verify on an ok receipt.
	VerifyTimeout time.Duration `name:"verify-timeout" default:"10m" help:"Time limit of the job's verify on an ok receipt (its process group is killed then)." placeholder:"DUR"`
	WorkerFlags
}

// Help is the command's long help.
func (c *JobDoneCmd) Help() string {
	return `ok: RUNNING -> DONE. timeout: RUNNING -> PENDING with attempts + 1, or FAILED at the attempt
limit. failed: RUNNING -> FAILED. A FAILED job fails the PENDING jobs that need it.
A token that is not the job's current one (an older attempt or epoch, an ended lease) is
rejected with exit 3 and changes nothing.

ok on a job with --verify: the receipt is recorded with the verify owed (the job stays
RUNNING, its dependants wait), the verify runs in the job's worktree under
--verify-timeout, and its exit code and output tail are recorded in a second write:
pass -> DONE (verified); fail or timeout -> attempts + 1, PENDING under the limit, else
FAILED; exit 6. A job with no worktree is never verified in your checkout: it becomes
DONE, recorded as unverified ("no worktree"). If the verify never finishes (the process
dies), ` + "`git atlas resume`" + ` runs it again.

--children FILE (with ok): a JSON list of jobs in job add's shape, e.g.
  [{"id": "a1", "needs": [], "scope": ["src/a/**"], "verify": "make test", "criterion": ["tests pass"], "kind": "code"}]
added in the receipt's own ledger write, one expansion level below this job. Over the run's
--max-jobs or --max-depth (start) -> exit 5; a cycle or bad id -> exit 2; an unknown need or
criterion -> exit 4; then nothing at all is written, the receipt included.`
}

// childSpec is one job of a --children file: job add's flags as JSON.
type childSpec struct {
	ID        string   `json:"id"`
	Needs     []string `json:"needs"`
	Scope     []string `json:"scope"`
	Verify    string   `json:"verify"`
	Criterion []string `json:"criterion"`
	Kind      string   `json:"kind"`
}

// readChildren reads and checks a --children file.
func readChildren(path string) ([]gitstate.JobSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Usage("read --children: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var list []childSpec
	if err := dec.Decode(&list); err != nil || list == nil {
		why := "null"
		if err != nil {
			why = err.Error()
		}
		return nil, fault.Usage("--children %s must be a JSON list of jobs (id, needs, scope, verify, criterion, kind): %s", path, why)
	}
	specs := make([]gitstate.JobSpec, 0, len(list))
	for _, ch := range list {
		if err := gitstate.ValidName("job", ch.ID); err != nil {
			return nil, err
		}
		if ch.Kind != "" {
			if err := gitstate.ValidName("kind", ch.Kind); err != nil {
				return nil, err
			}
		}
		scope, err := gitstate.CanonicalScope(ch.Scope)
		if err != nil {
			return nil, err
		}
		specs = append(specs, gitstate.JobSpec{ID: ch.ID, Needs: ch.Needs, Scope: scope, Verify: ch.Verify, Kind: ch.Kind, Criteria: ch.Criterion})
	}
	return specs, nil
}

// Run applies the receipt.
func (c *JobDoneCmd) Run(env *Env) error {
	data, err := jsonObject("--data", c.Data)
	if err != nil {
		return err
	}
	var children []gitstate.JobSpec
	if c.Children != "" {
		if c.Status != gitstate.ReceiptOK {
			return fault.Usage("--children needs --status ok: only a finished job expands")
		}
		if children, err = readChildren(env.path(c.Children)); err != nil {
			return err
		}
	}
	store, err := c.WorkerFlags.store(env)
	if err != nil {
		return err
	}
	var o gitstate.Outcome
	r, err := store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		var err error
		if o, err = gitstate.Done(&r.Header, &r.State, c.Job, c.Lease, c.Status, data); err != nil {
			return nil, err
		}
		if err := gitstate.Expand(&r.Header, &r.State, c.Job, children); err != nil {
			return nil, err
		}
		ev := map[string]any{"lease": o.Lease, "status": c.Status, "from": o.From, "to": o.To, "attempts": o.Attempts}
		if len(o.Cascaded) > 0 {
			ev["cascaded"] = o.Cascaded
		}
		if len(children) > 0 {
			ids := make([]string, len(children))
			for i, ch := range children {
				ids[i] = ch.ID
			}
			ev["children"] = ids
		}
		if j := r.State.Job(c.Job); j.VerifyOwed {
			ev["verify_owed"] = true // in the receipt's own write: resume finds it if the verify dies
		}
		if data != nil {
			ev["data"] = data
		}
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventJobDone, Job: c.Job, Holder: c.Holder, Data: eventData(ev)}}, nil
	})
	if err != nil {
		return err
	}
	var vr *gitstate.VerifyResult
	if j := r.State.Job(c.Job); j != nil && j.VerifyOwed {
		var v resume.JobVerified
		if r, v, err = resume.SettleJobVerify(env.Ctx, store, c.RunID, c.Job, c.VerifyTimeout); err != nil {
			return err
		}
		vr, o.To, o.Attempts = v.Verify, v.To, v.Attempts
		o.Cascaded = append(o.Cascaded, v.Cascaded...)
	}
	cascaded := o.Cascaded
	if cascaded == nil {
		cascaded = []string{}
	}
	added := []gitstate.Job{}
	for _, ch := range children {
		if j := r.State.Job(ch.ID); j != nil {
			added = append(added, *j)
		}
	}
	view := map[string]any{"run_id": c.RunID, "job": r.State.Job(c.Job), "status": c.Status, "from": o.From, "to": o.To, "cascaded": cascaded, "verify": vr, "children": added}
	if err := env.out(view, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s -> %s\n", c.Job, o.From, o.To)
		if vr != nil {
			fmt.Fprintf(w, "verify %s: %s\n", vr.Command, resume.Outcome(vr, c.VerifyTimeout))
		}
		for _, ch := range added {
			fmt.Fprintf(w, "added child %s (depth %d)\n", ch.ID, ch.Depth)
		}
		if len(o.Cascaded) > 0 {
			fmt.Fprintf(w, "also FAILED (they need %s): %s\n", c.Job, strings.Join(o.Cascaded, ", "))
		}
	}); err != nil {
		return err
	}
	if vr != nil && !vr.Passed {
		return &fault.Error{Kind: fault.ErrVerifyFailed, Msg: fmt.Sprintf("verify of job %s %s: the job is %s with %d attempt(s)", c.Job, resume.Outcome(vr, c.VerifyTimeout), o.To, o.Attempts)}
	}
	return nil
}

// JobListCmd is `git atlas job list RUN`.
type JobListCmd struct {
	RunID string `arg:"" name:"run" help:"The graph run."`
	Ready bool   `help:"Only the jobs a claim could take now."`
}

// Run lists the jobs.
func (c *JobListCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	r, err := store.Load(env.Ctx, c.RunID)
	if err != nil {
		return err
	}
	if err := graphRun(r, false); err != nil {
		return err
	}
	f := gitstate.JobFrontier(&r.Header, &r.State)
	ready := map[string]bool{}
	for _, id := range f.Ready {
		ready[id] = true
	}
	jobs := []gitstate.Job{}
	for _, j := range r.State.Jobs {
		if !c.Ready || ready[j.ID] {
			jobs = append(jobs, j)
		}
	}
	readyIDs := append([]string{}, f.Ready...)
	view := map[string]any{"run_id": c.RunID, "jobs": jobs, "ready": readyIDs, "epoch": r.State.Epoch,
		"gas_limit": f.GasLimit, "gas_spent": f.GasSpent, "gas_remaining": f.GasRemaining, "reason": f.Reason}
	now := gitstate.Now()
	return env.out(view, func(w io.Writer) {
		if len(jobs) > 0 {
			t := newTable(w, "JOB", "STATE", "ATTEMPTS", "NEEDS", "HOLDER", "LEASE", "EXPIRES")
			for _, j := range jobs {
				state := j.State
				if ready[j.ID] {
					state += " (ready)"
				}
				t.row(j.ID, state, fmt.Sprint(j.Attempts), dash(strings.Join(j.Needs, ",")), dash(j.Holder), dash(j.Lease), dash(until(j.ExpiresAt, now)))
			}
			t.flush()
		} else {
			fmt.Fprintln(w, "no jobs")
		}
		status := fmt.Sprintf("%d ready", len(f.Ready))
		if f.Reason != "" {
			status = f.Reason
		}
		fmt.Fprintf(w, "gas %d of %d spent, epoch %d, %s\n", f.GasSpent, f.GasLimit, r.State.Epoch, status)
	})
}

// until renders a lease expiry for people: "in 9m", or "expired 3s ago".
func until(stamp string, now time.Time) string {
	if stamp == "" {
		return ""
	}
	t, err := gitstate.ParseStamp(stamp)
	if err != nil {
		return "?"
	}
	if d := t.Sub(now); d > 0 {
		return "in " + d.Round(time.Second).String()
	}
	return "expired " + age(stamp, now)
}

// ReapCmd is `git atlas reap RUN`.
type ReapCmd struct {
	RunID  string `arg:"" name:"run" help:"The graph run."`
	Holder string `help:"Who reaps (recorded in the event; never the run's driver)." placeholder:"NAME"`
}

// Help is the command's long help.
func (c *ReapCmd) Help() string {
	return `Every RUNNING job whose lease has expired takes the timeout transition: PENDING with
attempts + 1, or FAILED at the attempt limit. Its old token is stale from then on (exit 3).
With nothing expired, nothing is written. Reaping is a job write, like a claim: anyone may
reap (a worker of a fleet with no orchestrator, the driver, a person), it never takes or
renews the run's driver lease, and a live driver does not refuse it: only leases that
have already run out are ended, whoever asks.`
}

type reapedView struct {
	ID       string   `json:"id"`
	Lease    string   `json:"lease"`
	To       string   `json:"to"`
	Attempts int      `json:"attempts"`
	Cascaded []string `json:"cascaded"`
}

func reapViews(outs []gitstate.Outcome) []reapedView {
	views := []reapedView{}
	for _, o := range outs {
		cas := o.Cascaded
		if cas == nil {
			cas = []string{}
		}
		views = append(views, reapedView{ID: o.ID, Lease: o.Lease, To: o.To, Attempts: o.Attempts, Cascaded: cas})
	}
	return views
}

// Run reaps.
func (c *ReapCmd) Run(env *Env) error {
	store, err := WorkerFlags{Holder: c.Holder}.store(env)
	if err != nil {
		return err
	}
	var reaped []reapedView
	_, err = store.Update(env.Ctx, c.RunID, func(r *gitstate.Run) (*gitstate.Change, error) {
		if err := graphRun(r, true); err != nil {
			return nil, err
		}
		now := gitstate.Now()
		reaped = reapViews(gitstate.Reap(&r.Header, &r.State, now))
		if len(reaped) == 0 {
			return nil, nil
		}
		return &gitstate.Change{Event: gitstate.Event{Type: gitstate.EventJobReaped, Holder: c.Holder, Data: eventData(map[string]any{"jobs": reaped})}}, nil
	})
	if err != nil {
		return err
	}
	return env.out(map[string]any{"run_id": c.RunID, "reaped": reaped}, func(w io.Writer) {
		if len(reaped) == 0 {
			fmt.Fprintln(w, "no expired leases")
		}
		for _, o := range reaped {
			fmt.Fprintf(w, "%s: lease %s expired -> %s\n", o.ID, o.Lease, o.To)
			if len(o.Cascaded) > 0 {
				fmt.Fprintf(w, "also FAILED (they need %s): %s\n", o.ID, strings.Join(o.Cascaded, ", "))
			}
		}
	})
}

// printVerdict is the human line of a graph run's verdict and the criteria behind it.
func printVerdict(w io.Writer, v *gitstate.Verdict) {
	if v == nil {
		return
	}
	fmt.Fprintf(w, "verdict   %s\n", v.Verdict)
	for _, g := range []struct {
		label string
		list  []string
	}{{"resolved", v.Resolved}, {"unverified", v.Unverified}, {"unresolved", v.Unresolved}} {
		for _, c := range g.list {
			fmt.Fprintf(w, "  %-10s  %s\n", g.label, c)
		}
	}
}
