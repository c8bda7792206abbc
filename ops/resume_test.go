package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// ids are the candidates' run ids, in order.
func ids(cands []resume.Candidate) string {
	var s []string
	for _, c := range cands {
		s = append(s, c.RunID)
	}
	return strings.Join(s, ",")
}

// startSession starts single run id driven by d1 in session (no verify: resume has
// nothing to run).
func (f *wtFixture) startSession(id, session string) {
	f.t.Helper()
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: id, Stages: []ledger.StageDef{{Name: "code"}}, Driver: Driver{Holder: "d1", Session: session}}); err != nil {
		f.t.Fatal(err)
	}
}

// The session that still drives a live run gets the pointer to it (and the run, as
// its own, first); another caller sees neither: a live run is not interrupted.
func TestResumeDetectPointsTheSessionAtItsRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.startSession("s", "sess")
	res, err := f.ops.ResumeDetect(f.ctx, ResumeDetectRequest{Session: "sess"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Driving == nil || !strings.HasPrefix(res.Driving.Pointer, "git-atlas: you are driving run s, stage code (pending), attempt 0; next: ") || res.Driving.NextAction == nil {
		t.Fatalf("driving: %+v", res.Driving)
	}
	if got := ids(res.ResumableRuns); got != "s,r1" || !res.ResumableRuns[0].Own {
		t.Fatalf("resumable: %s %+v", got, res.ResumableRuns)
	}
	res, err = f.ops.ResumeDetect(f.ctx, ResumeDetectRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Driving != nil || ids(res.ResumableRuns) != "r1" || res.UnreadableRuns == nil {
		t.Fatalf("no session: %+v", res)
	}
}

// A pointer's ledger text is shown on one line with control characters escaped: the
// line goes to a terminal as it is.
func TestResumePointerEscapesLedgerText(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Intent: "fix\n\x1b[31mred", Driver: Driver{Holder: "d1", Session: "sess"}}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.ResumeDetect(f.ctx, ResumeDetectRequest{Session: "sess"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Driving == nil || !strings.Contains(res.Driving.Pointer, `(fix\n\x1b[31mred)`) {
		t.Fatalf("pointer: %+v", res.Driving)
	}
}

// The brief lists the session's runs before the others, each group newest first;
// without a session, newest first.
func TestResumeBriefListsTheSessionsRunsFirst(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.startSession("s", "sess")
	f.startSession("t", "other")
	later := time.Now().Add(time.Hour) // every lease has run out: all interrupted
	res, err := f.ops.ResumeBrief(f.ctx, ResumeDetectRequest{Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.ResumableRuns); got != "t,s,r1" {
		t.Fatalf("no session: %s", got)
	}
	res, err = f.ops.ResumeBrief(f.ctx, ResumeDetectRequest{Session: "sess", Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.ResumableRuns); got != "s,t,r1" || res.Driving != nil {
		t.Fatalf("session sess: %s, driving %+v", got, res.Driving)
	}
}

// With Most, the brief keeps the session's own live run and at most Most others,
// counting the rest: a front end that prints a few reads no more.
func TestResumeBriefKeepsMostAndCountsTheRest(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.startSession("s", "sess")
	f.startSession("t", "other")
	res, err := f.ops.ResumeBrief(f.ctx, ResumeDetectRequest{Session: "sess", Now: time.Now().Add(time.Hour), Most: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.ResumableRuns); got != "s" || res.Omitted != 2 {
		t.Fatalf("most 1: %s, %d omitted", got, res.Omitted)
	}
	res, err = f.ops.ResumeBrief(f.ctx, ResumeDetectRequest{Session: "sess", Most: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.ResumableRuns); got != "s,r1" || !res.ResumableRuns[0].Own || res.Omitted != 0 || res.Driving == nil {
		t.Fatalf("most 1 beside the own run: %s, %d omitted, driving %+v", got, res.Omitted, res.Driving)
	}
}

// Nothing to resume is an empty brief ([] in JSON), not an error.
func TestResumeBriefOfNothing(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	if _, err := f.ops.Finish(f.ctx, FinishRequest{Run: "r1", Status: ledger.RunCompleted, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.ResumeBrief(f.ctx, ResumeDetectRequest{})
	if err != nil || res.ResumableRuns == nil || len(res.ResumableRuns) != 0 {
		t.Fatalf("brief: %+v, %v", res, err)
	}
}

// A request resume could not act on is refused as usage, before anything is read or
// written.
func TestResumeRequestRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	tip := f.tip()
	for _, req := range []ResumeRequest{
		{RunID: "../r1"},
		{RunID: "r1", TTL: -time.Second},
		{RunID: "r1", VerifyTimeout: -time.Second},
		{RunID: "r1", OnVerifyFail: "maybe"},
	} {
		_, err := f.ops.Resume(f.ctx, req)
		if !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%+v: %v, want a usage error", req, err)
		}
		if _, err := f.ops.ResumePlan(f.ctx, req); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("plan %+v: %v, want a usage error", req, err)
		}
	}
	if f.tip() != tip {
		t.Fatal("a refused resume wrote the run")
	}
}

// Headless (no Prompt) never asks: the newest interrupted run is taken. With a
// person at a terminal, they choose among several.
func TestResumeChoosesOnlyWithAPrompt(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.startSession("s", "")
	later := time.Now().Add(time.Hour)
	p, err := f.ops.ResumePlan(f.ctx, ResumeRequest{Now: later})
	if err != nil || p.RunID != "s" {
		t.Fatalf("headless: %+v, %v; want the newest, s", p, err)
	}
	var offered string
	prompt := &Prompt{Choose: func(c []resume.Candidate) (int, error) {
		offered = ids(c)
		return 1, nil
	}}
	p, err = f.ops.ResumePlan(f.ctx, ResumeRequest{Now: later, Prompt: prompt})
	if err != nil || p.RunID != "r1" || offered != "s,r1" {
		t.Fatalf("prompted: %+v, %v, offered %q", p, err, offered)
	}
}

// A run that cannot be read is a warning and hides no other run.
func TestResumeWarnsOfUnreadableRuns(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	blob := strings.TrimSpace(f.git(f.dir, "rev-parse", "HEAD:README"))
	f.git(f.dir, "update-ref", "refs/atlas/runs/bad", blob)
	var warned []string
	warn := func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) }
	p, err := f.ops.ResumePlan(f.ctx, ResumeRequest{Warn: warn})
	if err != nil || p.RunID != "r1" {
		t.Fatalf("plan: %+v, %v", p, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "bad") {
		t.Fatalf("warnings: %q", warned)
	}
	res, err := f.ops.ResumeDetect(f.ctx, ResumeDetectRequest{})
	if err != nil || len(res.UnreadableRuns) != 1 || res.UnreadableRuns[0].RunID != "bad" || ids(res.ResumableRuns) != "r1" {
		t.Fatalf("detect: %+v, %v", res, err)
	}
}

// Resume with a holder hands the run to it for the default lease when no TTL is
// named, and opens a new epoch.
func TestResumeTakesTheDriverLeaseForTheHolder(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "r1", Holder: "d2"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Epoch != 1 {
		t.Fatalf("result: %+v", res)
	}
	d := f.load().State.Driver
	if d == nil || d.Holder != "d2" {
		t.Fatalf("driver: %+v", d)
	}
	exp, err := ledger.ParseStamp(d.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(exp); left < ledger.DefaultDriverTTL-time.Minute || left > ledger.DefaultDriverTTL {
		t.Fatalf("lease ends in %v, want about %v", left, ledger.DefaultDriverTTL)
	}
}

// After a failed verify, headless (no Prompt) resume never asks: it fails as
// OnVerifyFail "" says. With a person at a terminal, they are asked what to do.
func TestResumeAsksAfterAFailedVerifyOnlyWithAPrompt(t *testing.T) {
	t.Parallel()
	for _, prompted := range []bool{false, true} {
		f := newWTFixture(t, ledger.KindSingle, "code")
		if _, err := f.ops.Start(f.ctx, StartRequest{ID: "v", Stages: []ledger.StageDef{{Name: "code"}}, Verify: "false", VerifySafe: true, Driver: d1}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "v", Stage: "code", Status: ledger.StageDispatched, Driver: d1}); err != nil {
			t.Fatal(err)
		}
		req := ResumeRequest{RunID: "v", Holder: "d2", TakeOver: true}
		var asked string
		if prompted {
			req.Prompt = &Prompt{Ask: func(q string, choices []string) (string, error) {
				asked = q
				return "stop", nil
			}}
		}
		res, err := f.ops.Resume(f.ctx, req)
		if res == nil || res.Verify == nil || res.Verify.Passed {
			t.Fatalf("prompted %v: %+v, %v; want a failed verify", prompted, res, err)
		}
		if prompted != (asked != "") {
			t.Fatalf("prompted %v: asked %q", prompted, asked)
		}
		r, lerr := f.ops.Reader().Load(f.ctx, "v")
		if lerr != nil {
			t.Fatal(lerr)
		}
		if prompted && r.State.Status != ledger.RunStopped {
			t.Fatalf("answered stop: run is %s", r.State.Status)
		}
		if !prompted && err == nil {
			t.Fatalf("headless: a failed verify did not fail the resume (run %s)", r.State.Status)
		}
	}
}
