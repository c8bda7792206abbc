package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/baseline"
	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

// landFixture is graph run r1 (with criteria, when given: job a meets them
// unverified) with DONE jobs a and b, each with a committed file,
// their union built, and branch release at the baseline (checked out nowhere).
func landFixture(t *testing.T, criteria ...string) (*wtFixture, *UnionResult) {
	return newLandFixture(t, "", false, criteria)
}

// landFixtureStarted is landFixture of a run started here (its header trusted as
// start trusts it, its jobs this clone's, each receipt recorded here) with the run's
// verify, when given, passed on the union.
func landFixtureStarted(t *testing.T, verify string) (*wtFixture, *UnionResult) {
	return newLandFixture(t, verify, true, nil)
}

func newLandFixture(t *testing.T, verify string, started bool, criteria []string) (*wtFixture, *UnionResult) {
	f := newWTFixture(t, ledger.KindGraph)
	if criteria != nil || verify != "" {
		f.git(f.dir, "update-ref", "-d", "refs/atlas/runs/r1")
		f.git(f.dir, "update-ref", "-d", "refs/atlas/pins/r1/baseline")
		h := ledger.Header{RunID: "r1", Kind: ledger.KindGraph, Baseline: testenv.HexOID(f.base), Stages: []ledger.StageDef{}, Criteria: criteria, Verify: verify}
		st := ledger.State{RunID: "r1", Status: ledger.RunRunning, Stages: []ledger.StageState{}}
		if _, err := f.ops.Store(ledger.Writer{}).Create(f.ctx, h, st, ledger.Event{Type: ledger.EventRunStarted}, baseline.Pin("r1", "baseline", f.base)); err != nil {
			t.Fatal(err)
		}
	}
	if started {
		if _, err := trust.AddRun(f.ctx, f.ops.Repo, &f.load().Header, verify); err != nil {
			t.Fatal(err)
		}
	}
	f.add("a", "a.txt")
	f.add("b", "b.txt")
	f.update(func(r *ledger.Run) {
		r.State.Jobs = []ledger.Job{{ID: "a", State: ledger.JobDone, Needs: []string{}, Criteria: criteria}, {ID: "b", State: ledger.JobDone, Needs: []string{}}}
	})
	if started {
		for _, id := range []string{"a", "b"} {
			f.jobDoneHere(id)
		}
	}
	u, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1, Verify: verify != ""})
	if err != nil {
		t.Fatal(err)
	}
	f.git(f.dir, "branch", "release")
	return f, u
}

