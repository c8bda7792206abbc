package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// Issue 36.1: a run's setup runs in each new worktree with the node's variables, its
// outcome is recorded (worktree_setup) and shown; a failed one leaves the worktree
// not_ready, next_action names the retry, and `worktree setup` runs it again.
func TestSetupRunsInEachNewWorktree(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	setup := `printf '%s|%s|%s|%s|%s' "$ATLAS_RUN" "$ATLAS_NODE" "$ATLAS_WORKTREE" "$ATLAS_PORT" "$ATLAS_PORTS" > env.out; test -e go-ahead`
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Setup: setup, Ports: 2, Driver: d}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "s", Node: "code", Driver: d})
	if !errors.Is(err, fault.ErrVerifyFailed) || res == nil || res.Setup == nil || res.Setup.Outcome != ledger.SetupFailed {
		t.Fatalf("a failing setup: %+v, %v; want outcome failed and exit 6", res, err)
	}
	if len(res.Ports) != 2 || res.Ports[1] != res.Ports[0]+1 {
		t.Fatalf("ports %v: want a block of 2", res.Ports)
	}
	got, _ := os.ReadFile(filepath.Join(res.Path, "env.out"))
	want := "s|code|" + res.Path + "|" + itoa(res.Ports[0]) + "|" + itoa(res.Ports[0]) + " " + itoa(res.Ports[1])
	if string(got) != want {
		t.Errorf("setup environment %q, want %q", got, want)
	}
	list, err := f.ops.WorktreeList(f.ctx, WorktreeListRequest{Run: "s"})
	if err != nil || len(list.Worktrees) != 1 || list.Worktrees[0].State != WorktreeNotReady {
		t.Fatalf("list after a failed setup: %+v, %v", list, err)
	}
	r := f.load2("s")
	if n := resume.NextFor(r, time.Now(), resume.Host{}, resume.Asker{Holder: "d1"}); n.Action != resume.NextSetup || n.Command != "worktree setup(run=s, node=code, holder=d1)" {
		t.Errorf("next action of a not-ready worktree: %+v", n)
	}
	if ev := f.lastOf("s"); ev.Type != ledger.EventWorktreeSetup || !strings.Contains(string(ev.Data), `"outcome":"failed"`) {
		t.Errorf("last event %+v, want worktree_setup failed", ev)
	}
	f.write(res.Path, "go-ahead", "")
	again, err := f.ops.WorktreeSetup(f.ctx, WorktreeSetupRequest{Run: "s", Node: "code", Driver: d})
	if err != nil || again.Setup.Outcome != ledger.SetupOK {
		t.Fatalf("worktree setup: %+v, %v", again, err)
	}
	if p, err := f.ops.Path(f.ctx, PathRequest{Run: "s"}); err != nil || p.Path != res.Path || p.State != WorktreeReady || !slices.Equal(p.Ports, res.Ports) {
		t.Fatalf("path of the ready worktree: %+v, %v", p, err)
	}
	if n := resume.NextFor(f.load2("s"), time.Now(), resume.Host{}, resume.Asker{Holder: "d1"}); n.Action == resume.NextSetup {
		t.Errorf("next action after a good setup: %+v", n)
	}
}

// Issue 36.1: a setup is a command the run carries: one that came with a pulled run
// never runs untrusted (skipped-untrusted, recorded, refused).
func TestSetupOfAPulledRunNeverRunsUntrusted(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	h := ledger.Header{RunID: "p", Kind: ledger.KindSingle, Baseline: testenv.HexOID(f.base), Setup: "touch ran", Stages: []ledger.StageDef{{Name: "code"}}}
	st := ledger.State{RunID: "p", Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "code", Status: ledger.StagePending}}}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin("p", "baseline", f.base)); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "p", Node: "code", Driver: Driver{Holder: "d1"}})
	if !errors.Is(err, fault.ErrRefused) || res == nil || res.Setup == nil || res.Setup.Outcome != ledger.SetupUntrusted {
		t.Fatalf("untrusted setup: %+v, %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(res.Path, "ran")); err == nil {
		t.Fatal("an untrusted setup ran")
	}
}

