package ledger

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// specStageTable is docs/contract.md §5.2, copied by hand so that a change to the machine has to
// change the spec's table too.
var specStageTable = map[string][]string{
	"pending":    {"dispatched", "skipped"},
	"dispatched": {"verifying", "passed", "failed", "dispatched"},
	"verifying":  {"passed", "failed"},
	"passed":     {"gated", "completed"},
	"gated":      {"completed", "rejected"},
	"failed":     {"dispatched", "rework"},
	"rework":     {"dispatched"},
	"rejected":   {"dispatched"},
	"completed":  {},
	"skipped":    {},
}

func TestStageMachineMatchesSpec(t *testing.T) {
	t.Parallel()
	if len(StageStatuses) != len(specStageTable) {
		t.Fatalf("StageStatuses has %d statuses, docs/contract.md §5.2 has %d", len(StageStatuses), len(specStageTable))
	}
	for _, from := range StageStatuses {
		allowed := map[string]bool{}
		for _, to := range specStageTable[from] {
			allowed[to] = true
		}
		for _, to := range StageStatuses {
			t.Run(from+"->"+to, func(t *testing.T) {
				err := CheckStageTransition("s", from, to)
				if allowed[to] {
					if err != nil {
						t.Fatalf("refused an allowed transition: %v", err)
					}
					return
				}
				if !errors.Is(err, fault.ErrRefused) {
					t.Fatalf("err = %v, want a refusal (exit 5)", err)
				}
				// The refusal names every valid target, or says the stage is terminal.
				msg := err.Error()
				for _, v := range specStageTable[from] {
					if !strings.Contains(msg, v) {
						t.Errorf("refusal %q does not name valid target %s", msg, v)
					}
				}
				if len(specStageTable[from]) == 0 && !strings.Contains(msg, "none (terminal)") {
					t.Errorf("refusal %q does not say %s is terminal", msg, from)
				}
			})
		}
		if got, want := StageTerminal(from), len(specStageTable[from]) == 0; got != want {
			t.Errorf("StageTerminal(%s) = %v, want %v", from, got, want)
		}
	}
}

func TestStageMachineUnknownStatus(t *testing.T) {
	t.Parallel()
	for _, to := range []string{"done", "PASSED", "", "pending "} {
		err := CheckStageTransition("s", StagePending, to)
		if !errors.Is(err, fault.ErrUsage) {
			t.Errorf("to %q: err = %v, want a usage error (exit 2)", to, err)
		}
	}
}

func TestRunMachine(t *testing.T) {
	t.Parallel()
	// docs/contract.md §5.1, plus: a blocked run may also be finished (a person gives up on it);
	// stopped goes back to running (through resume) or is finished completed or failed
	// (through finish); completed and failed are final.
	table := map[string][]string{RunRunning: {RunBlocked, RunCompleted, RunFailed, RunStopped}, RunBlocked: {RunRunning, RunCompleted, RunFailed, RunStopped}, RunStopped: {RunRunning, RunCompleted, RunFailed}, RunCompleted: {}, RunFailed: {}}
	all := []string{RunRunning, RunBlocked, RunCompleted, RunFailed, RunStopped}
	for _, from := range all {
		for _, to := range all {
			want := false
			for _, ok := range table[from] {
				want = want || ok == to
			}
			err := CheckRunTransition(from, to)
			if want && err != nil {
				t.Errorf("%s -> %s refused: %v", from, to, err)
			}
			if !want && !errors.Is(err, fault.ErrRefused) {
				t.Errorf("%s -> %s: err = %v, want a refusal", from, to, err)
			}
		}
		if got, want := RunTerminal(from), len(table[from]) == 0; got != want {
			t.Errorf("RunTerminal(%s) = %v, want %v", from, got, want)
		}
	}
	if err := CheckRunTransition(RunRunning, "paused"); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("unknown run status: err = %v, want usage", err)
	}
}

// memRun is a run held in memory, for machine tests that need no repository.
func memRun(defs ...StageDef) *Run {
	r := &Run{Header: Header{RunID: "r", Stages: defs}, State: State{RunID: "r", Status: RunRunning}}
	for _, d := range defs {
		r.State.Stages = append(r.State.Stages, StageState{Name: d.Name, Status: StagePending})
	}
	return r
}

