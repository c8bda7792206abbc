package resume

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// driverRun is a single run with one stage, code, under the given budgets.
func driverRun(wall, idle string) *ledger.Run {
	return &ledger.Run{
		Header: ledger.Header{RunID: "r", Kind: ledger.KindSingle, Stages: []ledger.StageDef{{Name: "code", MaxRetries: 2, WallBudget: wall, IdleBudget: idle}}},
		State:  ledger.State{RunID: "r", Status: ledger.RunRunning, Stages: []ledger.StageState{{Name: "code", Status: ledger.StagePending}}},
	}
}

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func dispatch(t *testing.T, r *ledger.Run, at time.Time) *ledger.Attempt {
	t.Helper()
	if err := ledger.ApplyStageTransition(r, "code", ledger.StageDispatched, "", testenv.HexOID("base"), ledger.Stamp(at), ledger.RandomNonce()); err != nil {
		t.Fatal(err)
	}
	_, st, _ := r.Stage("code")
	return &st.Attempts[len(st.Attempts)-1]
}

// A stage dispatched twice: the first attempt's token can no longer report (exit 3,
// nothing changes); the second's can.
func TestStageTokenOfAnOlderAttemptIsStale(t *testing.T) {
	t.Parallel()
	r := driverRun("", "")
	tok1 := dispatch(t, r, t0).Lease
	tok2 := dispatch(t, r, t0).Lease
	if tok1 == tok2 || !strings.HasPrefix(tok1, "code#1@0.") || !strings.HasPrefix(tok2, "code#2@0.") {
		t.Fatalf("tokens %q and %q: want code#1@0.<nonce> and code#2@0.<nonce>", tok1, tok2)
	}
	if err := ledger.CheckStageToken(r, "code", tok1); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("attempt 1's token after attempt 2: %v, want a conflict", err)
	}
	if err := ledger.Heartbeat(r, "code", tok1, "", t0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("heartbeat with attempt 1's token: %v, want a conflict", err)
	}
	if err := ledger.CheckStageToken(r, "code", tok2); err != nil {
		t.Fatalf("attempt 2's token: %v", err)
	}
	if err := ledger.CheckStageToken(r, "code", "code#2"); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("malformed token: %v, want a usage error", err)
	}
}

// continue: an attempt with a thread whose pid is dead here is continued, naming the
// thread; while the pid lives (this test's own process), the answer is wait.
func TestNextContinuesThePersistedAttempt(t *testing.T) {
	t.Parallel()
	r := driverRun("", "")
	a := dispatch(t, r, t0)
	a.ThreadID, a.PID, a.Host = "th-42", os.Getpid(), Host{}.hostname()
	n := Next(r, t0, Host{})
	if n.Action != NextWait || n.PID != os.Getpid() || !strings.Contains(n.Reason, "never a second agent") {
		t.Fatalf("with the attempt's agent alive: %+v, want wait", n)
	}
	a.PID = deadPID(t)
	n = Next(r, t0, Host{})
	if n.Action != NextContinue || n.ThreadID != "th-42" || !strings.Contains(n.Reason, "th-42") || !strings.Contains(n.Command, "--lease "+a.Lease) {
		t.Fatalf("with the agent dead: %+v, want continue naming thread th-42 and the token", n)
	}
}

// deadPID is a process id no process has: a child that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "exit 0"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/sh:", err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}