// Issue 36.2: blocks are deterministic from run and node, unique among the live nodes
// of the repository, and released with the worktree.
func TestPortsAreUniqueAndReleased(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.git(f.dir, "config", "atlas.portRange", "30000-30005") // three blocks of 2
	d := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "q", Stages: ledger.StagesFromList("a,b,c,e"), Ports: 2, Driver: d}); err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	var first []int
	for _, node := range []string{"a", "b", "c"} {
		res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "q", Node: node, Driver: d})
		if err != nil {
			t.Fatal(err)
		}
		if node == "a" {
			first = res.Ports
		}
		for _, p := range res.Ports {
			if other, ok := seen[p]; ok || p < 30000 || p > 30005 {
				t.Fatalf("port %d of %s: also %s's, or out of the range", p, node, other)
			}
			seen[p] = node
		}
	}
	_, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "q", Node: "e", Driver: d})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("a fourth block from a range of three: %v, want a conflict", err)
	}
	// What frees a block is named as the step that does it (gc, which without
	// --apply only plans, frees none: a finished run holds no ports).
	if steps := hintSteps(err); len(steps) != 1 || steps[0].Op != "worktree remove" {
		t.Fatalf("no free block: hint %q names %v, want the worktree remove step", fault.HintOf(err), steps)
	}
	if _, err := f.ops.WorktreeRemove(f.ctx, WorktreeRemoveRequest{Run: "q", Node: "a", Driver: d}); err != nil {
		t.Fatal(err)
	}
	again, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "q", Node: "a", Driver: d})
	if err != nil {
		t.Fatalf("after a's worktree went: %v", err)
	}
	if !slices.Equal(again.Ports, first) {
		t.Errorf("a's block again: %v, want %v (deterministic while free)", again.Ports, first)
	}
}

// Issue 36.2: a job whose lease is fenced (here a timeout receipt) frees its block
// of ports at once, for another node; its next holder's `worktree add --lease` gives
// its worktree a block again (worktree_ports), the same one while it is free.
func TestPortsAreReleasedWhenAJobIsFenced(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	f.git(f.dir, "config", "atlas.portRange", "30000-30003") // two blocks of 2
	d := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Ports: 2, Driver: d}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "g", Job: id, Driver: d}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(job string) string {
		res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: job, Worker: Worker{Holder: "w-" + job, TTL: time.Hour}})
		if err != nil || res.Lease == nil {
			t.Fatalf("claim %s: %+v, %v", job, res, err)
		}
		return *res.Lease
	}
	add := func(job, lease string) (*WorktreeAddResult, error) {
		return f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "g", Node: job, Lease: lease, Driver: Driver{Holder: "w-" + job}})
	}
	leaseA := claim("a")
	a, err := add("a", leaseA)
	if err != nil || len(a.Ports) != 2 {
		t.Fatalf("a: %+v, %v", a, err)
	}
	if _, err := add("b", claim("b")); err != nil {
		t.Fatal(err)
	}
	leaseC := claim("c")
	if _, err := add("c", leaseC); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("a third block from a range of two: %v, want a conflict", err)
	}
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "g", Job: "a", Lease: leaseA, Status: ledger.ReceiptTimeout, Worker: Worker{Holder: "w-a"}}); err != nil {
		t.Fatal(err)
	}
	if w := f.load2("g").State.Worktree("a"); w == nil || len(w.Ports) != 0 {
		t.Fatalf("a's record after its lease was fenced: %+v, want no ports", w)
	}
	c, err := add("c", leaseC)
	if err != nil || !slices.Equal(c.Ports, a.Ports) {
		t.Fatalf("c after a's fence: %+v, %v; want a's freed block %v", c, err, a.Ports)
	}
	if _, err := f.ops.JobDone(f.ctx, JobDoneRequest{Run: "g", Job: "c", Lease: leaseC, Status: ledger.ReceiptFailed, Worker: Worker{Holder: "w-c"}}); err != nil {
		t.Fatal(err)
	}
	again, err := add("a", claim("a"))
	if err != nil || !slices.Equal(again.Ports, a.Ports) || again.Created || again.Recreated {
		t.Fatalf("a's next holder: %+v, %v; want its block %v again", again, err, a.Ports)
	}
	if ev := f.lastOf("g"); ev.Type != ledger.EventWorktreePorts || ev.Job != "a" {
		t.Errorf("last event %+v, want a's worktree_ports", ev)
	}
	if p, err := f.ops.Path(f.ctx, PathRequest{Run: "g", Node: "a"}); err != nil || !slices.Equal(p.Ports, a.Ports) {
		t.Errorf("path of a: %+v, %v", p, err)
	}
}

