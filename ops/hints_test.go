package ops

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// The hints of these tests name commands the one who asked runs as printed
// (docs/contract.md §11.13): each test takes the step a hint names and runs it as
// that request, or checks it carries what its command needs.

// hintSteps are the steps err's hint (and message) names, in order.
func hintSteps(err error) []fault.Step {
	var steps []fault.Step
	if err == nil {
		return nil
	}
	fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }, Step: func(s fault.Step) string {
		steps = append(steps, s)
		return s.String()
	}})
	return steps
}

// value is the value step s sets for name, or nil.
func value(s fault.Step, name string) any {
	v, _ := s.Field(name)
	return v
}

// str is the string value step s sets for name ("" when none).
func str(s fault.Step, name string) string {
	v, _ := value(s, name).(string)
	return v
}

// graphWithSetup is graph run r1 whose worktrees run setup, a command started here.
func graphWithSetup(t *testing.T, setup string) *wtFixture {
	f := newWTFixture(t, ledger.KindGraph)
	f.git(f.dir, "update-ref", "-d", "refs/atlas/runs/r1")
	f.git(f.dir, "update-ref", "-d", "refs/atlas/pins/r1/baseline")
	h := ledger.Header{RunID: "r1", Kind: ledger.KindGraph, Baseline: testenv.HexOID(f.base), Stages: []ledger.StageDef{}, Setup: setup}
	st := ledger.State{RunID: "r1", Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin("r1", "baseline", f.base)); err != nil {
		t.Fatal(err)
	}
	if _, err := trust.AddRun(f.ctx, f.ops.Repo, &f.load().Header, setup); err != nil {
		t.Fatal(err)
	}
	return f
}

// landOf is the land request a land step names, run by the person it names.
func landOf(t *testing.T, s fault.Step) LandRequest {
	t.Helper()
	if s.Op != "land" {
		t.Fatalf("step %v is no land", s)
	}
	merge, _ := value(s, "merge").(bool)
	accept, _ := value(s, "accept_unresolved").(bool)
	return LandRequest{Run: str(s, "run"), Onto: str(s, "onto"), Merge: merge, AcceptUnresolved: accept, Person: Person{ApprovedBy: str(s, "approved_by")}}
}

// The command that creates a missing branch is quoted for sh: read back as sh reads
// it, it is `git branch NAME` and nothing else, whatever NAME holds.
func TestLandHintQuotesTheBranchItCreates(t *testing.T) {
	t.Parallel()
	f, _ := landFixture(t)
	for _, name := range []string{"x;echo$IFS$1PWNED", "it's", "a$(touch${IFS}no)b"} {
		_, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: name, Person: Person{ApprovedBy: "alice"}})
		if !errors.Is(err, fault.ErrNotFound) {
			t.Fatalf("land onto %q: %v, want not found", name, err)
		}
		hint := fault.HintOf(err)
		_, rest, _ := strings.Cut(hint, "`")
		line, _, ok := strings.Cut(rest, "`")
		if !ok {
			t.Fatalf("hint %q names no command", hint)
		}
		sh := exec.Command("sh", "-c", "set -- "+line+`; for a in "$@"; do printf '%s\0' "$a"; done`)
		sh.Dir = t.TempDir() // what a command line that is not quoted would run, runs there
		out, err := sh.Output()
		words := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if err != nil || !slices.Equal(words, []string{"git", "branch", name}) {
			t.Errorf("hint %q: sh reads %q (%v), want git branch %q", hint, words, err, name)
		}
	}
}

// The union a land lacks is built with --verify only when the run has a verify
// command (union refuses --verify without one, exit 2): the step runs as printed.
func TestLandUnionHintVerifiesOnlyWithAVerify(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.add("a", "a.txt")
	f.update(func(r *ledger.Run) { r.State.Jobs = []ledger.Job{{ID: "a", State: ledger.JobDone, Needs: []string{}}} })
	f.git(f.dir, "branch", "release")
	approved := Person{ApprovedBy: "alice"}
	union := func(what string) {
		t.Helper()
		_, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: approved})
		steps := hintSteps(err)
		if !errors.Is(err, fault.ErrRefused) || len(steps) != 1 || steps[0].Op != "union" {
			t.Fatalf("land %s: %v, steps %v; want refused naming union", what, err, steps)
		}
		if _, ok := steps[0].Field("verify"); ok {
			t.Fatalf("land %s: %v names verify for a run without one", what, steps[0])
		}
		verify, _ := value(steps[0], "verify").(bool)
		if _, err := f.ops.Union(f.ctx, UnionRequest{Run: str(steps[0], "run"), Verify: verify, Driver: d1}); err != nil {
			t.Fatalf("%v, run as printed: %v", steps[0], err)
		}
	}
	union("with no union")
	f.add("b", "b.txt")
	f.update(func(r *ledger.Run) {
		r.State.Jobs = append(r.State.Jobs, ledger.Job{ID: "b", State: ledger.JobDone, Needs: []string{}})
	})
	union("with a union lacking a DONE job")
	if s := unionStep(&ledger.Run{Header: ledger.Header{RunID: "g", Verify: "make test"}}); value(s, "verify") != true {
		t.Fatalf("union step of a run with a verify: %v", s)
	}
}

