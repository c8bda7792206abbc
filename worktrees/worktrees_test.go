package worktrees

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// fixture is a repository with one commit and a run started at it.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	repo  *git.Repository
	store *gitstate.Store
	base  string
}

func newFixture(t *testing.T, kind string) *fixture {
	t.Helper()
	dir := t.TempDir() // git's environment is TestMain's
	f := &fixture{t: t, ctx: context.Background(), dir: filepath.Join(dir, "repo")}
	f.git(dir, "init", "-q", "-b", "main", f.dir)
	f.write(f.dir, "README", "hello\n")
	f.git(f.dir, "add", "-A")
	f.git(f.dir, "commit", "-q", "-m", "initial")
	repo, err := git.Open(f.ctx, f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.repo, f.store = repo, gitstate.New(repo)
	f.base = strings.TrimSpace(f.git(f.dir, "rev-parse", "HEAD"))
	h := ledger.Header{RunID: "r1", Kind: kind, Baseline: testenv.HexOID(f.base), Stages: []ledger.StageDef{}}
	st := ledger.State{RunID: "r1", Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	if _, err := f.store.Create(f.ctx, h, st, ledger.Event{Type: "run_started"}, baseline.Pin("r1", "baseline", f.base)); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	out, err := testenv.GitErr(dir, "", args...)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) write(dir, name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// node gives node a worktree and, with a file, commits it there.
func (f *fixture) node(node, file string) ledger.WorktreeRec {
	f.t.Helper()
	res, err := Add(f.ctx, f.store, "r1", node, AddOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if file != "" {
		f.write(res.Rec.Path, file, node+"\n")
		f.git(res.Rec.Path, "add", file)
		f.git(res.Rec.Path, "commit", "-q", "-m", node)
	}
	return res.Rec
}

func (f *fixture) load() *ledger.Run {
	f.t.Helper()
	r, err := f.store.Load(f.ctx, "r1")
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestUnionOfGraphRunTakesDoneJobsInDependencyOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindGraph)
	for _, n := range []string{"z", "a", "m", "p"} {
		f.node(n, n+".txt")
	}
	// a needs z; p is not done; q is done but has no branch.
	_, err := f.store.Update(f.ctx, "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		r.State.Jobs = []ledger.Job{
			{ID: "a", State: ledger.JobDone, Needs: []string{"z"}},
			{ID: "m", State: ledger.JobDone, Needs: []string{}},
			{ID: "p", State: ledger.JobPending, Needs: []string{}},
			{ID: "q", State: ledger.JobDone, Needs: []string{"m"}},
			{ID: "z", State: ledger.JobDone, Needs: []string{}},
		}
		return &gitstate.Change{Event: ledger.Event{Type: "test_jobs"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m", "z", "a"}; !reflect.DeepEqual(res.Union.Integrated, want) {
		t.Errorf("integrated %v, want %v", res.Union.Integrated, want)
	}
	if want := []string{"q"}; !reflect.DeepEqual(res.Missing, want) {
		t.Errorf("missing %v, want %v", res.Missing, want)
	}
	subjects := f.git(f.dir, "log", "--first-parent", "--reverse", "--format=%s", "refs/heads/atlas/r1/union", "^"+f.base)
	if !strings.Contains(subjects, "node m\n") || strings.Index(subjects, "node z") > strings.Index(subjects, "node a") || strings.Index(subjects, "node m") > strings.Index(subjects, "node z") {
		t.Errorf("union history is not in dependency order:\n%s", subjects)
	}
	for _, file := range []string{"m.txt", "z.txt", "a.txt"} {
		if _, err := os.Stat(filepath.Join(res.Rec.Path, file)); err != nil {
			t.Errorf("union worktree lacks %s: %v", file, err)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Rec.Path, "p.txt")); err == nil {
		t.Error("the union integrated a job that is not done")
	}

	// The same inputs give the same commits: nothing new, nothing recorded.
	seq := f.load().State.Seq
	again, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || again.Union.Head != res.Union.Head {
		t.Errorf("rebuild changed the union: %+v -> %+v", res.Union, again.Union)
	}
	if got := f.load().State.Seq; got != seq {
		t.Errorf("rebuild wrote %d events", got-seq)
	}
	if head, _, _, err := integrate(f.ctx, f.repo, "r1", testenv.HexOID(f.base), []part{{"m", f.tip("m")}, {"z", f.tip("z")}, {"a", f.tip("a")}}, nil); err != nil || head != res.Union.Head.String() {
		t.Errorf("integrate again = %s, %v; want %s", head, err, res.Union.Head)
	}
}

func (f *fixture) tip(node string) string {
	return strings.TrimSpace(f.git(f.dir, "rev-parse", "refs/heads/"+BranchFor("r1", node)))
}

func TestUnionMovesAnExistingCleanWorktreeOntoItsBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	f.node("a", "a.txt")
	first, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.node("b", "b.txt")
	second, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Changed || second.Union.Head == first.Union.Head || second.Rec.Path != first.Rec.Path {
		t.Fatalf("second build: %+v", second)
	}
	wt := f.git(second.Rec.Path, "status", "--porcelain=v2", "--branch")
	if !strings.Contains(wt, "# branch.oid "+second.Union.Head.String()) || !strings.Contains(wt, "# branch.head atlas/r1/union") || strings.Contains(wt, "\n1 ") {
		t.Errorf("union worktree not clean at the new head on its branch:\n%s", wt)
	}
	if r := f.load(); r.State.Union.Head != second.Union.Head || r.State.Worktree(Union).Head != second.Union.Head {
		t.Errorf("ledger: union %+v, worktree %+v", r.State.Union, r.State.Worktree(Union))
	}
}

func TestInspectAllReportsEveryFailureAndTheRest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	good := f.node("good", "g.txt")
	also := f.node("also", "")
	f.write(also.Path, "untracked.txt", "x\n")
	gone := f.node("gone", "")
	if err := os.RemoveAll(gone.Path); err != nil {
		t.Fatal(err)
	}
	bad1, bad2 := good, good
	bad1.Baseline = testenv.HexOID(strings.Repeat("1", 40)) // no such commit: counting commits ahead fails
	bad2.Baseline = testenv.HexOID(strings.Repeat("2", 40))
	recs := []ledger.WorktreeRec{bad1, good, also, bad2, gone}

	infos, errs, err := InspectAll(f.ctx, f.repo, recs)
	var merr *multierror.Error
	if !errors.As(err, &merr) || len(merr.Errors) != 2 {
		t.Fatalf("want both failures in a multierror, got %v", err)
	}
	if errs[0] == nil || errs[3] == nil || errs[1] != nil || errs[2] != nil || errs[4] != nil {
		t.Errorf("per-worktree errors: %v", errs)
	}
	if !strings.Contains(merr.Errors[0].Error(), "1111111") || !strings.Contains(merr.Errors[1].Error(), "2222222") {
		t.Errorf("failures not in input order: %v", merr.Errors)
	}
	if in := infos[1]; !in.Exists || in.Dirty || in.Ahead != 1 || !in.Locked || !in.OnBranch(good) {
		t.Errorf("good: %+v", in)
	}
	if in := infos[2]; !in.Exists || !in.Dirty || in.Ahead != 0 {
		t.Errorf("also: %+v", in)
	}
	if in := infos[4]; !in.Missing || in.Exists || !in.Locked || !in.Registered {
		t.Errorf("gone: %+v", in)
	}
}

func TestInspectLeavesTheIndexAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	rec := f.node("a", "")
	// A file whose stat data no longer matches the index: a plain `git status`
	// would refresh the index and rewrite it.
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(rec.Path, "README"), past, past); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(strings.TrimSpace(f.git(rec.Path, "rev-parse", "--absolute-git-dir")), "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	stBefore, _ := os.Stat(index)
	info, err := Inspect(f.ctx, f.repo, rec)
	if err != nil {
		t.Fatal(err)
	}
	if info.Dirty {
		t.Error("a touched but unchanged file is not a change")
	}
	after, _ := os.ReadFile(index)
	stAfter, _ := os.Stat(index)
	if !bytes.Equal(before, after) || !stBefore.ModTime().Equal(stAfter.ModTime()) {
		t.Error("inspecting the worktree rewrote its index")
	}
}

func TestRecreateResetsTheBranchOnlyFromThePreservedTip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	rec := f.node("a", "a.txt")
	tip := f.tip("a")

	// Recreate comes right after its caller removed the worktree: one that exists was
	// made again by another process meanwhile, a conflict (exit 3), never overwritten.
	if _, err := Recreate(f.ctx, f.store, "r1", "a", tip); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("recreate over an existing worktree: %v", err)
	}
	m, err := Own(f.ctx, f.repo, "r1", rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Recreate(f.ctx, f.store, "r1", "a", f.base); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("recreate from a tip that is not the branch's: %v", err)
	}
	if f.tip("a") != tip || exists(rec.Path) {
		t.Fatal("a refused recreate changed something")
	}
	got, err := Recreate(f.ctx, f.store, "r1", "a", tip)
	if err != nil {
		t.Fatal(err)
	}
	if got.Head.String() != f.base || f.tip("a") != f.base {
		t.Errorf("branch %s, record head %s; want the baseline %s", f.tip("a"), got.Head, f.base)
	}
	info, err := Inspect(f.ctx, f.repo, got)
	if err != nil || !info.Exists || info.Dirty || info.Head != f.base || !info.OnBranch(got) || !info.Locked {
		t.Errorf("recreated worktree: %+v, %v", info, err)
	}
	events, err := f.store.Log(f.ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	data, err := ledger.DecodeData[ledger.WorktreeAddedData](&last)
	if err != nil || data.ResetFrom.String() != tip || !data.Recreated {
		t.Errorf("last event: %s %s", last.Type, last.Data)
	}
}

func TestConcurrentAddsMakeOneWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		// One repository per goroutine, as separate processes would have: the
		// in-process object store is not safe for concurrent use.
		repo, err := git.Open(f.ctx, f.dir)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer wg.Done()
			_, errs[i] = Add(f.ctx, gitstate.New(repo), "r1", "a", AddOptions{})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, fault.ErrConflict):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok == 0 {
		t.Fatal("no Add succeeded")
	}
	r := f.load()
	if len(r.State.Worktrees) != 1 {
		t.Fatalf("%d records", len(r.State.Worktrees))
	}
	if res, err := Add(f.ctx, f.store, "r1", "a", AddOptions{}); err != nil || res.Created || res.Recreated {
		t.Errorf("after the race, Add is a no-op: %+v, %v", res, err)
	}
}

// union --force never drops a person's commit on the union branch: before the
// branch moves away from a tip git-atlas did not build, that tip is kept under a
// recovery ref, in the same transaction, and the result and the event name it.
func TestUnionForceKeepsTheCommitItMovesAwayFrom(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ledger.KindSingle)
	f.node("a", "a.txt")
	first, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.write(first.Rec.Path, "mine.txt", "a person's work\n")
	f.git(first.Rec.Path, "add", "mine.txt")
	f.git(first.Rec.Path, "commit", "-q", "-m", "mine")
	mine := strings.TrimSpace(f.git(f.dir, "rev-parse", "refs/heads/atlas/r1/union"))
	f.node("b", "b.txt")
	if _, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{}); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), mine) {
		t.Fatalf("union over a person's commit: %v, want a refusal naming it", err)
	}
	forced, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := KeptRef("r1", mine)
	if forced.Kept != ref || forced.KeptCommit != mine {
		t.Fatalf("union --force kept %q %q, want %s at %s", forced.Kept, forced.KeptCommit, ref, mine)
	}
	// Built over git-atlas's own union: nothing to keep.
	if again, err := BuildUnion(f.ctx, f.store, "r1", UnionOptions{Force: true}); err != nil || again.Kept != "" {
		t.Fatalf("a rebuild over git-atlas's own union: %+v, %v", again, err)
	}
	if got := strings.TrimSpace(f.git(f.dir, "rev-parse", ref)); got != mine {
		t.Fatalf("%s = %s, want the person's commit %s", ref, got, mine)
	}
	if got := strings.TrimSpace(f.git(f.dir, "rev-parse", "refs/heads/atlas/r1/union")); got == mine {
		t.Fatal("the union branch did not move")
	}
	var found bool
	for _, e := range f.events() {
		if e.Type == ledger.EventUnionBuilt && strings.Contains(string(e.Data), `"kept":{"commit":"`+mine+`","ref":"`+ref+`"}`) {
			found = true
		}
	}
	if !found {
		t.Fatal("no union_built event names the kept commit")
	}
}

func (f *fixture) events() []ledger.Event {
	f.t.Helper()
	log, err := f.store.Log(f.ctx, "r1")
	if err != nil {
		f.t.Fatal(err)
	}
	return log
}
