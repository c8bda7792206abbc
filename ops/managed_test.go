package ops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/importer"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/resume"
)

// interruptManaged starts run id as req says (no driver: it is interrupted at once),
// dispatches its stage code, whose safe verify would fail, and gives it a worktree
// with uncommitted work: a resume that reset or verified it would show.
func (f *wtFixture) interruptManaged(id string, req StartRequest) string {
	f.t.Helper()
	req.ID, req.Stages, req.Verify, req.VerifySafe = id, []ledger.StageDef{{Name: "code"}}, "false", true
	if _, err := f.ops.Start(f.ctx, req); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.ops.Transition(f.ctx, TransitionRequest{Run: id, Stage: "code", Status: ledger.StageDispatched}); err != nil {
		f.t.Fatal(err)
	}
	wt, err := f.ops.WorktreeAdd(f.ctx, WorktreeAddRequest{Run: id, Node: "code"})
	if err != nil {
		f.t.Fatal(err)
	}
	f.write(wt.Path, "work.txt", "unsaved\n")
	return wt.Path
}

// assertUntouched: the run's ledger is at tip and the worktree still holds its work.
func (f *wtFixture) assertUntouched(id, tip, wt string) {
	f.t.Helper()
	r, err := f.ops.Reader().Load(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	if r.Tip != tip || r.State.Epoch != 0 {
		f.t.Fatalf("run %s was written: tip %s (was %s), epoch %d", id, r.Tip, tip, r.State.Epoch)
	}
	if b, err := os.ReadFile(filepath.Join(wt, "work.txt")); err != nil || string(b) != "unsaved\n" {
		f.t.Fatalf("the worktree's work: %q, %v", b, err)
	}
}

// A run started --managed-by another engine is reported (show, detect, plan) and
// handed back by resume: nothing written, reset or verified, exit 0, with the owner
// and its resume command (a command while trusted here, text once not). Headless
// selection passes it over for a standalone run, even an older one. Only
// --take-over resumes it here, recorded as run_taken_over; the header stays.
func TestResumeHandsBackAManagedRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code") // r1: an older standalone run, no mode fields
	wt := f.interruptManaged("m", StartRequest{ManagedBy: "hotl", ResumeWith: "/hotl:resume wf.md"})
	tip := f.ops.Reader()
	r, err := tip.Load(f.ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if v := RunViewOf(r, f.ops.Clock.Now()); v.PipelineMode != ledger.ModeManaged || v.ManagedBy != "hotl" || v.ResumeWith != "/hotl:resume wf.md" {
		t.Fatalf("show: %+v", v)
	}
	if v := RunViewOf(f.load(), f.ops.Clock.Now()); v.PipelineMode != ledger.ModeStandalone || v.ManagedBy != "" {
		t.Fatalf("a run without mode fields: %+v, want standalone", v)
	}
	det, err := f.ops.ResumeDetect(f.ctx, ResumeDetectRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ids(det.ResumableRuns) != "m,r1" || !det.ResumableRuns[0].Handoff || det.ResumableRuns[0].ManagedBy != "hotl" || det.ResumableRuns[1].PipelineMode != ledger.ModeStandalone {
		t.Fatalf("detect: %+v", det.ResumableRuns)
	}

	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "m", Holder: "d2"})
	if err != nil {
		t.Fatal(err)
	}
	n := res.NextAction
	if res.Resumed || res.Verify != nil || len(res.Snapshots) != 0 || n.Action != resume.NextHandoff || n.Owner != "hotl" || n.Command != "/hotl:resume wf.md" {
		t.Fatalf("resume of a managed run: %+v, next %+v", res, n)
	}
	f.assertUntouched("m", r.Tip, wt)

	// Not trusted here: the resume command is text in the reason, never the command.
	if _, err := f.ops.TrustRevoke(f.ctx, TrustRevokeRequest{Run: "m"}); err != nil {
		t.Fatal(err)
	}
	p, err := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if n := p.NextAction; n.Action != resume.NextHandoff || n.Command != "" || !strings.Contains(n.Reason, `"/hotl:resume wf.md" (not trusted here`) || p.ManagedBy != "hotl" || p.PipelineMode != ledger.ModeManaged {
		t.Fatalf("plan, untrusted: %+v", p)
	}

	// Headless, no run named: the newest interrupted run git-atlas resumes is r1.
	sel, err := f.ops.Resume(f.ctx, ResumeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if sel.RunID != "r1" || !sel.Resumed {
		t.Fatalf("headless selection took %s (resumed %v), want r1", sel.RunID, sel.Resumed)
	}
	f.assertUntouched("m", r.Tip, wt)

	// --take-over resumes it here, recorded; the header keeps its owner.
	if _, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "m", TakeOver: true}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("take-over without a holder: %v, want usage", err)
	}
	f.assertUntouched("m", r.Tip, wt)
	took, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "m", TakeOver: true, Holder: "d2", NoVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !took.Resumed || took.Epoch != 1 || took.NextAction.Action == resume.NextHandoff || took.TakenOver != "d2" {
		t.Fatalf("take-over: %+v", took)
	}
	log, err := f.ops.Log(f.ctx, LogRequest{Run: "m", Type: string(ledger.EventRunTakenOver)})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Kept) != 1 || log.Kept[0].Holder != "d2" || !strings.Contains(string(log.Kept[0].Data), `"from":"hotl"`) || !strings.Contains(string(log.Kept[0].Data), `"by":"d2"`) {
		t.Fatalf("run_taken_over events: %+v", log.Kept)
	}
	after, err := f.ops.Reader().Load(f.ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if after.Header.ManagedBy != "hotl" || after.Header.Mode() != ledger.ModeManaged || after.HandsOff() {
		t.Fatalf("after take-over: header %+v, hands off %v", after.Header, after.HandsOff())
	}
}