// jobDoneHere records job id's receipt as this clone writes one: a job_done event, and
// the job's text marked as this clone's (signJobs).
func (f *wtFixture) jobDoneHere(id string) {
	f.t.Helper()
	store := f.ops.Store(Driver{Holder: "d1"}.Writer())
	_, err := store.Update(f.ctx, "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		signJobs(store, r, id)
		d := ledger.JobDoneData{From: ledger.JobRunning, To: ledger.JobDone, Status: "ok", Lease: id + "#1@0.0123abcd"}
		return &gitstate.Change{Event: ledger.JobDoneEvent(ledger.About{Job: id}, d)}, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// releaseAhead commits on branch release in a worktree of its own, then detaches that
// worktree: release has a commit the union lacks and is checked out nowhere. It
// returns the worktree.
func (f *wtFixture) releaseAhead() string {
	f.t.Helper()
	wt := f.dir + "-release"
	f.git(f.dir, "worktree", "add", "-q", wt, "release")
	f.write(wt, "r.txt", "release\n")
	f.git(wt, "add", "r.txt")
	f.git(wt, "commit", "-q", "-m", "release work")
	f.git(wt, "checkout", "-q", "--detach")
	return wt
}

func (f *wtFixture) rev(name string) string {
	f.t.Helper()
	return strings.TrimSpace(f.git(f.dir, "rev-parse", name))
}

// Landing is a person's step: headless without --approved-by, and through MCP even
// with it, it is refused and nothing moves; approved, the branch fast-forwards to
// the union in the same write as the landed event; again, nothing is written.
func TestLandIsAPersonsStepAndRecorded(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t)
	refs := f.refs()
	for _, p := range []Person{{}, {Via: ViaMCP, ApprovedBy: "alice"}} {
		_, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: p})
		if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), StepLand) {
			t.Fatalf("land as %+v: %v, want refused as a person's step", p, err)
		}
	}
	if f.refs() != refs {
		t.Fatal("a refused land moved a ref")
	}
	res, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: Person{ApprovedBy: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.How != LandFastForward || res.Old != f.base || res.New != u.Head || f.rev("release") != u.Head || f.rev("main") != f.base {
		t.Fatalf("land: %+v; release %s main %s, want release at the union %s", res, f.rev("release"), f.rev("main"), u.Head)
	}
	ev := f.last()
	data, err := ledger.DecodeData[ledger.LandedData](&ev)
	if err != nil || data.Branch != "release" || data.Old.String() != f.base || data.New.String() != u.Head || data.ApprovedBy != "alice" {
		t.Fatalf("event: %s %s", ev.Type, ev.Data)
	}
	tip := f.tip()
	again, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: Person{ApprovedBy: "alice"}})
	if err != nil || again.How != LandUpToDate || f.tip() != tip {
		t.Fatalf("land again: %+v %v, want up to date and nothing written", again, err)
	}
}

// With atlas.agentsMayLand, an agent lands without a person.
func TestLandByAgentsWhenConfigAllows(t *testing.T) {
	t.Parallel()
	f, u := landFixtureStarted(t, "")
	f.git(f.dir, "config", AgentsMayLandKey, "true")
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release"}); err != nil || f.rev("release") != u.Head {
		t.Fatalf("land with agentsMayLand: %v, release %s", err, f.rev("release"))
	}
}

// With atlas.agentsMayLand, an agent lands alone only a union this clone built and
// verified itself, of a run whose header is as this clone wrote it (docs/contract.md §15). A
// union another clone recorded (a commit of its own, named by union_built and a passed
// union_verified without this clone's MAC) is a person's step still, until a person
// vouches for the run here; so is a run whose header this clone never wrote.
func TestLandByAgentsOnlyOfTheirOwnUnion(t *testing.T) {
	t.Parallel()
	f, u := landFixtureStarted(t, "true")
	f.git(f.dir, "config", AgentsMayLandKey, "true")
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release"}); err != nil || f.rev("release") != u.Head {
		t.Fatalf("land of the union verified here: %v, release %s", err, f.rev("release"))
	}

	blob := f.gitIn("evil\n", "hash-object", "-w", "--stdin")
	tree := f.gitIn("100644 blob "+blob+"\tevil.txt\n", "mktree")
	evil := testenv.HexOID(f.gitIn("", "commit-tree", tree, "-p", u.Head, "-m", "evil"))
	other := f.ops.Store(ledger.Writer{Role: ledger.RoleObserver})
	other.Unsigned = true // another clone's events carry no MAC of this clone's
	_, err := other.Update(f.ctx, "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		r.State.Union.Head = evil
		r.State.Union.Verify = &ledger.VerifyResult{Command: "true", Passed: true, At: r.State.Union.At}
		return &gitstate.Change{Event: ledger.UnionVerifiedEvent(ledger.About{}, ledger.UnionVerifiedData{Head: evil, Passed: true})}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Update(f.ctx, "r1", func(*ledger.Run) (*gitstate.Change, error) {
		return &gitstate.Change{Event: ledger.UnionBuiltEvent(ledger.About{}, ledger.UnionBuiltData{Head: evil, Integrated: []string{"a", "b"}, Path: u.Path})}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.git(f.dir, "branch", "next", f.base)
	_, err = f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "next"})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), StepLandElsewhere) || f.rev("next") != f.base {
		t.Fatalf("an agent landing another clone's union: %v; next at %s (the planted commit %s)", err, f.rev("next"), evil)
	}
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "next", Person: Person{ApprovedBy: "alice"}}); err != nil || f.rev("next") != evil.String() {
		t.Fatalf("a person landing it: %v; next at %s", err, f.rev("next"))
	}

	if _, err := trust.AddPerson(f.ctx, f.ops.Repo, &f.load().Header); err != nil {
		t.Fatal(err)
	}
	f.git(f.dir, "branch", "vouched", f.base)
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "vouched"}); err != nil || f.rev("vouched") != evil.String() {
		t.Fatalf("an agent landing a run a person vouched for: %v; vouched at %s", err, f.rev("vouched"))
	}

	g, gu := landFixture(t) // its header never trusted here
	g.git(g.dir, "config", AgentsMayLandKey, "true")
	if _, err := g.ops.Land(g.ctx, LandRequest{Run: "r1", Onto: "release"}); !errors.Is(err, fault.ErrRefused) || g.rev("release") == gu.Head {
		t.Fatalf("an agent landing a run whose header this clone never wrote: %v", err)
	}
}