// Issue 36.2: the union and replay worktrees get blocks of their own, deterministic
// like a node's, exported to their setup and verify and shown by worktree list.
func TestUnionAndReplayWorktreesGetPorts(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	d := Driver{Holder: "d1"}
	env := `test "$ATLAS_PORT" -gt 0 && test -n "$ATLAS_PORTS" && printf '%s' "$ATLAS_PORTS" > ports.out`
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "u", Graph: true, Stages: []ledger.StageDef{{Name: "code"}}, Ports: 3,
		Setup: env, Verify: env, Driver: d}); err != nil {
		t.Fatal(err)
	}
	code, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "u", Node: "code", Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	un, err := f.ops.Union(f.ctx, UnionRequest{Run: "u", Verify: true, Driver: d})
	if err != nil || un.Verify == nil || !un.Verify.Passed {
		t.Fatalf("union verify with ports: %+v, %v", un, err)
	}
	if _, err := f.ops.Recover(f.ctx, RecoverRequest{Run: "u", Stage: "code", Worktree: true, Driver: d}); err != nil {
		t.Fatal(err)
	}
	list, err := f.ops.WorktreeList(f.ctx, WorktreeListRequest{Run: "u"})
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]int{}
	seen := map[int]string{}
	for _, w := range list.Worktrees {
		if len(w.Ports) != 3 {
			t.Fatalf("worktree %s lists ports %v, want a block of 3", w.Node, w.Ports)
		}
		for _, p := range w.Ports {
			if other, ok := seen[p]; ok {
				t.Fatalf("port %d of %s is also %s's", p, w.Node, other)
			}
			seen[p] = w.Node
		}
		blocks[w.Node] = w.Ports
		got, err := os.ReadFile(filepath.Join(w.Path, "ports.out"))
		want := itoa(w.Ports[0]) + " " + itoa(w.Ports[1]) + " " + itoa(w.Ports[2])
		if err != nil || string(got) != want {
			t.Errorf("%s's setup saw ATLAS_PORTS %q (%v), want %q", w.Node, got, err, want)
		}
	}
	if !slices.Equal(blocks["code"], code.Ports) || blocks["union"] == nil || blocks["replay-code-1"] == nil {
		t.Fatalf("blocks %v", blocks)
	}
	p, err := f.ops.Path(f.ctx, PathRequest{Run: "u", Node: "union"})
	if err != nil || !slices.Equal(p.Ports, blocks["union"]) {
		t.Fatalf("path of the union: %+v, %v", p, err)
	}
	// Rebuilt, the union keeps its block.
	if _, err := f.ops.Union(f.ctx, UnionRequest{Run: "u", Driver: d}); err != nil {
		t.Fatal(err)
	}
	if w := f.load2("u").State.Worktree("union"); w == nil || !slices.Equal(w.Ports, blocks["union"]) {
		t.Fatalf("the union after a rebuild: %+v, want ports %v", w, blocks["union"])
	}
}

// Issue 36.3: path finds the worktree to work in; none is exit 4, a graph run needs
// a node (exit 2).
func TestPathExitCodes(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	if _, err := f.ops.Path(f.ctx, PathRequest{Run: "r1"}); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("no worktree yet: %v, want not found", err)
	}
	res := f.add("code", "")
	p, err := f.ops.Path(f.ctx, PathRequest{Run: "r1"})
	if err != nil || p.Path != res.Path || p.Node != "code" || p.Ports == nil {
		t.Fatalf("the current stage's path: %+v, %v", p, err)
	}
	g := newWTFixture(t, ledger.KindGraph)
	if _, err := g.ops.Path(g.ctx, PathRequest{Run: "r1"}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("a graph run without a node: %v, want a usage error", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func (f *wtFixture) load2(run string) *ledger.Run {
	f.t.Helper()
	r, err := f.ops.Reader().Load(f.ctx, run)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *wtFixture) lastOf(run string) ledger.Event {
	f.t.Helper()
	log, err := f.ops.Reader().Log(f.ctx, run)
	if err != nil {
		f.t.Fatal(err)
	}
	return log[len(log)-1]
}

// Issue 36.1: a worktree resume makes anew gets the run's setup too.
func TestResumeRunsSetupInTheWorktreesItRecreates(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Setup: "touch set-up", Driver: d}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "s", Node: "code", Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(res.Path); err != nil {
		t.Fatal(err)
	}
	rr, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "s", Holder: "d1"})
	if err != nil || !slices.Contains(rr.RecreatedWorktrees, "code") {
		t.Fatalf("resume: %+v, %v", rr, err)
	}
	if _, err := os.Lstat(filepath.Join(res.Path, "set-up")); err != nil {
		t.Errorf("the recreated worktree had no setup: %v", err)
	}
}