func TestBudgets(t *testing.T) {
	t.Parallel()
	// Every path back to dispatched spends one attempt of the same budget: a
	// re-dispatch, a retry after failure, a rework, a rejection at the gate.
	loops := map[string][]string{
		"redispatch": {StageDispatched},
		"retry":      {StageFailed, StageDispatched},
		"rework":     {StageFailed, StageRework, StageDispatched},
		"rejected":   {StagePassed, StageGated, StageRejected, StageDispatched},
		"verify":     {StageVerifying, StageFailed, StageDispatched},
	}
	for name, loop := range loops {
		for _, maxRetries := range []int{0, 1, 2, 5} {
			t.Run(fmt.Sprintf("%s/max_retries=%d", name, maxRetries), func(t *testing.T) {
				r := memRun(StageDef{Name: "s", MaxRetries: maxRetries, Gate: "human"})
				def, st, _ := r.Stage("s")
				apply := func(to string) error {
					return ApplyStageTransition(r, "s", to, "", testOID("b"), "t", RandomNonce())
				}
				if err := apply(StageDispatched); err != nil {
					t.Fatal(err)
				}
				dispatches := 1
				for {
					if BudgetLeft(def, st) != maxRetries+1-dispatches {
						t.Fatalf("BudgetLeft = %d after %d dispatches", BudgetLeft(def, st), dispatches)
					}
					var err error
					for _, to := range loop {
						if err = apply(to); err != nil {
							break
						}
					}
					if err != nil {
						if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "attempt") {
							t.Fatalf("err = %v, want a budget refusal", err)
						}
						if st.Status == StageDispatched && name != "redispatch" {
							t.Fatalf("the refused dispatch changed the status")
						}
						break
					}
					dispatches++
					if dispatches > 20 {
						t.Fatal("budget never ran out")
					}
				}
				if dispatches != maxRetries+1 {
					t.Fatalf("%d dispatches allowed, want %d (the first + max_retries)", dispatches, maxRetries+1)
				}
				if len(st.Attempts) != dispatches {
					t.Fatalf("%d attempts recorded, want %d", len(st.Attempts), dispatches)
				}
				for i, a := range st.Attempts {
					if a.N != i+1 || a.Baseline != testOID("b") {
						t.Fatalf("attempt %d = %+v", i, a)
					}
				}
			})
		}
	}
}

func TestReworkTo(t *testing.T) {
	t.Parallel()
	r := memRun(StageDef{Name: "plan"}, StageDef{Name: "code", MaxRetries: 1}, StageDef{Name: "check", MaxRetries: 3, ReworkTo: "code"})
	step := func(stage, to string) error {
		return ApplyStageTransition(r, stage, to, "why", testOID("b"), "t", RandomNonce())
	}
	must := func(stage string, to ...string) {
		t.Helper()
		for _, s := range to {
			if err := step(stage, s); err != nil {
				t.Fatalf("%s -> %s: %v", stage, s, err)
			}
		}
	}
	must("plan", StageDispatched, StagePassed, StageCompleted)
	must("code", StageDispatched, StagePassed, StageCompleted)
	must("check", StageDispatched, StageFailed, StageRework)
	_, code, _ := r.Stage("code")
	_, check, _ := r.Stage("check")
	if code.Status != StageRework || code.Reason != "rework from check: why" {
		t.Fatalf("code after check's rework = %+v, want it sent back to rework", code)
	}
	if check.Reworks != 1 {
		t.Fatalf("check.Reworks = %d", check.Reworks)
	}
	if cur := r.CurrentStage(); cur == nil || cur.Name != "code" {
		t.Fatalf("current stage = %+v, want code", cur)
	}
	// code's second attempt is its last (max_retries 1).
	must("code", StageDispatched, StagePassed, StageCompleted)
	must("check", StageDispatched, StageFailed, StageRework)
	if err := step("code", StageDispatched); !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("code's 3rd dispatch: err = %v, want a budget refusal", err)
	}
	if check.Reworks != 2 {
		t.Fatalf("check.Reworks = %d, want 2", check.Reworks)
	}
	// A stage that never ran is not reopened.
	r2 := memRun(StageDef{Name: "a"}, StageDef{Name: "b", ReworkTo: "a"})
	if err := ApplyStageTransition(r2, "a", StageSkipped, "", testOID("a"), "t", RandomNonce()); err != nil {
		t.Fatal(err)
	}
	if err := ApplyStageTransition(r2, "b", StageDispatched, "", testOID("a"), "t", RandomNonce()); err != nil {
		t.Fatal(err)
	}
	_ = ApplyStageTransition(r2, "b", StageFailed, "", testOID("a"), "t", RandomNonce())
	_ = ApplyStageTransition(r2, "b", StageRework, "", testOID("a"), "t", RandomNonce())
	if _, a, _ := r2.Stage("a"); a.Status != StageSkipped {
		t.Fatalf("a = %+v, want skipped", a)
	}
}

func TestTransitionsOnFinishedRunRefused(t *testing.T) {
	t.Parallel()
	for _, status := range []string{RunCompleted, RunFailed} {
		r := memRun(StageDef{Name: "s", MaxRetries: 2})
		r.State.Status = status
		if err := ApplyStageTransition(r, "s", StageDispatched, "", testOID("b"), "t", RandomNonce()); !errors.Is(err, fault.ErrRefused) {
			t.Errorf("%s run: err = %v", status, err)
		}
	}
	r := memRun(StageDef{Name: "s"})
	if err := ApplyStageTransition(r, "nope", StageDispatched, "", testOID("b"), "t", RandomNonce()); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("unknown stage: err = %v, want not found", err)
	}
}