// A job another clone added and reported DONE (its job and receipt without this
// clone's MAC) that this clone's union took in, built and verified here all the same,
// keeps an agent from landing that union alone: its commits are a stranger's. A person
// lands it.
func TestLandByAgentsNotOfAnotherClonesJob(t *testing.T) {
	t.Parallel()
	f, _ := landFixtureStarted(t, "true")
	f.git(f.dir, "config", AgentsMayLandKey, "true")
	f.add("evil", "evil.txt")
	other := f.ops.Store(ledger.Writer{Role: ledger.RoleObserver})
	other.Unsigned = true // another clone's writes carry no MAC of this clone's
	_, err := other.Update(f.ctx, "r1", func(r *ledger.Run) (*gitstate.Change, error) {
		r.State.Jobs = append(r.State.Jobs, ledger.Job{ID: "evil", State: ledger.JobDone, Needs: []string{}})
		d := ledger.JobDoneData{From: ledger.JobRunning, To: ledger.JobDone, Status: "ok", Lease: "evil#1@0.0123abcd"}
		return &gitstate.Change{Event: ledger.JobDoneEvent(ledger.About{Job: "evil"}, d)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.ops.Union(f.ctx, UnionRequest{Run: "r1", Driver: d1, Verify: true})
	if err != nil || !slices.Contains(u.Integrated, "evil") {
		t.Fatalf("union: %+v %v, want evil integrated", u, err)
	}
	_, err = f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release"})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), StepLandElsewhere) || f.rev("release") != f.base {
		t.Fatalf("an agent landing a union with another clone's job: %v; release at %s", err, f.rev("release"))
	}
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: Person{ApprovedBy: "alice"}}); err != nil || f.rev("release") != u.Head {
		t.Fatalf("a person landing it: %v; release at %s", err, f.rev("release"))
	}
}

// A branch checked out in a worktree (here the user's checkout) is refused with the
// command to run there; a union lacking a DONE job is refused naming it.
func TestLandRefusesCheckedOutBranchAndIncompleteUnion(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t)
	approved := Person{ApprovedBy: "alice"}
	_, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "main", Person: approved})
	var fe *fault.Error
	if !errors.As(err, &fe) || !errors.Is(fe.Kind, fault.ErrRefused) || !strings.Contains(fe.Hint, "merge --ff-only "+u.Head) || !strings.Contains(fe.Hint, f.dir) {
		t.Fatalf("land onto the checked-out main: %v (hint %v)", err, fe)
	}
	if f.rev("main") != f.base {
		t.Fatal("main moved")
	}
	f.update(func(r *ledger.Run) {
		r.State.Jobs = append(r.State.Jobs, ledger.Job{ID: "c", State: ledger.JobDone, Needs: []string{}})
	})
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: approved}); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "lacks DONE job(s) c") {
		t.Fatalf("land of a union without c: %v", err)
	}
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "nope", Person: approved}); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("land onto a missing branch: %v, want not found", err)
	}
}

