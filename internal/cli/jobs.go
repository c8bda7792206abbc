package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// JobCmd is `git atlas job`: the DAG of a graph run (docs/contract.md §4.2, §5.3).
type JobCmd struct {
	Add   JobAddCmd   `cmd:"" help:"Add a job to a graph run."`
	Claim JobClaimCmd `cmd:"" help:"Claim the next ready job (or --job J) and print its lease token."`
	Renew JobRenewCmd `cmd:"" help:"Extend a job's lease; the token must be the current one."`
	Done  JobDoneCmd  `cmd:"" help:"Apply a worker's receipt: ok, timeout or failed."`
	List  JobListCmd  `cmd:"" help:"List a graph run's jobs, the ready ones, and the gas left."`
}

// JobAddCmd is `git atlas job add RUN JOB`.
type JobAddCmd struct {
	RunID        string   `arg:"" name:"run" help:"${job_add_run}"`
	Job          string   `arg:"" name:"job" help:"${job_add_job}"`
	Needs        []string `help:"${job_add_needs}" placeholder:"JOB"`
	Scope        []string `sep:"none" help:"${job_add_scope}" placeholder:"GLOB"`
	Verify       string   `help:"${job_add_verify}" placeholder:"CMD"`
	Kind         string   `help:"${job_add_kind}" placeholder:"K"`
	Criterion    []string `sep:"none" help:"${job_add_criterion}" placeholder:"TEXT"`
	AllowOverlap bool     `name:"allow-overlap" help:"${job_add_allow_overlap}"`
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
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.JobAdd(env.Ctx, ops.JobAddRequest{Run: c.RunID, Job: c.Job, Needs: c.Needs, Scope: c.Scope, Verify: c.Verify, Kind: c.Kind,
		Criteria: c.Criterion, AllowOverlap: c.AllowOverlap, Driver: c.ops()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s: added %s\n", c.RunID, c.Job)
	})
}

// JobClaimCmd is `git atlas job claim RUN`.
type JobClaimCmd struct {
	RunID    string `arg:"" name:"run" help:"${job_claim_run}"`
	Job      string `name:"job" help:"${job_claim_job}" placeholder:"J"`
	Agent    string `name:"agent" enum:",claude,codex,kimi" default:"" help:"${job_claim_agent}" placeholder:"AGENT"`
	ThreadID string `name:"thread-id" help:"${job_claim_thread_id}" placeholder:"ID"`
	WorkerFlags
}