// A person who accepted an unresolved verdict and is told to land as a merge is told
// the land they asked for, with --merge: run as printed, it lands.
func TestLandMergeHintKeepsWhatThePersonGave(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t, "tests pass")
	f.releaseAhead()
	req := LandRequest{Run: "r1", Onto: "release", AcceptUnresolved: true, Person: Person{ApprovedBy: "alice"}}
	_, err := f.ops.Land(f.ctx, req)
	steps := hintSteps(err)
	if !errors.Is(err, fault.ErrRefused) || len(steps) != 1 {
		t.Fatalf("land of a diverged branch: %v, steps %v", err, steps)
	}
	again := landOf(t, steps[0])
	if !again.Merge || !again.AcceptUnresolved || again.Person.ApprovedBy != "alice" || again.Onto != "release" || again.Run != "r1" {
		t.Fatalf("merge hint %v: want the land asked for, with merge", steps[0])
	}
	res, err := f.ops.Land(f.ctx, again)
	if err != nil || res.How != LandMerge || f.rev("release^2") != u.Head {
		t.Fatalf("%v, run as printed: %+v %v", steps[0], res, err)
	}
	// A branch that moved while landing: the land to run again is the one asked for.
	s := hintSteps(landConflict(git.RefUpdate{Name: "refs/heads/release", Old: u.Head}, again.step()))
	if len(s) != 1 || !slices.Equal(s[0].Fields, again.step().Fields) || str(s[0], "onto") != "release" {
		t.Fatalf("land conflict names %v, want %v", s, again.step())
	}
}

// A failed setup's retry is the asker's: with the driver's holder, and a worker's
// holder and lease token on the node's job. Run as printed, it runs the setup again.
func TestSetupRetryIsTheAskersStep(t *testing.T) {
	t.Parallel()
	f := graphWithSetup(t, "test -e go-ahead")
	if _, err := f.ops.Heartbeat(f.ctx, HeartbeatRequest{Run: "r1", Driver: d1}); err != nil {
		t.Fatal(err) // d1 drives r1: a write naming no holder is refused
	}
	f.jobs("a", "b")
	lease := f.claim("b", "w1")
	for _, req := range []WorktreeAddRequest{{Run: "r1", Node: "a", Driver: d1}, {Run: "r1", Node: "b", Lease: lease, Driver: Driver{Holder: "w1"}}} {
		res, err := f.ops.WorktreeAdd(f.ctx, req)
		steps := hintSteps(err)
		if !errors.Is(err, fault.ErrVerifyFailed) || len(steps) != 1 || steps[0].Op != "worktree setup" {
			t.Fatalf("worktree add %s with a failing setup: %v, steps %v", req.Node, err, steps)
		}
		s := steps[0]
		if str(s, "holder") != req.Driver.Holder || str(s, "lease") != req.Lease {
			t.Fatalf("retry %v: want holder %q and lease %q", s, req.Driver.Holder, req.Lease)
		}
		f.write(res.Path, "go-ahead", "")
		again, err := f.ops.WorktreeSetup(f.ctx, WorktreeSetupRequest{Run: str(s, "run"), Node: str(s, "node"), Lease: str(s, "lease"), Driver: Driver{Holder: str(s, "holder")}})
		if err != nil || again.Setup.Outcome != ledger.SetupOK {
			t.Fatalf("%v, run as printed: %+v %v", s, again, err)
		}
	}
}

// The union's worktree is made by union, never by worktree add (which refuses its
// reserved name): path and setup name the union step for it.
func TestUnionWorktreeHintIsTheUnionStep(t *testing.T) {
	t.Parallel()
	f := graphWithSetup(t, "true")
	f.add("a", "a.txt")
	f.update(func(r *ledger.Run) { r.State.Jobs = []ledger.Job{{ID: "a", State: ledger.JobDone, Needs: []string{}}} })
	check := func(what string, err error) {
		t.Helper()
		steps := hintSteps(err)
		if !errors.Is(err, fault.ErrNotFound) || len(steps) != 1 || steps[0].Op != "union" || str(steps[0], "run") != "r1" {
			t.Fatalf("%s: %v, steps %v; want not found naming union", what, err, steps)
		}
	}
	_, err := f.ops.Path(f.ctx, PathRequest{Run: "r1", Node: worktrees.Union})
	check("path of no union", err)
	_, err = resume.Setup(f.ctx, f.ops.Store(d1.Writer()), "r1", worktrees.Union, "")
	check("setup of no union", err)
	u, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(u.Path); err != nil {
		t.Fatal(err)
	}
	_, err = f.ops.Path(f.ctx, PathRequest{Run: "r1", Node: worktrees.Union})
	check("path of a deleted union", err)
	_, err = resume.Setup(f.ctx, f.ops.Store(d1.Writer()), "r1", worktrees.Union, "")
	check("setup of a deleted union", err)
	if s := resume.AddStep("r1", "a", "w1", "a#1@0.x"); s.Op != "worktree add" || str(s, "holder") != "w1" || str(s, "lease") != "a#1@0.x" {
		t.Fatalf("worktree add step %v: want the asker's holder and lease", s)
	}
}

// A claim on a graph whose every job ended names union and finish with the status
// finish needs and the worker's holder.
func TestClaimOfAFinishedGraphNamesRunnableSteps(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	f.jobs("a")
	f.update(func(r *ledger.Run) { r.State.Jobs[0].State = ledger.JobDone })
	_, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "r1", Worker: Worker{Holder: "w1", TTL: time.Hour}})
	steps := hintSteps(err)
	if !errors.Is(err, fault.ErrRefused) || len(steps) != 2 || steps[0].Op != "union" || steps[1].Op != "finish" {
		t.Fatalf("claim of a finished graph: %v, steps %v", err, steps)
	}
	for _, s := range steps {
		if str(s, "holder") != "w1" {
			t.Errorf("%v: want holder w1", s)
		}
	}
	if str(steps[1], "status") != ledger.RunCompleted {
		t.Errorf("%v: want status completed", steps[1])
	}
}