// A branch that moved on lands only with Merge, as a merge commit of its tip and the
// union made without a checkout; a conflict is refused naming the path, nothing
// written.
func TestLandMerge(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t)
	approved := Person{ApprovedBy: "alice"}
	wt := f.releaseAhead()
	moved := f.rev("release")
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: approved}); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "not a fast-forward") {
		t.Fatalf("land without --merge: %v", err)
	}
	res, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Merge: true, Person: approved})
	if err != nil {
		t.Fatal(err)
	}
	if res.How != LandMerge || f.rev("release") != res.New || f.rev("release^1") != moved || f.rev("release^2") != u.Head {
		t.Fatalf("land --merge: %+v", res)
	}

	f.git(wt, "checkout", "-q", "-b", "clash", f.base)
	f.write(wt, "a.txt", "theirs\n")
	f.git(wt, "add", "a.txt")
	f.git(wt, "commit", "-q", "-m", "clash")
	f.git(wt, "checkout", "-q", "--detach")
	clash := f.rev("clash")
	_, err = f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "clash", Merge: true, Person: approved})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "conflicts in a.txt") || f.rev("clash") != clash {
		t.Fatalf("land --merge with a conflict: %v", err)
	}
}

// The union must have passed the run's verify; with criteria the verdict must be
// resolved, and accepting it otherwise is a person's step even where agents may
// land.
func TestLandNeedsVerifiedResolvedUnion(t *testing.T) {
	t.Parallel()
	run := func(verify string, vr *ledger.VerifyResult, criteria []string, met bool) *ledger.Run {
		r := &ledger.Run{Header: ledger.Header{RunID: "g", Kind: ledger.KindGraph, Verify: verify, Criteria: criteria}}
		j := ledger.Job{ID: "a", State: ledger.JobDone, Verify: "true"}
		if met {
			j.Criteria = criteria
			j.VerifyResult = &ledger.VerifyResult{Passed: true}
		}
		r.State.Jobs = []ledger.Job{j}
		r.State.Union = &ledger.UnionRec{Head: testenv.HexOID("h"), Integrated: []string{"a"}, Verify: vr}
		return r
	}
	if _, _, err := landable(run("make test", nil, nil, true)); err == nil || !strings.Contains(err.Error(), "never verified") {
		t.Fatalf("unverified union: %v", err)
	}
	if _, _, err := landable(run("make test", &ledger.VerifyResult{Passed: false}, nil, true)); err == nil || !strings.Contains(err.Error(), "failed its verify") {
		t.Fatalf("failed union: %v", err)
	}
	if h, v, err := landable(run("make test", &ledger.VerifyResult{Passed: true}, []string{"x"}, true)); err != nil || v != nil || h != testenv.HexOID("h").String() {
		t.Fatalf("verified and resolved: %s %+v %v", h, v, err)
	}
	if _, v, err := landable(run("", nil, []string{"x"}, false)); err != nil || v == nil || v.Verdict != ledger.VerdictUnresolved {
		t.Fatalf("unresolved: %+v %v", v, err)
	}
	// A run with no verify and no criteria has neither to pass: its approval decides
	// (docs/contract.md §15).
	if h, v, err := landable(run("", nil, nil, false)); err != nil || v != nil || h != testenv.HexOID("h").String() {
		t.Fatalf("no verify, no criteria: %s %+v %v", h, v, err)
	}
}