// A dispatch-only run has no pipeline to resume: resume says so and changes nothing.
func TestResumeHandsBackADispatchOnlyRun(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	wt := f.interruptManaged("d", StartRequest{DispatchOnly: true})
	tip := f.tipOf("d")
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "d", Holder: "d2"})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.NextAction; res.Resumed || n.Action != resume.NextHandoff || n.Owner != "" || n.Command != "" || !strings.Contains(n.Reason, "dispatch-only") || res.PipelineMode != ledger.ModeDispatchOnly {
		t.Fatalf("resume of a dispatch-only run: %+v", res)
	}
	f.assertUntouched("d", tip, wt)
}

// start refuses mode flags that do not fit together, and writes nothing.
func TestStartRefusesBadModeFlags(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	for _, req := range []StartRequest{
		{ResumeWith: "x"},
		{DispatchOnly: true, ManagedBy: "hotl"},
		{DispatchOnly: true, ResumeWith: "x"},
		{ManagedBy: "bad name"},
		{ManagedBy: "../x"},
	} {
		req.ID = "bad"
		if _, err := f.ops.Start(f.ctx, req); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("start %+v: %v, want usage", req, err)
		}
	}
	if _, err := f.ops.Reader().Load(f.ctx, "bad"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("a refused start wrote run bad: %v", err)
	}
}

// An imported AgenTeam run keeps its pipeline_mode: hotl is managed by hotl, its
// resume command filled from the workflow file the state names, else the pattern
// kept as text (never a command, even once the run's commands are trusted);
// dispatch-only as such; anything else standalone. A hotl run is handed back.
func TestImportAgenTeamPipelineMode(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	dir := filepath.Join(f.dir, ".agenteam", "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runs := map[string]string{
		"h":  `"pipeline_mode":"hotl"`,
		"hw": `"pipeline_mode":"hotl","workflow_file":"docs/wf.md"`,
		"hx": `"pipeline_mode":"hotl","workflow_file":"x; rm -rf ~"`,
		"do": `"pipeline_mode":"dispatch-only"`,
		"s":  `"pipeline_mode":"standalone"`,
		"u":  `"pipeline_mode":"other"`,
	}
	for id, mode := range runs {
		doc := `{"run_id":"` + id + `","task":"t",` + mode + `,"stage_order":["impl"],"started_at":"2026-07-02T09:00:00Z","last_update":"2026-07-02T09:30:00Z","status":"running",` +
			`"stages":{"impl":{"status":"dispatched","gate":"auto","verify":"false","verify_safe":true,"max_retries":2,"baseline":"` + f.base + `"}}}`
		f.write(dir, id+".json", doc)
	}
	if _, err := f.ops.Import(f.ctx, ImportRequest{System: importer.AgenTeam}); err != nil {
		t.Fatal(err)
	}
	want := map[string][4]string{ // mode, owner, resume_with, text
		"h":  {ledger.ModeManaged, "hotl", "/hotl:resume <workflow-file>", "true"},
		"hw": {ledger.ModeManaged, "hotl", "/hotl:resume docs/wf.md", "false"},
		"hx": {ledger.ModeManaged, "hotl", "/hotl:resume <workflow-file>", "true"},
		"do": {ledger.ModeDispatchOnly, "", "", "false"},
		"s":  {ledger.ModeStandalone, "", "", "false"},
		"u":  {ledger.ModeStandalone, "", "", "false"},
	}
	for id, w := range want {
		r, err := f.ops.Reader().Load(f.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		h := r.Header
		got := [4]string{h.Mode(), h.ManagedBy, h.ResumeWith, map[bool]string{true: "true", false: "false"}[h.ResumeWithText]}
		if got != w {
			t.Errorf("run %s: mode, owner, resume_with, text = %q, want %q", id, got, w)
		}
	}
	for _, id := range []string{"h", "hw"} {
		list, err := f.ops.TrustList(f.ctx, TrustListRequest{Run: id})
		if err != nil || len(list.Runs) != 1 {
			t.Fatalf("trust --list %s: %+v %v", id, list, err)
		}
		if _, err := f.ops.Trust(f.ctx, TrustRequest{Run: id, Yes: true, Digest: list.Runs[0].Digest}); err != nil {
			t.Fatal(err)
		}
	}
	tip := f.tipOf("h")
	res, err := f.ops.Resume(f.ctx, ResumeRequest{RunID: "h", Holder: "d2"})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.NextAction; res.Resumed || res.Verify != nil || n.Action != resume.NextHandoff || n.Owner != "hotl" || n.Command != "" ||
		!strings.Contains(n.Reason, `"/hotl:resume <workflow-file>" (a pattern to fill in, not a command)`) {
		t.Fatalf("resume of an imported hotl run: %+v, next %+v", res, n)
	}
	if f.tipOf("h") != tip {
		t.Fatal("resume of an imported hotl run wrote its ledger")
	}
	p, err := f.ops.ResumePlan(f.ctx, ResumeRequest{RunID: "hw"})
	if err != nil {
		t.Fatal(err)
	}
	if p.NextAction.Command != "/hotl:resume docs/wf.md" {
		t.Fatalf("a trusted, filled-in resume command: %+v", p.NextAction)
	}
	b, _ := json.Marshal(p)
	if !strings.Contains(string(b), `"pipeline_mode":"managed","managed_by":"hotl","resume_with":"/hotl:resume docs/wf.md"`) {
		t.Fatalf("plan JSON: %s", b)
	}
}