// An idle budget of 1s with no heartbeat: the attempt is dead and the run counts as
// interrupted although its driver lease lives; a heartbeat brings it back.
func TestIdleBudgetMakesTheRunInterrupted(t *testing.T) {
	t.Parallel()
	r := driverRun("", "1s")
	key := ledger.NewSessionKey([]byte("this clone's key"))
	if _, err := ledger.ClaimDriver(r, ledger.Writer{Holder: "d", Session: "s", TTL: time.Hour, Key: key}, t0); err != nil {
		t.Fatal(err)
	}
	a := dispatch(t, r, t0)
	if r.Interrupted(t0.Add(500 * time.Millisecond)) {
		t.Fatal("interrupted within its idle budget")
	}
	later := t0.Add(2 * time.Second)
	if !r.Live(later) || !r.Interrupted(later) {
		t.Fatalf("after 2s without a heartbeat: live %v, interrupted %v; want a live lease and an interrupted run", r.Live(later), r.Interrupted(later))
	}
	// For anyone but its driver, the run is the driver's to give up: take_over, with
	// the command for the asker (a template when the asker named nobody).
	if n := Next(r, later, Host{}); n.Action != NextTakeOver || n.Command != "" || n.Template != "git atlas resume r --take-over --holder <holder>" {
		t.Fatalf("next for someone else after the attempt died: %+v, want take_over", n)
	}
	if n := NextFor(r, later, Host{}, Asker{Holder: "e"}); n.Action != NextTakeOver || n.Command != "git atlas resume r --take-over --holder e" {
		t.Fatalf("next for e after the attempt died: %+v, want take_over with e's command", n)
	}
	d := Asker{Session: "s", Key: key} // the driver's own session, come back
	if n := NextFor(r, later, Host{}, d); n.Action != NextDispatch || !strings.Contains(n.Reason, "idle budget") || n.Command != "git atlas transition r code dispatched --holder d" {
		t.Fatalf("next after the attempt died: %+v, want a new dispatch saying why", n)
	}
	a.ThreadID = "th-7" // its conversation persists: continued, not replaced
	if n := NextFor(r, later, Host{}, d); n.Action != NextContinue || n.ThreadID != "th-7" || !strings.Contains(n.Reason, "idle budget") {
		t.Fatalf("next after an attempt with a thread died: %+v, want continue naming it", n)
	}
	a.ThreadID = ""
	if err := ledger.Heartbeat(r, "code", "", "", later); err != nil {
		t.Fatal(err)
	}
	if r.Interrupted(later.Add(500 * time.Millisecond)) {
		t.Fatal("interrupted right after a heartbeat")
	}
}

// Past its wall budget an attempt is refused heartbeats (exit 5) and next_action says
// why.
func TestWallBudgetRefusesHeartbeats(t *testing.T) {
	t.Parallel()
	r := driverRun("1m", "")
	dispatch(t, r, t0)
	if err := ledger.Heartbeat(r, "code", "", "", t0.Add(30*time.Second)); err != nil {
		t.Fatalf("within the wall budget: %v", err)
	}
	late := t0.Add(2 * time.Minute)
	err := ledger.Heartbeat(r, "code", "", "", late)
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "wall budget") {
		t.Fatalf("past the wall budget: %v, want refused naming the wall budget", err)
	}
	if n := Next(r, late, Host{}); n.Action != NextDispatch || !strings.Contains(n.Reason, "wall budget 1m") {
		t.Fatalf("next past the wall budget: %+v, want a new attempt and why", n)
	}
	// The refusal's report is the asker's (docs/contract.md §11.13): their holder,
	// and the attempt's stage token when they gave it.
	tok := r.State.Stages[0].Attempts[0].Lease
	for _, c := range []struct{ token, holder, want string }{
		{"", "hb1", "git atlas transition r code failed --holder hb1"},
		{tok, "sub", "git atlas transition r code failed --lease " + tok + " --holder sub"},
	} {
		_, hint := fault.SpelledBy(ledger.Heartbeat(r, "code", c.token, c.holder, late), commandLine)
		if !strings.Contains(hint, "`"+c.want+"`") {
			t.Errorf("heartbeat past the wall budget as %s: hint %q, want `%s`", c.holder, hint, c.want)
		}
	}
}

