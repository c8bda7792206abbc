package ops

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// doneJob adds the job req names (to r1 unless req.Run), claims it as w1, gives it a
// worktree, commits files there and reports it done; it returns the worktree's path.
func (f *wtFixture) doneJob(req JobAddRequest, files ...string) string {
	f.t.Helper()
	if req.Run == "" {
		req.Run = "r1"
	}
	req.Driver = Driver{Holder: "d1"}
	if _, err := f.ops.JobAdd(f.ctx, req); err != nil {
		f.t.Fatal(err)
	}
	claim, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: req.Run, Job: req.Job, Worker: Worker{Holder: "w1", TTL: time.Hour}})
	if err != nil || claim.Lease == nil {
		f.t.Fatalf("claim of %s: %+v, %v", req.Job, claim, err)
	}
	lease := *claim.Lease
	wt, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: req.Run, Node: req.Job, Lease: lease, Driver: Driver{Holder: "w1"}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.commit(wt.Path, files...)
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: req.Run, Job: req.Job, Lease: lease, Status: ledger.ReceiptOK, Worker: Worker{Holder: "w1"}}); err != nil {
		f.t.Fatal(err)
	}
	return wt.Path
}

// commit writes each file (its directories made) in dir and commits them.
func (f *wtFixture) commit(dir string, files ...string) {
	f.t.Helper()
	for _, name := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			f.t.Fatal(err)
		}
		f.write(dir, name, name+"\n")
	}
	f.git(dir, "add", "-A")
	f.git(dir, "commit", "-q", "-m", "work")
}

// docs/contract.md §5.3: union leaves out a DONE job whose branch changed paths
// outside its scope (here committed after its receipt), reports it with the paths,
// and next_action stops on it instead of looping on integrate; only a person's
// --allow-outside-scope lets it in, recorded with who approved it.
func TestUnionLeavesOutJobsOutsideScope(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	api := f.doneJob(JobAddRequest{Job: "api", Scope: []string{"api/**"}}, "api/a.go")
	f.commit(api, "ui/sneaked.go") // after the receipt: union is the last gate
	f.doneJob(JobAddRequest{Job: "ui", Scope: []string{"ui/**"}}, "ui/u.go")
	d1 := Driver{Holder: "d1"}

	u, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"api": {"ui/sneaked.go"}}
	if !reflect.DeepEqual(u.Integrated, []string{"ui"}) || !reflect.DeepEqual(u.OutsideScope, want) || u.AllowedOutsideScope != nil {
		t.Fatalf("union: integrated %v, outside %v, allowed %v; want ui integrated and api left out", u.Integrated, u.OutsideScope, u.AllowedOutsideScope)
	}
	if rec := f.load().State.Union; rec == nil || !reflect.DeepEqual(rec.OutsideScope, want) {
		t.Fatalf("recorded union: %+v", rec)
	}
	plan, err := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "r1", Holder: "d1"})
	if err != nil || plan.NextAction.Action != resume.NextStop || !reflect.DeepEqual(plan.NextAction.Jobs, []string{"api"}) {
		t.Fatalf("plan: %+v, %v; want stop naming api", plan.NextAction, err)
	}

	before := f.tip()
	for _, tc := range []struct {
		allow  []string
		person Person
		kind   error
	}{
		{[]string{"api"}, Person{}, fault.ErrRefused},                               // headless, nobody named
		{[]string{"api"}, Person{Via: ViaMCP, ApprovedBy: "pat"}, fault.ErrRefused}, // never over MCP
		{[]string{"nope"}, Person{ApprovedBy: "pat"}, fault.ErrNotFound},            // no such job
	} {
		if _, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1, AllowOutsideScope: tc.allow, Person: tc.person}); !errors.Is(err, tc.kind) {
			t.Errorf("union allowing %v as %+v: %v, want %v", tc.allow, tc.person, err, tc.kind)
		}
	}
	if f.tip() != before {
		t.Fatal("a refused union wrote")
	}

	u, err = f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1, AllowOutsideScope: []string{"api"}, Person: Person{ApprovedBy: "pat"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(u.Integrated, []string{"api", "ui"}) || len(u.OutsideScope) != 0 || !reflect.DeepEqual(u.AllowedOutsideScope, want) {
		t.Fatalf("allowed union: integrated %v, outside %v, allowed %v", u.Integrated, u.OutsideScope, u.AllowedOutsideScope)
	}
	ev := f.last()
	if data, err := ledger.DecodeData[ledger.UnionBuiltData](&ev); err != nil || !reflect.DeepEqual(data.AllowedOutsideScope, want) || data.ApprovedBy != "pat" {
		t.Fatalf("the union's event: %s %s, want the allowance and who approved it", ev.Type, ev.Data)
	}
}