// Issue 36.1: when the setup of a worktree resume made anew fails, resume's own
// next_action is the retry, not only a warning.
func TestResumeNextActionIsTheFailedSetup(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	flag := filepath.Join(t.TempDir(), "go-ahead")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Setup: "test -e '" + flag + "'", Driver: d}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "s", Node: "code", Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(res.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	var warned []string
	rr, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "s", Holder: "d1", Warn: func(format string, args ...any) {
		warned = append(warned, fmt.Sprintf(format, args...))
	}})
	if err != nil || !slices.Contains(rr.RecreatedWorktrees, "code") {
		t.Fatalf("resume: %+v, %v", rr, err)
	}
	if n := rr.NextAction; n.Action != resume.NextSetup || n.Command != "worktree setup(run=s, node=code, holder=d1)" {
		t.Errorf("resume's next action after a failed setup: %+v (warnings %q)", n, warned)
	}
	if len(warned) == 0 {
		t.Error("no warning of the failed setup")
	}
}

// Issue 36.1: a worker's `worktree add --lease` runs the setup in the job's new
// worktree, with the job's variables and ports, recorded as the worker's write (the
// driver keeps its lease); a stale lease makes no worktree and runs nothing, and a
// failing setup leaves the worktree not_ready with the retry named.
func TestSetupRunsThroughAWorkersLease(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle)
	d := Driver{Holder: "d1"}
	setup := `printf '%s|%s|%s|%s' "$ATLAS_RUN" "$ATLAS_NODE" "$ATLAS_WORKTREE" "$ATLAS_PORTS" > env.out; test "$ATLAS_NODE" != bad`
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Setup: setup, Ports: 2, Driver: d}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"api", "bad"} {
		if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "g", Job: id, Driver: d}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(job string) string {
		res, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: job, Worker: Worker{Holder: "w1", TTL: time.Hour}})
		if err != nil || res.Lease == nil {
			t.Fatalf("claim %s: %+v, %v", job, res, err)
		}
		return *res.Lease
	}
	lease := claim("api")
	if _, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "g", Node: "api", Lease: lease + "0", Driver: Driver{Holder: "w1"}}); err == nil {
		t.Fatal("a stale lease got the worktree")
	}
	if f.load2("g").State.Worktree("api") != nil {
		t.Fatal("a stale lease made a worktree")
	}
	res, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "g", Node: "api", Lease: lease, Driver: Driver{Holder: "w1"}})
	if err != nil || res.Setup == nil || res.Setup.Outcome != ledger.SetupOK || len(res.Ports) != 2 {
		t.Fatalf("worktree add --lease: %+v, %v", res, err)
	}
	got, err := os.ReadFile(filepath.Join(res.Path, "env.out"))
	want := "g|api|" + res.Path + "|" + itoa(res.Ports[0]) + " " + itoa(res.Ports[1])
	if err != nil || string(got) != want {
		t.Fatalf("setup environment %q (%v), want %q", got, err, want)
	}
	ev := f.lastOf("g")
	if ev.Type != ledger.EventWorktreeSetup || ev.Job != "api" {
		t.Errorf("last event %+v, want the job's worktree_setup", ev)
	}
	if r := f.load2("g"); r.State.Driver == nil || r.State.Driver.Holder != "d1" {
		t.Errorf("the worker's setup changed the driver: %+v", r.State.Driver)
	}
	res, err = f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: "g", Node: "bad", Lease: claim("bad"), Driver: Driver{Holder: "w1"}})
	if !errors.Is(err, fault.ErrVerifyFailed) || res == nil || res.Setup == nil || res.Setup.Outcome != ledger.SetupFailed ||
		!slices.ContainsFunc(hintSteps(err), func(s fault.Step) bool {
			return s.Op == "worktree setup" && str(s, "run") == "g" && str(s, "node") == "bad" && str(s, "lease") != "" && str(s, "holder") == "w1"
		}) {
		t.Fatalf("a failing setup through a lease: %+v, %v", res, err)
	}
	if w := f.load2("g").State.Worktree("bad"); w == nil || w.Ready() {
		t.Fatalf("the failed setup's worktree is ready: %+v", w)
	}
}

// Issue 36.2: a verify gets the node's variables, as setup does.
func TestVerifyGetsTheNodesVariables(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	d := Driver{Holder: "d1"}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "u", Graph: true, Verify: `test "$ATLAS_RUN/$ATLAS_NODE" = u/union && test "$ATLAS_WORKTREE" = "$PWD"`, Driver: d}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.Union(f.ctx, UnionRequest{Run: "u", Verify: true, Driver: d})
	if err != nil || res.Verify == nil || !res.Verify.Passed {
		t.Fatalf("union verify with the node's variables: %+v, %v", res, err)
	}
}