// The driver rule (docs/contract.md §5.1): B's write on A's live run is refused and names A; B's
// take-over replaces A; A's next write is refused; A's session takes it back at once.
func TestClaimDriverIsExclusive(t *testing.T) {
	t.Parallel()
	r := driverRun("", "")
	key := ledger.NewSessionKey([]byte("this clone's key"))
	a := ledger.Writer{Holder: "agent-a", Session: "sa", TTL: time.Minute, Key: key}
	b := ledger.Writer{Holder: "agent-b", Session: "sb", TTL: time.Minute, Key: key}
	mustClaim := func(w ledger.Writer) *ledger.TakeOver {
		t.Helper()
		took, err := ledger.ClaimDriver(r, w, t0)
		if err != nil {
			t.Fatalf("%s: %v", w.Holder, err)
		}
		return took
	}
	mustClaim(a)
	err := func() error { _, err := ledger.ClaimDriver(r, b, t0); return err }()
	if !errors.Is(err, fault.ErrConflict) || fault.FieldsOf(err)["driver"] == nil || r.State.Driver.Holder != "agent-a" {
		t.Fatalf("B on A's run: %v (fields %v), driver %+v", err, fault.FieldsOf(err), r.State.Driver)
	}
	if _, err := ledger.ClaimDriver(r, ledger.Writer{}, t0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("a write naming no holder on a live run: %v, want a conflict", err)
	}
	b.TakeOver = true
	if took := mustClaim(b); took == nil || took.Old.Holder != "agent-a" || took.New.Holder != "agent-b" {
		t.Fatalf("take-over: %+v", took)
	}
	if _, err := ledger.ClaimDriver(r, a, t0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("A after B took over: %v, want a conflict", err)
	}
	// A restarted under B's session id (a compaction of B) renews at once, and the
	// new holder name is recorded with the old (driver_renamed), never silently. The
	// ledger keeps the session's keyed hash, never the id.
	took := mustClaim(ledger.Writer{Holder: "agent-b-restarted", Session: "sb", TTL: time.Minute, Key: key})
	if d := r.State.Driver; d.Holder != "agent-b-restarted" || d.Session != key.Seal("sb") || !ledger.Sealed(d.Session) {
		t.Fatalf("the same session, restarted: driver %+v", d)
	}
	if took == nil || !took.Renamed() || took.Old.Holder != "agent-b" || took.New.Holder != "agent-b-restarted" {
		t.Fatalf("the renewal under a new name: %+v, want both names", took)
	}
	// What the ledger shows (the hash) is no session: presented, it renews nothing.
	_, err = ledger.ClaimDriver(r, ledger.Writer{Holder: "mallory", Session: r.State.Driver.Session, TTL: time.Minute, Key: key}, t0)
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("the stored hash presented as the session: %v, want a conflict", err)
	}
	// Another clone (another key) cannot use this clone's session either.
	if _, err := ledger.ClaimDriver(r, ledger.Writer{Holder: "mallory", Session: "sb", TTL: time.Minute, Key: ledger.NewSessionKey([]byte("elsewhere"))}, t0); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("the session under another key: %v, want a conflict", err)
	}
	if strings.Contains(fmt.Sprint(err, fault.FieldsOf(err)), "hmac") || strings.Contains(fmt.Sprint(fault.FieldsOf(err)), "session") {
		t.Fatalf("a refusal names the session: %v %v", err, fault.FieldsOf(err))
	}
}

// A next action names its step and the fields its reason speaks of; the asker's
// front end spells them (docs/contract.md §4.6): another front end than the command
// line gets no flag in the command, the template or the reason.
func TestNextActionIsSpelledByTheAskersFrontEnd(t *testing.T) {
	t.Parallel()
	r := driverRun("", "1s")
	if _, err := ledger.ClaimDriver(r, ledger.Writer{Holder: "d", TTL: time.Hour}, t0); err != nil {
		t.Fatal(err)
	}
	dispatch(t, r, t0)
	later := t0.Add(2 * time.Second)
	words := fault.Spelling{Field: func(f string) string { return "<" + f + ">" }, Step: fault.Step.String}
	n := NextFor(r, later, Host{}, Asker{Holder: "e", Spelling: words})
	if n.Action != NextTakeOver || n.Command != "resume(run=r, take_over, holder=e)" || n.Template != "" ||
		!strings.Contains(n.Reason, "with <take_over> to replace") || strings.Contains(n.Reason, "-"+"-") {
		t.Fatalf("take_over spelled by another front end: %+v", n)
	}
	if v, _ := n.Step.Field("holder"); n.Step.Op != "resume" || v != "e" {
		t.Fatalf("take_over's step: %+v", n.Step)
	}
	n = NextFor(r, later, Host{}, Asker{Spelling: words})
	if n.Command != "" || n.Template != "resume(run=r, take_over, holder=<holder>)" {
		t.Fatalf("take_over for an asker who named nobody: %+v, want a template", n)
	}
}
