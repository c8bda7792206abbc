package ops

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// A graph run written elsewhere (nothing of it trusted here) carries a job verify and
// a run verify: neither runs, on the job's receipt, on resume's owed verify, or on
// `union --verify` (docs/contract.md §10); each path goes through trust.Gate.
func TestUntrustedNodeVerifyIsNotRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	marks := t.TempDir()
	jobMark, runMark := filepath.Join(marks, "job"), filepath.Join(marks, "run")
	h := ledger.Header{RunID: "g", Kind: ledger.KindGraph, Baseline: testenv.HexOID(f.base), Verify: "touch " + runMark, Stages: []ledger.StageDef{}}
	st := ledger.State{RunID: "g", Status: ledger.RunRunning, Stages: []ledger.StageState{},
		Jobs: []ledger.Job{{ID: "j", State: ledger.JobPending, Needs: []string{}, Verify: "touch " + jobMark}}}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin("g", "baseline", f.base)); err != nil {
		t.Fatal(err)
	}
	notRun := func(when string) {
		t.Helper()
		for _, m := range []string{jobMark, runMark} {
			if _, err := os.Stat(m); err == nil {
				t.Fatalf("%s: an untrusted verify ran (%s exists)", when, m)
			}
		}
	}
	claim, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: "j", Worker: Worker{Holder: "w1", TTL: time.Hour}})
	if err != nil || claim.Lease == nil {
		t.Fatalf("claim: %v %+v", err, claim)
	}
	if _, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "g", Node: "j", Lease: *claim.Lease, Driver: Driver{Holder: "w1"}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.ops.JobDone(f.ctx, JobDoneRequest{Run: "g", Job: "j", Lease: *claim.Lease, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w1"}})
	if !errors.Is(err, fault.ErrRefused) || !errors.Is(err, resume.ErrUntrusted) {
		t.Fatalf("job done with an untrusted verify: %v; want refused, not trusted here", err)
	}
	notRun("job done")
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "g", Holder: "d2"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.UntrustedJobVerifies, "j") {
		t.Fatalf("resume: the untrusted owed verify is not reported left owed: %+v", res.UntrustedJobVerifies)
	}
	notRun("resume")
	if j := f.ops.mustLoad(t, "g").State.Job("j"); j == nil || !j.VerifyOwed {
		t.Fatalf("the untrusted verify is no longer owed: %+v", j)
	}
	_, err = f.ops.Union(f.ctx, UnionRequest{Run: "g", Nodes: []string{}, Verify: true, Driver: Driver{Holder: "d2"}})
	if !errors.Is(err, resume.ErrUntrusted) {
		t.Fatalf("union --verify with an untrusted run verify: %v; want refused, not trusted here", err)
	}
	notRun("union --verify")
}

func (o *Ops) mustLoad(t *testing.T, run string) *ledger.Run {
	t.Helper()
	r, err := o.Reader().Load(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
