package ops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// A holder is free text on write; on read, one that is not a name reaches an agent
// from no result, on a run started here as on any other, while a plain name still
// shows and a person still reads both (docs/contract.md §6).
func TestAgentResultsWithholdAHolderThatIsNoName(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	bad := Driver{Holder: hostile}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Driver: bad}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: "code", Status: ledger.StageDispatched, Driver: bad}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Driver: Driver{Holder: "agent-1"}}); err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"a", "b"} {
		if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "g", Job: j, Driver: Driver{Holder: "agent-1"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: "a", Worker: Worker{Holder: hostile}}); err != nil {
		t.Fatal(err)
	}

	results := map[string]func(agent bool) (any, error){
		"list": func(agent bool) (any, error) { return f.ops.List(f.ctx, ListRequest{All: true, ForAgent: agent}) },
		"show": func(agent bool) (any, error) { return f.ops.Show(f.ctx, ShowRequest{Run: "s", ForAgent: agent}) },
		"show graph": func(agent bool) (any, error) {
			return f.ops.Show(f.ctx, ShowRequest{Run: "g", ForAgent: agent})
		},
		"log":      func(agent bool) (any, error) { return f.ops.Log(f.ctx, LogRequest{Run: "s", ForAgent: agent}) },
		"job_list": func(agent bool) (any, error) { return f.ops.JobList(f.ctx, JobListRequest{Run: "g", ForAgent: agent}) },
		"resume_plan driver": func(agent bool) (any, error) {
			return f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "s", Holder: hostile, ForAgent: agent})
		},
		"resume_plan": func(agent bool) (any, error) {
			return f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "s", Session: "other", ForAgent: agent})
		},
	}
	for what, get := range results {
		person, err := get(false)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !strings.Contains(jsonString(t, person), "IMPORTANT") {
			t.Errorf("%s: a person lost the holder: %s", what, jsonString(t, person))
		}
		agent, err := get(true)
		if err != nil {
			t.Fatalf("%s for an agent: %v", what, err)
		}
		withholds(t, what, agent)
	}

	l, err := f.ops.List(f.ctx, ListRequest{All: true, ForAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range l.Runs {
		switch it.RunID {
		case "s":
			if !it.TextWithheld || it.Driver == nil || it.Driver.Holder != "" {
				t.Errorf("list: the row does not say its holder was withheld: %+v", it.RunView)
			}
		case "g":
			if it.Holder != "agent-1" {
				t.Errorf("list: a plain holder name was withheld: %+v", it.RunView)
			}
		}
	}
	if s, _ := f.ops.Show(f.ctx, ShowRequest{Run: "s", ForAgent: true}); !s.TextWithheld {
		t.Errorf("show does not say text was withheld: %+v", s.RunView)
	}
	// The graph run's plain driver still shows beside its job's withheld holder.
	if g, _ := f.ops.Show(f.ctx, ShowRequest{Run: "g", ForAgent: true}); !strings.Contains(string(g.State), `"holder":"agent-1"`) {
		t.Errorf("show: a plain holder name was withheld: %s", g.State)
	}
	// The driver's own commands carry its holder: a template then, <holder> in its place.
	if p, _ := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "s", Holder: hostile, ForAgent: true}); p.NextAction.Command != "" ||
		!strings.Contains(p.NextAction.Template, "<holder>") {
		t.Errorf("resume_plan: the driver's next command: %+v", p.NextAction)
	}
	// job_claim returns the claimed job as it stands: its holder too.
	c, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: "b", Worker: Worker{Holder: hostile + " b"}, ForAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	withholds(t, "job_claim", c)
}

