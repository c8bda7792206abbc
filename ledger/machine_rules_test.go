package ledger

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestGateIsMandatory: a stage with a gate goes passed → gated only, one without a
// gate passed → completed only; each refusal names the one valid target.
func TestGateIsMandatory(t *testing.T) {
	t.Parallel()
	for _, gate := range []string{"", "human", "reviewer", "qa"} {
		r := memRun(StageDef{Name: "s", MaxRetries: 1, Gate: gate})
		for _, to := range []string{StageDispatched, StagePassed} {
			if err := ApplyStageTransition(r, "s", to, "", testOID("b"), "t", RandomNonce()); err != nil {
				t.Fatal(err)
			}
		}
		skip, want := StageCompleted, StageGated
		if gate == "" {
			skip, want = StageGated, StageCompleted
		}
		err := ApplyStageTransition(r, "s", skip, "", testOID("b"), "t", RandomNonce())
		if !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("gate %q: passed -> %s: err = %v, want refused", gate, skip, err)
		}
		if got := fault.TargetsOf(err); !reflect.DeepEqual(got, []string{want}) {
			t.Errorf("gate %q: valid targets = %v, want [%s]", gate, got, want)
		}
		if _, st, _ := r.Stage("s"); st.Status != StagePassed {
			t.Fatalf("a refused transition changed the stage: %+v", st)
		}
		if err := ApplyStageTransition(r, "s", want, "", testOID("b"), "t", RandomNonce()); err != nil {
			t.Fatalf("gate %q: passed -> %s: %v", gate, want, err)
		}
	}
}

// TestStagesDispatchInOrder: a stage is dispatched only when every earlier stage is
// completed or skipped, whatever the earlier stage's status.
func TestStagesDispatchInOrder(t *testing.T) {
	t.Parallel()
	// Every status the first stage can be in, reached legally.
	paths := map[string][]string{
		StagePending:    nil,
		StageDispatched: {StageDispatched},
		StageVerifying:  {StageDispatched, StageVerifying},
		StagePassed:     {StageDispatched, StagePassed},
		StageGated:      {StageDispatched, StagePassed, StageGated},
		StageRejected:   {StageDispatched, StagePassed, StageGated, StageRejected},
		StageFailed:     {StageDispatched, StageFailed},
		StageRework:     {StageDispatched, StageFailed, StageRework},
		StageCompleted:  {StageDispatched, StagePassed, StageGated, StageCompleted},
		StageSkipped:    {StageSkipped},
	}
	for _, status := range StageStatuses {
		t.Run(status, func(t *testing.T) {
			r := memRun(StageDef{Name: "a", MaxRetries: 2, Gate: "human"}, StageDef{Name: "b", MaxRetries: 2}, StageDef{Name: "c", MaxRetries: 2})
			for _, to := range paths[status] {
				if err := ApplyStageTransition(r, "a", to, "", testOID("a"), "t", RandomNonce()); err != nil {
					t.Fatal(err)
				}
			}
			err := ApplyStageTransition(r, "b", StageDispatched, "", testOID("a"), "t", RandomNonce())
			if StageTerminal(status) {
				if err != nil {
					t.Fatalf("b after a %s: %v", status, err)
				}
				// c still waits for b.
				err = ApplyStageTransition(r, "c", StageDispatched, "", testOID("a"), "t", RandomNonce())
				if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "b (dispatched)") {
					t.Fatalf("c while b runs: err = %v, want refused naming b", err)
				}
				return
			}
			if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "a ("+status+")") {
				t.Fatalf("b while a is %s: err = %v, want refused naming a", status, err)
			}
			if got := fault.TargetsOf(err); !reflect.DeepEqual(got, []string{StageSkipped}) {
				t.Errorf("valid targets = %v, want [skipped]", got)
			}
			if _, st, _ := r.Stage("b"); st.Status != StagePending || len(st.Attempts) != 0 {
				t.Fatalf("a refused dispatch changed b: %+v", st)
			}
		})
	}
}

