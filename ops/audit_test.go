package ops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// refs lists every ref of the repository with its object: what a change of the
// ledger, a pin or a branch shows in.
func (f *wtFixture) refs() string {
	f.t.Helper()
	return f.git(f.dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// finished gives r1 a worktree for node a, with uncommitted work in it, and
// finishes r1: the worktree is what gc cleans up.
func (f *wtFixture) finished() *WorktreeAddResult {
	f.t.Helper()
	wt := f.add("a", "")
	f.write(wt.Path, "notes.txt", "unsaved work\n")
	if _, err := f.ops.Finish(f.ctx, FinishRequest{Run: "r1", Status: ledger.RunCompleted, Driver: d1}); err != nil {
		f.t.Fatal(err)
	}
	return wt
}

// breakIndex corrupts the index of the worktree at path: its status cannot be read,
// its HEAD can (an audit check that fails, not a broken worktree).
func (f *wtFixture) breakIndex(path string) {
	f.t.Helper()
	index := strings.TrimSpace(f.git(path, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	if err := os.WriteFile(index, []byte("not an index"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// A running run with no worktree needs no attention: no error, and a result whose
// lists are empty, not null.
func TestAuditOfLiveRunNeedsNoAttention(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	res, err := f.ops.Audit(f.ctx, AuditRequest{})
	if err != nil {
		t.Fatalf("audit: %v, want no error", err)
	}
	if res.Attention || res.Incomplete != nil || res.Worktrees == nil || len(res.Refs) == 0 {
		t.Fatalf("audit: %+v", res)
	}
}

// The worktree of a finished run is orphaned: the report comes back with an
// attention error (exit 10).
func TestAuditOfOrphanedWorktreeNeedsAttention(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	wt := f.finished()
	res, err := f.ops.Audit(f.ctx, AuditRequest{})
	if !errors.Is(err, fault.ErrAttention) {
		t.Fatalf("audit: %v, want an attention error", err)
	}
	if res == nil || !res.Attention || res.Incomplete != nil {
		t.Fatalf("audit: %+v, want the report with attention set", res)
	}
	var labels []string
	for _, w := range res.Worktrees {
		if w.Path == wt.Path {
			labels = w.Labels
		}
	}
	if !audit.Has(labels, audit.Orphaned) {
		t.Fatalf("labels of %s: %v, want orphaned", wt.Path, labels)
	}
}

// A check that failed leaves the report incomplete: it cannot say all is well, so it
// comes back with an attention error even though nothing it saw needs attention, and
// the failure in Incomplete for the front end to warn of. gc's plan warns of the
// same failure and plans the rest.
func TestAuditWithFailedCheckNeedsAttention(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	wt := f.add("a", "")
	f.breakIndex(wt.Path)
	res, err := f.ops.Audit(f.ctx, AuditRequest{})
	if !errors.Is(err, fault.ErrAttention) {
		t.Fatalf("audit: %v, want an attention error", err)
	}
	if res == nil || res.Attention || res.Incomplete == nil || !strings.Contains(res.Incomplete.Error(), wt.Path) {
		t.Fatalf("audit: %+v, want the report, attention unset, the failed check in Incomplete", res)
	}
	gc, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0))})
	if err != nil {
		t.Fatalf("gc: %v, want the plan's audit failure as a warning only", err)
	}
	if gc.Incomplete == nil || !strings.Contains(gc.Incomplete.Error(), wt.Path) {
		t.Fatalf("gc: %+v, want the failed check in Incomplete", gc)
	}
}

func TestGCNegativeBeforeRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	f.finished()
	refs := f.refs()
	for _, apply := range []bool{false, true} {
		res, err := f.ops.GC(f.ctx, GCRequest{Before: new(-time.Second), Apply: apply})
		if !errors.Is(err, fault.ErrUsage) || res != nil {
			t.Fatalf("gc --before -1s (apply %v): %+v, %v, want a usage error", apply, res, err)
		}
	}
	if again := f.refs(); again != refs {
		t.Fatalf("a refused gc moved refs:\n%s---\n%s", refs, again)
	}
}

// With nothing to clean up, gc's actions are [], never null, and the document's keys
// are in the order gc has always printed them.
func TestGCWithNothingToDoIsEmptyList(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	for _, apply := range []bool{false, true} {
		res, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0)), Apply: apply})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"actions":[],"applied":false,"unreachable_bytes":0}`
		if apply {
			want = `{"actions":[],"applied":true,"unreachable_bytes":0}`
		}
		if string(b) != want {
			t.Fatalf("gc (apply %v): %s, want %s", apply, b, want)
		}
	}
}

// A plan changes nothing; the same gc with Apply does each step it planned.
func TestGCPlanChangesNothingApplyDoes(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	wt := f.finished()
	refs := f.refs()
	plan, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0))})
	if err != nil {
		t.Fatal(err)
	}
	kinds := func(acts []audit.Action) string {
		var k []string
		for _, a := range acts {
			k = append(k, a.Kind)
		}
		return strings.Join(k, ",")
	}
	if plan.Applied || !strings.HasPrefix(kinds(plan.Actions), audit.RemoveWorktree+",") || !strings.Contains(kinds(plan.Actions), audit.DropRun) {
		t.Fatalf("plan: %+v, want the worktree removed and the run dropped", plan)
	}
	for _, a := range plan.Actions {
		if a.Done {
			t.Fatalf("plan: %+v is done", a)
		}
	}
	if again := f.refs(); again != refs {
		t.Fatalf("the plan moved refs:\n%s---\n%s", refs, again)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "notes.txt")); err != nil {
		t.Fatalf("the plan touched the worktree: %v", err)
	}

	res, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0)), Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || kinds(res.Actions) != kinds(plan.Actions) {
		t.Fatalf("apply: %+v, want the plan's steps %s", res, kinds(plan.Actions))
	}
	for _, a := range res.Actions {
		if !a.Done {
			t.Fatalf("apply: %+v not done", a)
		}
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if _, err := f.ops.Reader().Load(f.ctx, "r1"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("load r1 after gc: %v, want it dropped", err)
	}
}

// Before counts back from the request's Now: a run finished just now is kept by
// --before 1h, and dropped by the same gc two hours later.
func TestGCBeforeCountsFromNow(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	f.finished()
	drops := func(now time.Time) bool {
		res, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Hour), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Actions {
			if a.Kind == audit.DropRun && a.RunID == "r1" {
				return true
			}
		}
		return false
	}
	if drops(time.Time{}) {
		t.Fatal("gc --before 1h now drops r1, finished just now")
	}
	if !drops(time.Now().Add(2 * time.Hour)) {
		t.Fatal("gc --before 1h two hours later keeps r1")
	}
}