// docs/contract.md §5.3: `transition … passed` of a stage whose work changed paths
// outside the stage's scope is refused (exit 5, the paths named, nothing written),
// in its worktree; only a person's --allow-outside-scope accepts it, recorded with
// who approved it. A stage without a worktree is not judged by the user's checkout.
func TestStagePassedRefusesChangesOutsideScope(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	d1 := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Driver: d1, Stages: []ledger.StageDef{
		{Name: "code", Scope: []string{"src/**"}}, {Name: "docs", Scope: []string{"docs/**"}}}}); err != nil {
		t.Fatal(err)
	}
	wt, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "s", Node: "code", Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	tip := func() string { return f.tipOf("s") }
	passed := func(stage string, allow bool, p Person) error {
		_, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: stage, Status: ledger.StagePassed, Driver: d1, AllowOutsideScope: allow, Person: p})
		return err
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: "code", Status: ledger.StageDispatched, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	f.commit(wt.Path, "src/a.go", "ui/b.go")
	f.write(wt.Path, "notes.txt", "uncommitted\n")
	before := tip()
	err = passed("code", false, Person{})
	var fe *fault.Error
	if !errors.As(err, &fe) || !errors.Is(fe.Kind, fault.ErrRefused) || !strings.Contains(err.Error(), "notes.txt, ui/b.go") || strings.Contains(err.Error(), "src/a.go") || !strings.Contains(fe.Hint, "allow_outside_scope") {
		t.Fatalf("passed with ui/b.go and notes.txt outside src/**: %v; want refused naming them and the flag", err)
	}
	if err := passed("code", true, Person{}); !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("--allow-outside-scope headless, naming nobody: %v, want refused", err)
	}
	if err := passed("code", true, Person{Via: ViaMCP, ApprovedBy: "pat"}); !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("--allow-outside-scope over MCP: %v, want refused", err)
	}
	if tip() != before {
		t.Fatal("a refused report wrote")
	}
	if err := passed("code", true, Person{ApprovedBy: "pat"}); err != nil {
		t.Fatalf("accepted by pat: %v", err)
	}
	log, err := f.ops.Reader().Log(f.ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := ledger.DecodeData[ledger.StageTransitionData](&log[len(log)-1]); err != nil || !reflect.DeepEqual(data.AllowedOutsideScope, []string{"notes.txt", "ui/b.go"}) || data.ApprovedBy != "pat" {
		t.Fatalf("the passed event: %s, want the paths accepted and who approved them", log[len(log)-1].Data)
	}

	// A stage without a worktree ran in the user's checkout, whose changes git-atlas
	// cannot tell from the user's own: it is not judged by them (a scope is a node's
	// contract), and the report is accepted.
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: "code", Status: ledger.StageCompleted, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: "docs", Status: ledger.StageDispatched, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	f.write(f.dir, "stray.txt", "the user's own, untracked\n")
	if err := passed("docs", false, Person{}); err != nil {
		t.Fatalf("passed, a stage without a worktree, the user's file in the checkout: %v", err)
	}
}

// docs/contract.md §5.3: finish records the verdict it finished with and the jobs its
// union left out for their scope, in run_finished and in its result: an unverified
// verdict is said, not hidden.
func TestFinishRecordsVerdictAndScope(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	d1 := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Criteria: []string{"works"}, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	wt := f.doneJob(JobAddRequest{Run: "g", Job: "a", Scope: []string{"a/**"}, Criteria: []string{"works"}}, "a/x.go")
	f.commit(wt, "b/y.go")
	if _, err := f.ops.Union(f.ctx, UnionRequest{Run: "g", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.Finish(f.ctx, FinishRequest{Run: "g", Status: ledger.RunCompleted, Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"b/y.go"}}
	if res.Verdict == nil || res.Verdict.Verdict != ledger.VerdictUnverified || !reflect.DeepEqual(res.OutsideScope, want) {
		t.Fatalf("finish: verdict %+v, outside %v", res.Verdict, res.OutsideScope)
	}
	log, err := f.ops.Reader().Log(f.ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	ev := log[len(log)-1]
	if data, err := ledger.DecodeData[ledger.RunFinishedData](&ev); err != nil || data.Verdict == nil ||
		data.Verdict.Verdict != ledger.VerdictUnverified || !reflect.DeepEqual(data.Verdict.Unverified, []string{"works"}) || !reflect.DeepEqual(data.OutsideScope, want) {
		t.Fatalf("run_finished: %s %s, want the verdict and the job left out", ev.Type, ev.Data)
	}
}

// docs/contract.md §5.3: resume's verify-first does not pass a stage whose work
// changed paths outside its scope: it says so and leaves the stage in flight, for the
// driver's passed report (refused with the paths) or a person.
func TestResumeDoesNotPassWorkOutsideScope(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "v", Stages: []ledger.StageDef{{Name: "code", Scope: []string{"src/**"}}}, Verify: "true", VerifySafe: true, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	wt, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "v", Node: "code", Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	f.commit(wt.Path, "src/a.go", "ui/b.go")
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "v", Holder: "d2", TakeOver: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verify != nil || !strings.Contains(res.VerifySkipped, "outside its scope: ui/b.go;") {
		t.Fatalf("resume: verify %+v, skipped %q; want it held for ui/b.go", res.Verify, res.VerifySkipped)
	}
	r, err := f.ops.Reader().Load(f.ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, st, _ := r.Stage("code"); st.Status != ledger.StageDispatched {
		t.Fatalf("stage code is %s, want it left dispatched", st.Status)
	}
}