// An unverified verdict keeps a run from landing, even where agents may land;
// --accept-unresolved is a person's step, and the event records what was accepted.
func TestLandAcceptUnresolvedIsAPersonsStep(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t, "tests pass")
	f.git(f.dir, "config", AgentsMayLandKey, "true")
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release"}); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), `only unverified jobs meet "tests pass"`) {
		t.Fatalf("land of an unverified run: %v", err)
	}
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", AcceptUnresolved: true}); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "landing a run whose verdict is not resolved (accept_unresolved)") {
		t.Fatalf("headless --accept-unresolved: %v", err)
	}
	if f.rev("release") != f.base {
		t.Fatal("a refused land moved release")
	}
	res, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", AcceptUnresolved: true, Person: Person{Terminal: true}})
	if err != nil || f.rev("release") != u.Head || res.ApprovedBy != "terminal" {
		t.Fatalf("land --accept-unresolved at a terminal: %+v %v", res, err)
	}
	if ev := f.last(); !strings.Contains(string(ev.Data), `"accepted_unresolved":["tests pass"]`) {
		t.Fatalf("event: %s", ev.Data)
	}
}

// landThroughRemote makes f's ledger go through a bare remote, origin (atlas.remote),
// and returns the count of r1's landed events there.
func landThroughRemote(t *testing.T, f *wtFixture) (bare string, landed func() int) {
	t.Helper()
	bare = filepath.Join(t.TempDir(), "remote.git")
	f.git(f.dir, "init", "-q", "--bare", bare)
	f.git(f.dir, "remote", "add", "origin", bare)
	f.git(f.dir, "push", "-q", "origin", "refs/atlas/*:refs/atlas/*", "refs/heads/atlas/*:refs/heads/atlas/*")
	f.ops.Remote = &gitstate.Remote{Name: "origin"}
	return bare, func() int {
		t.Helper()
		log, err := f.ops.Reader().Log(f.ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range log {
			if e.Type == ledger.EventLanded {
				n++
			}
		}
		return n
	}
}

// landKilled runs req's land and stops it as soon as its landed event is written,
// before the branch moves: what a kill right then leaves.
func landKilled(t *testing.T, f *wtFixture, req LandRequest) {
	t.Helper()
	type killed struct{}
	f.ops.ledgerMoved = func(context.Context, *gitstate.Store) { panic(killed{}) }
	defer func() {
		f.ops.ledgerMoved = nil
		if r := recover(); r != nil {
			if _, ok := r.(killed); !ok {
				panic(r)
			}
		}
	}()
	_, _ = f.ops.Land(f.ctx, req)
	t.Fatal("the land was not stopped after its event")
}

// Through a remote (atlas.remote), landing is one remote-safe sequence: the landed
// event first, then the branch. A remote that declines the event leaves the branch
// where it was, and the next land records and moves it; a land that died after its
// event, before the move, is finished by the next one without a second event.
func TestLandThroughARemoteIsOneSequence(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t)
	bare, landed := landThroughRemote(t, f)
	approved := Person{ApprovedBy: "alice"}

	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'policy: closed' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: approved}); err == nil {
		t.Fatal("land through a remote that declines the write succeeded")
	}
	if f.rev("release") != f.base {
		t.Fatalf("the declined land moved release to %s", f.rev("release"))
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: approved})
	if err != nil || res.How != LandFastForward || f.rev("release") != u.Head || landed() != 1 {
		t.Fatalf("land after the remote took writes again: %+v, %v; release %s, %d landed events", res, err, f.rev("release"), landed())
	}

	// Killed between the event and the move: the next land makes the recorded move.
	f.git(f.dir, "branch", "-f", "again", f.base)
	landKilled(t, f, LandRequest{Run: "r1", Onto: "again", Person: approved})
	if f.rev("again") != f.base || landed() != 2 {
		t.Fatalf("after the kill: again at %s, %d landed events; want the event and no move", f.rev("again"), landed())
	}
	res, err = f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "again", Person: approved})
	if err != nil || res.New != u.Head || f.rev("again") != u.Head || landed() != 2 {
		t.Fatalf("land after the kill: %+v, %v; again at %s, %d landed events", res, err, f.rev("again"), landed())
	}
}

