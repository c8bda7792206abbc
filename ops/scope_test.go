package ops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/resume"
)

// doneJob adds job with scope, claims it as w1, gives it a worktree, commits files
// there and reports it done; it returns the worktree's path.
func (f *wtFixture) doneJob(job string, scope []string, files ...string) string {
	f.t.Helper()
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: job, Scope: scope, Driver: Driver{Holder: "d1"}}); err != nil {
		f.t.Fatal(err)
	}
	lease := f.claim(job, "w1")
	wt, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "r1", Node: job, Lease: lease, Driver: Driver{Holder: "w1"}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.commit(wt.Path, files...)
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "r1", Job: job, Lease: lease, Status: gitstate.ReceiptOK, Worker: Worker{Holder: "w1"}}); err != nil {
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
	f := newWTFixture(t, gitstate.KindGraph)
	api := f.doneJob("api", []string{"api/**"}, "api/a.go")
	f.commit(api, "ui/sneaked.go") // after the receipt: union is the last gate
	f.doneJob("ui", []string{"ui/**"}, "ui/u.go")
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
	var data struct {
		Allowed    map[string][]string `json:"allowed_outside_scope"`
		ApprovedBy string              `json:"approved_by"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Type != gitstate.EventUnionBuilt || !reflect.DeepEqual(data.Allowed, want) || data.ApprovedBy != "pat" {
		t.Fatalf("the union's event: %s %s, want the allowance and who approved it", ev.Type, ev.Data)
	}
}
