package ops

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

// jobs adds jobs with no needs to r1 (a graph run), as driver d1.
func (f *wtFixture) jobs(ids ...string) {
	f.t.Helper()
	for _, id := range ids {
		if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: id, Driver: Driver{Holder: "d1"}}); err != nil {
			f.t.Fatal(err)
		}
	}
}

// claim claims job as worker w and returns its lease token.
func (f *wtFixture) claim(job, w string) string {
	f.t.Helper()
	res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Job: job, Worker: Worker{Holder: w, TTL: time.Hour}})
	if err != nil {
		f.t.Fatal(err)
	}
	if res.Job == nil || res.Lease == nil {
		f.t.Fatalf("claim of %s granted nothing: %+v", job, res)
	}
	return *res.Lease
}

// last is r1's newest event.
func (f *wtFixture) last() ledger.Event {
	f.t.Helper()
	log, err := f.ops.Reader().Log(f.ctx, "r1")
	if err != nil {
		f.t.Fatal(err)
	}
	return log[len(log)-1]
}

func (f *wtFixture) tip() string {
	f.t.Helper()
	return f.load().Tip
}

// Jobs belong to graph runs: a single run refuses them.
func TestJobAddToSingleRunRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	_, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Driver: Driver{Holder: "d1"}})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "jobs belong to graph runs") {
		t.Fatalf("job add to a single run: %v, want a usage error", err)
	}
}

// job add records the job and its job_added event; its verify command was written
// here, so it is trusted here.
func TestJobAddRecordsTheJobAndItsEvent(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("b")
	res, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Needs: []string{"b"}, Scope: []string{"src/**"}, Kind: "code", Verify: "make check",
		Driver: Driver{Holder: "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != "r1" || res.Job == nil || res.Job.ID != "a" || res.Job.State != ledger.JobPending || strings.Join(res.Job.Needs, ",") != "b" {
		t.Fatalf("job add: %+v", res)
	}
	ev := f.last()
	if ev.Type != ledger.EventJobAdded || ev.Job != "a" || ev.Holder != "d1" || !strings.Contains(string(ev.Data), `"kind":"code"`) {
		t.Fatalf("event: %+v %s", ev, ev.Data)
	}
	cmds, err := trust.Check(f.ctx, f.ops.Repo, f.load())
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].Command != "make check" || !cmds[0].Trusted {
		t.Fatalf("the run's commands: %+v, want the job's verify trusted here", cmds)
	}
}

// A stopped run is resumed before anyone claims from it: the claim is refused (exit
// 5) and nothing is written.
func TestJobClaimOnStoppedRunRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	f.update(func(r *ledger.Run) { r.State.Status = ledger.RunStopped })
	tip := f.tip()
	res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "is stopped: nothing can be claimed") || res != nil {
		t.Fatalf("claim on a stopped run: %+v, %v; want refused, nothing can be claimed", res, err)
	}
	if s := hintSteps(err); len(s) != 1 || s[0].Op != "resume" || str(s[0], "run") != "r1" || str(s[0], "holder") != "w1" {
		t.Fatalf("hint %q, want resume r1 as w1", fault.HintOf(err))
	}
	if f.tip() != tip {
		t.Fatal("the refused claim wrote to the ledger")
	}
}

// A claim makes the job RUNNING under the worker's lease, charges one gas, and
// records all of it as job_claimed.
func TestJobClaimRecordsLeaseAndEvent(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a", "b")
	driver := *f.load().State.Driver
	res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Job == nil || res.Job.ID != "a" || res.Lease == nil || res.Attempt == nil || *res.Attempt != 0 || res.ExpiresAt == nil || res.Reason != nil {
		t.Fatalf("claim: %+v", res)
	}
	j := f.load().State.Job("a")
	if j.State != ledger.JobRunning || j.Lease != *res.Lease || j.Holder != "w1" || j.ExpiresAt != *res.ExpiresAt {
		t.Fatalf("ledger's job: %+v, want RUNNING under %s", j, *res.Lease)
	}
	if res.GasRemaining != 2*ledger.DefaultMaxAttempts+2-1 {
		t.Fatalf("gas remaining %d after one claim", res.GasRemaining)
	}
	ev := f.last()
	data, err := ledger.DecodeData[ledger.JobClaimedData](&ev)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Job != "a" || ev.Holder != "w1" || data.Lease != *res.Lease || data.Attempt != 0 || data.GasSpent != 1 {
		t.Fatalf("event: %+v %s", ev, ev.Data)
	}
	if d := f.load().State.Driver; d == nil || d.Holder != driver.Holder || d.ExpiresAt != driver.ExpiresAt {
		t.Fatalf("driver lease after a worker's claim: %+v, want %+v untouched", d, driver)
	}
}