// The remote's ledger is written by every clone of it, so a landed event there naming
// a branch's tip and the union is finished only when it records the move this land
// would make itself (docs/contract.md §15). Another clone's event moving release to a
// commit of its own is passed over, and so are events moving hotfix to a "merge" of
// its tip and the union whose tree is not their merge, or to one with their merge's
// tree and another parent: each branch lands on what land makes, with an event of its
// own. A merge land killed after its event is still finished with the merge commit it
// recorded, without a second event.
func TestLandReplaysOnlyTheMoveItWouldMake(t *testing.T) {
	t.Parallel()
	f, u := landFixture(t)
	_, landed := landThroughRemote(t, f)
	approved := Person{ApprovedBy: "alice"}
	blob := f.gitIn("evil\n", "hash-object", "-w", "--stdin")
	evilTree := f.gitIn("100644 blob "+blob+"\tevil.txt\n", "mktree")
	plant := func(branch, old, tip string) {
		t.Helper()
		d := ledger.LandedData{Branch: branch, Old: testenv.HexOID(old), Union: testenv.HexOID(u.Head), New: testenv.HexOID(tip), How: LandFastForward}
		_, err := f.ops.Store(ledger.Writer{Role: ledger.RoleObserver}).Update(f.ctx, "r1", func(*ledger.Run) (*gitstate.Change, error) {
			return &gitstate.Change{Event: ledger.LandedEvent(ledger.About{}, d)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	evil := f.gitIn("", "commit-tree", evilTree, "-p", f.base, "-m", "evil")
	plant("release", f.base, evil)
	res, err := f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "release", Person: approved})
	if err != nil || res.New != u.Head || f.rev("release") != u.Head || landed() != 2 {
		t.Fatalf("land over a planted event: %+v, %v; release at %s (the planted commit %s), %d landed events", res, err, f.rev("release"), evil, landed())
	}

	moved := f.gitIn("", "commit-tree", f.base+"^{tree}", "-p", f.base, "-m", "hotfix work")
	f.git(f.dir, "branch", "hotfix", moved)
	merged := f.gitIn("", "merge-tree", "--write-tree", moved, u.Head)
	forged := f.gitIn("", "commit-tree", evilTree, "-p", moved, "-p", u.Head, "-m", "Merge")
	smuggled := f.gitIn("", "commit-tree", merged, "-p", moved, "-p", evil, "-m", "Merge")
	plant("hotfix", moved, forged)
	plant("hotfix", moved, smuggled)
	res, err = f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "hotfix", Merge: true, Person: approved})
	if err != nil || res.How != LandMerge || f.rev("hotfix") != res.New || landed() != 5 ||
		f.rev("hotfix^1") != moved || f.rev("hotfix^2") != u.Head || f.rev("hotfix^{tree}") != merged {
		t.Fatalf("land --merge over a forged merge: %+v, %v; hotfix at %s (forged %s, %s), %d landed events", res, err, f.rev("hotfix"), forged, smuggled, landed())
	}

	f.git(f.dir, "branch", "again", moved)
	landKilled(t, f, LandRequest{Run: "r1", Onto: "again", Merge: true, Person: approved})
	ev := f.last()
	recorded, err := ledger.DecodeData[ledger.LandedData](&ev)
	if err != nil || landed() != 6 || f.rev("again") != moved {
		t.Fatalf("after the kill: %v; again at %s, %d landed events", err, f.rev("again"), landed())
	}
	res, err = f.ops.Land(f.ctx, LandRequest{Run: "r1", Onto: "again", Merge: true, Person: approved})
	if err != nil || res.New != recorded.New.String() || f.rev("again") != res.New || landed() != 6 {
		t.Fatalf("land --merge after the kill: %+v, %v; again at %s, recorded %s, %d landed events", res, err, f.rev("again"), recorded.New, landed())
	}
}
