package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/audit"
	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// run starts single run id (one stage) at the fixture's baseline.
func (f *wtFixture) run(id string) {
	f.t.Helper()
	h := ledger.Header{RunID: id, Kind: ledger.KindSingle, Baseline: testenv.HexOID(f.base), Stages: []ledger.StageDef{{Name: "main"}}}
	st := ledger.State{RunID: id, Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "main", Status: ledger.StagePending}}}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin(id, "baseline", f.base)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *wtFixture) finish(id string) {
	f.t.Helper()
	if _, err := f.ops.Finish(f.ctx, FinishRequest{Run: id, Status: ledger.RunCompleted, Driver: d1}); err != nil {
		f.t.Fatal(err)
	}
}

// planned lists the plan's steps of kind, as "run" or "ref" words.
func (f *wtFixture) planned(req GCRequest, kind string) (string, *GCResult) {
	f.t.Helper()
	res, err := f.ops.GC(f.ctx, req)
	if err != nil {
		f.t.Fatal(err)
	}
	var got []string
	for _, a := range res.Actions {
		if a.Kind == kind {
			got = append(got, a.RunID)
		}
	}
	return strings.Join(got, ","), res
}

// --keep-last N drops the finished runs beyond the newest N, and replaces --before's
// default (not a --before given); atlas.gc.keepLast is its default.
func TestGCKeepLast(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	f.run("r2")
	f.run("r3")
	for _, id := range []string{"r1", "r2", "r3"} {
		f.finish(id)
	}
	one := 1
	byDefault := GCRequest{}
	if got, _ := f.planned(byDefault, audit.DropRun); got != "" {
		t.Fatalf("gc by default drops %s, all finished just now", got)
	}
	withKeep := byDefault
	withKeep.KeepLast = &one
	if got, _ := f.planned(withKeep, audit.DropRun); got != "r1,r2" {
		t.Fatalf("gc --keep-last 1 drops %q, want r1,r2", got)
	}
	given := GCRequest{Before: new(time.Hour), KeepLast: &one}
	if got, _ := f.planned(given, audit.DropRun); got != "" {
		t.Fatalf("gc --keep-last 1 --before 1h drops %q, runs finished just now", got)
	}
	f.git(f.dir, "config", GCKeepLastKey, "2")
	if got, _ := f.planned(byDefault, audit.DropRun); got != "r1" {
		t.Fatalf("gc with atlas.gc.keepLast 2 drops %q, want r1", got)
	}
	f.git(f.dir, "config", GCKeepLastKey, "x")
	if _, err := f.ops.GC(f.ctx, byDefault); err == nil || !strings.Contains(err.Error(), GCKeepLastKey) {
		t.Fatalf("gc with a bad atlas.gc.keepLast: %v", err)
	}
}

// --recoveries --max-size drops a finished run's snapshots oldest first until the
// bytes only snapshots hold fit, and says how many bytes that leaves unreachable;
// --apply does exactly that.
func TestGCMaxSize(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	var refs []string
	for i, content := range []string{noise(6000), noise(6001)[1:] + "x"} {
		wt := f.add("a", "")
		f.write(wt.Path, "work.bin", content)
		res, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "r1", Node: "a", Driver: d1})
		if err != nil || res.Snapshot == nil {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		refs = append(refs, res.Snapshot.Ref)
	}
	f.finish("r1")
	keep := GCRequest{Before: new(DefaultGCBefore), Recoveries: true}
	if got, _ := f.planned(keep, audit.DeleteRef); got != "" {
		t.Fatalf("gc --recoveries without a budget deletes %s", got)
	}
	budget := keep
	budget.MaxSize = 9000
	_, plan := f.planned(budget, audit.DeleteRef)
	var deleted []string
	for _, a := range plan.Actions {
		if a.Kind == audit.DeleteRef {
			deleted = append(deleted, a.Ref)
		}
	}
	if strings.Join(deleted, " ") != refs[0] || plan.UnreachableBytes < 6000 {
		t.Fatalf("gc --max-size 9000 plans %v, %d bytes unreachable; want the oldest %s only, 6000 bytes or more", deleted, plan.UnreachableBytes, refs[0])
	}
	budget.Apply = true
	res, err := f.ops.GC(f.ctx, budget)
	if err != nil {
		t.Fatal(err)
	}
	if res.UnreachableBytes < 6000 || !strings.Contains(f.refs(), refs[1]) || strings.Contains(f.refs(), refs[0]) {
		t.Fatalf("gc --max-size --apply: %d bytes unreachable; refs\n%s", res.UnreachableBytes, f.refs())
	}
}

// The bytes gc leaves unreachable are informational: when git cannot walk every ref
// (a ref that names no object, which `rev-list --all` refuses), gc still does its
// plan and says the count is unknown, instead of failing after its removals. A
// worktree HEAD that names no object is walked past (internal/git's
// TestUsageWalksPastABrokenWorktreeHead).
func TestGCDoneWhenUnreachableBytesCannotBeMeasured(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	f.finish("r1")
	broken := filepath.Join(f.ops.Repo.CommonDir, "refs", "heads", "broken")
	if err := os.WriteFile(broken, []byte(strings.Repeat("1", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.GC(f.ctx, GCRequest{Before: new(time.Duration(0)), Apply: true})
	if err != nil {
		t.Fatalf("gc --apply failed on the measurement: %v", err)
	}
	dropped := false
	for _, a := range res.Actions {
		dropped = dropped || (a.Kind == audit.DropRun && a.Done)
	}
	if !dropped || res.UnreachableUnknown == "" {
		t.Fatalf("gc --apply: dropped %v, unreachable_unknown %q", dropped, res.UnreachableUnknown)
	}
}