// Errors that quote a holder from the ledger (the driver lease's refusal, a finish
// refused for running jobs) name it to an agent only when it is a name, else
// "another holder"; a person reads it as it is, and the kind stays.
func TestAgentErrorReplacesAHolderThatIsNoName(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	bad := Driver{Holder: hostile}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Driver: bad}); err != nil {
		t.Fatal(err)
	}
	_, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: "code", Status: ledger.StageDispatched, Driver: Driver{Holder: "me"}})
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), hostile) {
		t.Fatalf("the refusal a person reads: %v", err)
	}
	agent := AgentError(err)
	if !errors.Is(agent, fault.ErrConflict) {
		t.Errorf("the kind changed: %v", agent)
	}
	msg, hint := fault.Spelled(agent, func(s string) string { return s })
	fields, _ := json.Marshal(fault.FieldsOf(agent))
	if all := msg + hint + string(fields); strings.Contains(all, "IMPORTANT") || !strings.Contains(msg, "driven by another holder") ||
		!strings.Contains(msg, "not by me") {
		t.Errorf("the refusal an agent reads: %s | %s | %s", msg, hint, fields)
	}

	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "g", Graph: true, Driver: Driver{Holder: "d"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "g", Job: "a", Driver: Driver{Holder: "d"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.JobClaim(f.ctx, JobClaimRequest{Run: "g", Job: "a", Worker: Worker{Holder: hostile}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.ops.Finish(f.ctx, FinishRequest{Run: "g", Status: ledger.RunCompleted, Driver: Driver{Holder: "d"}})
	if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), hostile) {
		t.Fatalf("the finish refusal a person reads: %v", err)
	}
	if agent := AgentError(err); !errors.Is(agent, fault.ErrRefused) || strings.Contains(agent.Error(), "IMPORTANT") ||
		!strings.Contains(agent.Error(), "holder another holder") {
		t.Errorf("the finish refusal an agent reads: %v", agent)
	}

	// A plain holder name is quoted as it is.
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "p", Stages: []ledger.StageDef{{Name: "code"}}, Driver: Driver{Holder: "agent-1"}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.ops.Transition(f.ctx, TransitionRequest{Run: "p", Stage: "code", Status: ledger.StageDispatched, Driver: Driver{Holder: "me"}})
	if err == nil || AgentError(err).Error() != err.Error() || !strings.Contains(err.Error(), "driven by agent-1") {
		t.Errorf("a refusal naming a plain holder: %v", err)
	}
}

// worktree_list's combined error quotes each worktree's ledger path; an agent reads
// a count of the same kind (each item carries its own error).
func TestAgentWorktreeListCountsWhatCouldNotBeInspected(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "a", "b")
	for _, node := range []string{"a", "b"} {
		wt := f.add(node, "")
		gitDir := strings.TrimSpace(f.git(wt.Path, "rev-parse", "--absolute-git-dir"))
		if err := os.WriteFile(filepath.Join(gitDir, "index"), []byte("not an index"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	person, perr := f.ops.WorktreeList(f.ctx, WorktreeListRequest{})
	if perr == nil || person == nil || !strings.Contains(perr.Error(), f.dir) && !strings.Contains(perr.Error(), "worktree ") {
		t.Fatalf("the worktrees were inspected: %+v %v", person, perr)
	}
	res, err := f.ops.WorktreeList(f.ctx, WorktreeListRequest{ForAgent: true})
	if res == nil || len(res.Worktrees) != 2 || err == nil {
		t.Fatalf("worktree list for an agent: %+v %v", res, err)
	}
	if err.Error() != "2 worktree(s) could not be inspected; each item says why" {
		t.Errorf("the error an agent reads: %v", err)
	}
	if pc, _ := fault.Code(perr); func() bool { c, _ := fault.Code(err); return c != pc }() {
		t.Errorf("the kind changed: %v, for a person %v", err, perr)
	}
}

// An event this clone wrote under a holder that is no name, on a run started here:
// its holder is withheld from an agent, its data is not (the event is checked as this
// clone's before its holder goes), and the state text it wrote still shows.
func TestAgentKeepsOwnEventDataUnderAHolderThatIsNoName(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	bad := Driver{Holder: hostile}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: []ledger.StageDef{{Name: "code"}}, Driver: bad}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: "s", Stage: "code", Status: ledger.StageDispatched, Reason: "my own reason",
		ThreadID: "my-thread", Agent: "codex", Driver: bad}); err != nil {
		t.Fatal(err)
	}
	l, err := f.ops.Log(f.ctx, LogRequest{Run: "s", Type: string(ledger.EventStageTransition), ForAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	withholds(t, "log", l)
	if out := jsonString(t, l); len(l.Events) != 1 || !strings.Contains(out, "my own reason") || !strings.Contains(out, "my-thread") {
		t.Errorf("log: the data of this clone's own event was withheld: %s", out)
	}
	s, err := f.ops.Show(f.ctx, ShowRequest{Run: "s", ForAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	withholds(t, "show", s)
	if out := string(s.State); !strings.Contains(out, "my own reason") || !strings.Contains(out, "my-thread") || !strings.Contains(out, `"agent":"codex"`) {
		t.Errorf("show: the state text this clone's own event wrote was withheld: %s", out)
	}
}