// A claim that can never be granted (no job ready, none running) comes back with its
// reason and a refusal: stop claiming.
func TestJobClaimOnHaltedRunStops(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}})
	if !errors.Is(err, fault.ErrRefused) || res == nil || res.Reason == nil || *res.Reason != ledger.ReasonHalted || res.Job != nil {
		t.Fatalf("claim with no jobs: %+v, %v; want reason halted and a refusal", res, err)
	}
}

// The request owns the lease's default and check (docs/contract.md §4.6): no TTL is the
// default one, a negative one is refused naming the field, never a flag.
func TestJobClaimTTLDefaultAndCheck(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a", "b")
	_, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: -time.Second}})
	if !errors.Is(err, fault.ErrUsage) || !strings.HasPrefix(err.Error(), "ttl must be positive") {
		t.Fatalf("claim with a negative TTL: %v, want a usage error naming the field ttl", err)
	}
	if msg, hint := fault.Spelled(err, func(f string) string { return "--" + f }); !strings.HasPrefix(msg, "--ttl must be positive") || hint != "e.g. --ttl 10m, --ttl 90s" {
		t.Fatalf("spelled for the command line: %q / %q", msg, hint)
	}
	res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1"}})
	if err != nil || res.ExpiresAt == nil {
		t.Fatalf("claim with no TTL: %+v, %v", res, err)
	}
	exp, err := ledger.ParseStamp(*res.ExpiresAt)
	if left := exp.Sub(f.ops.Clock.Now()); err != nil || left > ledger.DefaultDriverTTL || left < ledger.DefaultDriverTTL-time.Minute {
		t.Fatalf("claim with no TTL expires at %s (%v), want now + the default", *res.ExpiresAt, err)
	}
}

// Only the job's current token renews its lease: anyone else's is refused (exit 3)
// and changes nothing.
func TestJobRenewByNonHolderRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	lease := f.claim("a", "w1")
	job, attempt, epoch, _, err := ledger.ParseLeaseToken(lease)
	if err != nil {
		t.Fatal(err)
	}
	forged := ledger.LeaseToken(job, attempt, epoch, "0123abcd")
	if forged == lease {
		t.Fatal("the forged token is the real one")
	}
	tip := f.tip()
	_, err = f.ops.JobRenew(f.ctx, JobRenewRequest{Run: "r1", Job: "a", Lease: forged, Worker: Worker{Holder: "w2", TTL: 2 * time.Hour}})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("renew with another's token: %v, want a conflict", err)
	}
	if f.tip() != tip {
		t.Fatal("the refused renew wrote to the ledger")
	}
	res, err := f.ops.JobRenew(f.ctx, JobRenewRequest{Run: "r1", Job: "a", Lease: lease, Worker: Worker{Holder: "w1", TTL: 2 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := f.last(); ev.Type != ledger.EventJobRenewed || ev.Job != "a" || !strings.Contains(string(ev.Data), res.ExpiresAt) || res.Lease != lease {
		t.Fatalf("renew: %+v, event %+v %s", res, ev, ev.Data)
	}
}

// A receipt with the token of an earlier attempt is refused (exit 3) and changes
// nothing: the job's current attempt is someone else's.
func TestJobDoneWithStaleLeaseRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	first := f.claim("a", "w1")
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: first, Status: ledger.ReceiptTimeout, Worker: Worker{Holder: "w1"}}); err != nil {
		t.Fatal(err)
	}
	second := f.claim("a", "w2")
	tip := f.tip()
	_, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: first, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w1"}})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("done with the first attempt's token: %v, want a conflict", err)
	}
	if f.tip() != tip {
		t.Fatal("the refused receipt wrote to the ledger")
	}
	res, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: second, Status: ledger.ReceiptOK, Data: json.RawMessage(` {"n": 1} `), Worker: Worker{Holder: "w2"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.From != ledger.JobRunning || res.To != ledger.JobDone || res.Cascaded == nil || res.Children == nil || res.Verify != nil {
		t.Fatalf("done: %+v", res)
	}
	if ev := f.last(); ev.Type != ledger.EventJobDone || ev.Holder != "w2" || !strings.Contains(string(ev.Data), `"data":{"n":1}`) {
		t.Fatalf("event: %+v %s", ev, ev.Data)
	}
}