// TestRefusalsNameTargetsNow: whatever a transition is refused for, the valid targets
// it names are exactly the ones the ledger then accepts.
func TestRefusalsNameTargetsNow(t *testing.T) {
	t.Parallel()
	defs := []StageDef{{Name: "a", MaxRetries: 0, Gate: "qa"}, {Name: "b", MaxRetries: 1}}
	walks := [][][2]string{
		{},
		{{"a", StageDispatched}},
		{{"a", StageDispatched}, {"a", StageFailed}},
		{{"a", StageDispatched}, {"a", StagePassed}},
		{{"a", StageDispatched}, {"a", StagePassed}, {"a", StageGated}, {"a", StageCompleted}, {"b", StageDispatched}, {"b", StageDispatched}},
	}
	for _, walk := range walks {
		r := memRun(defs...)
		for _, st := range walk {
			if err := ApplyStageTransition(r, st[0], st[1], "", testOID("a"), "t", RandomNonce()); err != nil {
				t.Fatal(err)
			}
		}
		for _, stage := range []string{"a", "b"} {
			allowed := StageAllowed(r, stage)
			for _, to := range StageStatuses {
				c := cloneRun(r)
				err := ApplyStageTransition(c, stage, to, "", testOID("a"), "t", RandomNonce())
				ok := false
				for _, a := range allowed {
					ok = ok || a == to
				}
				if ok != (err == nil) {
					t.Fatalf("after %v: %s -> %s: err = %v, but StageAllowed = %v", walk, stage, to, err, allowed)
				}
				if err != nil && !reflect.DeepEqual(fault.TargetsOf(err), allowed) {
					t.Fatalf("after %v: %s -> %s names %v, want %v", walk, stage, to, fault.TargetsOf(err), allowed)
				}
			}
		}
	}
}

func cloneRun(r *Run) *Run {
	c := *r
	c.State.Stages = nil
	for _, s := range r.State.Stages {
		s.Attempts = append([]Attempt(nil), s.Attempts...)
		c.State.Stages = append(c.State.Stages, s)
	}
	c.State.Jobs = append([]Job(nil), r.State.Jobs...)
	return &c
}

// TestFinishRules: a run with RUNNING jobs is not finished completed or failed (their
// receipts would be refused forever), ReapRunning ends those leases; a stopped run
// may be finished.
func TestFinishRules(t *testing.T) {
	t.Parallel()
	r := memRun()
	r.Header.Kind = KindGraph
	if err := AddJobs(&r.State, []JobSpec{{ID: "a"}, {ID: "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Claim(&r.Header, &r.State, "a", "w1", time.Now(), time.Hour, RandomNonce()); err != nil {
		t.Fatal(err)
	}
	for _, status := range []string{RunCompleted, RunFailed} {
		err := Finish(r, status, "")
		if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "a (lease a#0@0.") || !strings.Contains(err.Error(), ", holder w1)") {
			t.Fatalf("finish %s with a running job: err = %v, want refused naming it", status, err)
		}
		if r.State.Status != RunRunning {
			t.Fatal("a refused finish changed the run")
		}
	}
	// Stopping is allowed: resume puts running jobs back to PENDING.
	if err := Finish(r, RunStopped, "pause"); err != nil {
		t.Fatal(err)
	}
	out := ReapRunning(&r.Header, &r.State)
	if len(out) != 1 || out[0].ID != "a" || !strings.HasPrefix(out[0].Lease, "a#0@0.") || r.State.Job("a").State != JobPending || r.State.Job("a").Attempts != 1 {
		t.Fatalf("ReapRunning = %+v, job a = %+v", out, r.State.Job("a"))
	}
	if err := Finish(r, RunCompleted, "done by hand"); err != nil {
		t.Fatalf("stopped -> completed: %v", err)
	}
	if err := Finish(r, RunFailed, ""); !errors.Is(err, fault.ErrRefused) || fault.TargetsOf(err) == nil {
		t.Fatalf("completed -> failed: err = %v, want refused with valid targets", err)
	}
}