// Help is the command's long help: what a claim that grants nothing means.
func (c *JobClaimCmd) Help() string {
	return `Takes the named job, or the first ready job in the order jobs were added: PENDING -> RUNNING,
one gas charged (never refunded), a lease token <job>#<attempt>@<epoch>.<nonce> valid until now + --ttl (the random nonce
makes two clones' claims of one job differ). --holder names the worker: a job lease
never touches the run's driver lease (docs/contract.md §5.1).

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

// Run claims.
func (c *JobClaimCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.JobClaim(env.Ctx, ops.JobClaimRequest{Run: c.RunID, Job: c.Job, Worker: c.ops(), Agent: c.Agent, ThreadID: c.ThreadID, ForAgent: env.forAgent()})
	if res == nil {
		return err
	}
	if err != nil { // a reason to stop claiming: the claim's JSON, then the refusal
		if env.JSON {
			if err := printJSON(env.Stdout, res); err != nil {
				return err
			}
		}
		return err
	}
	if res.Job == nil {
		return env.out(res, func(w io.Writer) {
			fmt.Fprintf(w, "nothing to claim yet: waiting on %s\n", strings.Join(res.Running, ", "))
		})
	}
	return env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s (until %s)\n", res.Job.ID, *res.Lease, *res.ExpiresAt)
	})
}

// JobRenewCmd is `git atlas job renew RUN JOB --lease TOKEN`.
type JobRenewCmd struct {
	RunID string `arg:"" name:"run" help:"${job_renew_run}"`
	Job   string `arg:"" name:"job" help:"${job_renew_job}"`
	Lease string `required:"" help:"${job_renew_lease}" placeholder:"TOKEN"`
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
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.JobRenew(env.Ctx, ops.JobRenewRequest{Run: c.RunID, Job: c.Job, Lease: c.Lease, Worker: c.ops()})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s (until %s)\n", res.Job.ID, res.Lease, res.ExpiresAt)
	})
}

// JobDoneCmd is `git atlas job done RUN JOB --lease TOKEN --status S`.
type JobDoneCmd struct {
	RunID  string `arg:"" name:"run" help:"${job_done_run}"`
	Job    string `arg:"" name:"job" help:"${job_done_job}"`
	Lease  string `required:"" help:"${job_done_lease}" placeholder:"TOKEN"`
	Status string `required:"" enum:"ok,timeout,failed" help:"${job_done_status}"`
	Data   string `help:"${job_done_data}" placeholder:"JSON"`
	// Children is the expansion: jobs added in the receipt's own write.
	Children string `help:"${job_done_children}" placeholder:"FILE"`
	// VerifyTimeout bounds the job's verify on an ok receipt.
	VerifyTimeout time.Duration `name:"verify-timeout" help:"${job_done_verify_timeout}" placeholder:"DUR"`
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

// readChildren reads a --children file (the request's Check reads the list; the
// operation checks the jobs' names and scopes).
func readChildren(path string) (json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Usage("read --children: %v", err)
	}
	return b, nil
}

// Run applies the receipt.
func (c *JobDoneCmd) Run(env *Env) error {
	var children json.RawMessage
	if c.Children != "" {
		var err error
		if children, err = readChildren(env.path(c.Children)); err != nil {
			return err
		}
	}
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.JobDone(env.Ctx, ops.JobDoneRequest{Run: c.RunID, Job: c.Job, Lease: c.Lease, Status: c.Status, Data: json.RawMessage(c.Data),
		ChildrenJSON: children, VerifyTimeout: c.VerifyTimeout, Worker: c.ops(), ForAgent: env.forAgent()})
	if res == nil {
		return err
	}
	if err := env.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s -> %s\n", c.Job, res.From, res.To)
		if vr := res.Verify; vr != nil {
			fmt.Fprintf(w, "verify %s: %s\n", vr.Command, ops.VerifyOutcome(vr, c.VerifyTimeout))
		}
		for _, ch := range res.Children {
			fmt.Fprintf(w, "added child %s (depth %d)\n", ch.ID, ch.Depth)
		}
		if len(res.Cascaded) > 0 {
			fmt.Fprintf(w, "also FAILED (they need %s): %s\n", c.Job, strings.Join(res.Cascaded, ", "))
		}
	}); err != nil {
		return err
	}
	return err // a verify that failed: the receipt's result, then the failure
}

// JobListCmd is `git atlas job list RUN`.
type JobListCmd struct {
	RunID string `arg:"" name:"run" help:"${job_list_run}"`
	Ready bool   `help:"${job_list_ready}"`
}

// Run lists the jobs.
func (c *JobListCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.JobList(env.Ctx, ops.JobListRequest{Run: c.RunID, Ready: c.Ready, ForAgent: env.forAgent()})
	if err != nil {
		return err
	}
	ready := map[string]bool{}
	for _, id := range res.Ready {
		ready[id] = true
	}
	now := env.now()
	return env.out(res, func(w io.Writer) {
		if len(res.Jobs) > 0 {
			t := newTable(w, "JOB", "STATE", "ATTEMPTS", "NEEDS", "HOLDER", "LEASE", "EXPIRES")
			for _, j := range res.Jobs {
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
		status := fmt.Sprintf("%d ready", len(res.Ready))
		if res.Reason != "" {
			status = res.Reason
		}
		fmt.Fprintf(w, "gas %d of %d spent, epoch %d, %s\n", res.GasSpent, res.GasLimit, res.Epoch, status)
	})
}

// until renders a lease expiry for people: "in 9m", or "expired 3s ago".
func until(stamp string, now time.Time) string {
	if stamp == "" {
		return ""
	}
	t, err := ops.ParseStamp(stamp)
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
	RunID  string `arg:"" name:"run" help:"${reap_run}"`
	Holder string `help:"${reap_holder}" placeholder:"NAME"`
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

// Run reaps.
func (c *ReapCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.Reap(env.Ctx, ops.ReapRequest{Run: c.RunID, Holder: c.Holder})
	if err != nil {
		return err
	}
	return env.out(res, func(w io.Writer) {
		if len(res.Reaped) == 0 {
			fmt.Fprintln(w, "no expired leases")
		}
		for _, o := range res.Reaped {
			fmt.Fprintf(w, "%s: lease %s expired -> %s\n", o.ID, o.Lease, o.To)
			if len(o.Cascaded) > 0 {
				fmt.Fprintf(w, "also FAILED (they need %s): %s\n", o.ID, strings.Join(o.Cascaded, ", "))
			}
		}
	})
}

// printVerdict is the human line of a graph run's verdict and the criteria behind it.
func printVerdict(w io.Writer, v *ops.Verdict) {
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