// Only a finished job expands; an ok receipt's children are checked and added in
// its own write.
func TestJobDoneChildren(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	lease := f.claim("a", "w1")
	kids := []ledger.JobSpec{{ID: "a1", Scope: []string{"src/"}}}
	tip := f.tip()
	_, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: lease, Status: ledger.ReceiptFailed, Children: kids, Worker: Worker{Holder: "w1"}})
	if !errors.Is(err, fault.ErrUsage) || f.tip() != tip {
		t.Fatalf("children with a failed receipt: %v, want a usage error and nothing written", err)
	}
	_, err = f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: lease, Status: ledger.ReceiptOK, Children: []ledger.JobSpec{{ID: "a1", Kind: "no kind"}}, Worker: Worker{Holder: "w1"}})
	if !errors.Is(err, fault.ErrUsage) || f.tip() != tip {
		t.Fatalf("a child with a bad kind: %v, want a usage error and nothing written", err)
	}
	res, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: lease, Status: ledger.ReceiptOK, Children: kids, Worker: Worker{Holder: "w1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Children) != 1 || res.Children[0].ID != "a1" || res.Children[0].Depth != 1 {
		t.Fatalf("children: %+v", res.Children)
	}
	want, _ := ledger.CanonicalScope([]string{"src/"})
	if got := f.load().State.Job("a1").Scope; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("child's scope %q, want canonical %q", got, want)
	}
}

// job list --ready lists only what a claim could take now.
func TestJobListReady(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a", "b")
	f.claim("a", "w1")
	all, err := f.ops.JobList(f.ctx, JobListRequest{Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	ready, err := f.ops.JobList(f.ctx, JobListRequest{Run: "r1", Ready: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Jobs) != 2 || len(ready.Jobs) != 1 || ready.Jobs[0].ID != "b" || strings.Join(ready.Ready, ",") != "b" || all.GasSpent != 1 {
		t.Fatalf("list: %+v; --ready: %+v", all, ready)
	}
}

// A reap ends only leases that ran out, recorded as job_reaped by whoever reaped.
func TestReapTimesOutExpiredLeases(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a", "b")
	lease := f.claim("a", "w1")
	f.claim("b", "w2")
	f.update(func(r *ledger.Run) { r.State.Job("a").ExpiresAt = ledger.Stamp(time.Now().UTC().Add(-time.Minute)) })
	res, err := f.ops.Reap(f.ctx, ReapRequest{Run: "r1", Holder: "reaper"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reaped) != 1 || res.Reaped[0].ID != "a" || res.Reaped[0].Lease != lease || res.Reaped[0].To != ledger.JobPending || res.Reaped[0].Cascaded == nil {
		t.Fatalf("reap: %+v", res)
	}
	if ev := f.last(); ev.Type != ledger.EventJobReaped || ev.Holder != "reaper" {
		t.Fatalf("event: %+v", ev)
	}
	if j := f.load().State.Job("b"); j.State != ledger.JobRunning {
		t.Fatalf("b's live lease was reaped: %+v", j)
	}
	tip := f.tip()
	again, err := f.ops.Reap(f.ctx, ReapRequest{Run: "r1"})
	if err != nil || len(again.Reaped) != 0 || again.Reaped == nil || f.tip() != tip {
		t.Fatalf("reap with nothing expired: %+v, %v; want nothing, and nothing written", again, err)
	}
}

// Tries counts the compare-and-swap tries of the operations' writes (the claims
// benchmark's tries/op).
func TestTriesCountsLedgerWrites(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	o := New(f.ops.Repo)
	if _, err := o.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	if n := o.Tries(); n != 1 {
		t.Fatalf("tries after one uncontended claim: %d, want 1", n)
	}
}

// A scope that matches a baseline file another job's scope matches is refused
// (exit 5), unless the request accepts the overlap.
func TestJobAddRefusesOverlappingScope(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Scope: []string{"README"}, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	_, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "b", Scope: []string{"READ*"}, Driver: d1})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "README") {
		t.Fatalf("overlapping scope: %v, want refused naming README", err)
	}
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "b", Scope: []string{"READ*"}, AllowOverlap: true, Driver: d1}); err != nil {
		t.Fatalf("overlap allowed: %v", err)
	}
}

// An ok receipt of a job with a verify runs it in the job's worktree; one that fails
// comes back as the result (the job PENDING again, attempts + 1) with a verify
// failure.
func TestJobDoneVerifyFailureComesBackWithTheResult(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Verify: "false", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	lease := f.claim("a", "w1")
	if _, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: "a", Lease: lease, Driver: Driver{Holder: "w1"}}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: "a", Lease: lease, Status: ledger.ReceiptOK, VerifyTimeout: time.Minute, Worker: Worker{Holder: "w1"}})
	if !errors.Is(err, fault.ErrVerifyFailed) || res == nil {
		t.Fatalf("done with a failing verify: %+v, %v; want the result and a verify failure", res, err)
	}
	if res.Verify == nil || res.Verify.Passed || res.Verify.Command != "false" || res.To != ledger.JobPending || res.Attempts != 1 {
		t.Fatalf("result: %+v (verify %+v)", res, res.Verify)
	}
}
