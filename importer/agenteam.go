package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// AgenTeam keeps one run as .agenteam/state/<run>.json (stages by name, stage_order,
// config_hash, status) and its history as .agenteam/events/<run>.jsonl (one
// {ts, type, run_id, stage, data} per line).

type ateamStage struct {
	Status         string  `json:"status"`
	Gate           string  `json:"gate"`
	Verify         *string `json:"verify"`
	VerifySafe     *bool   `json:"verify_safe"`
	MaxRetries     int     `json:"max_retries"`
	ReworkTo       *string `json:"rework_to"`
	StartedAt      string  `json:"started_at"`
	CompletedAt    string  `json:"completed_at"`
	Baseline       string  `json:"baseline"`
	VerifyAttempts []any   `json:"verify_attempts"`
}

type ateamState struct {
	RunID      string   `json:"run_id"`
	Task       string   `json:"task"`
	StageOrder []string `json:"stage_order"`
	StartedAt  string   `json:"started_at"`
	LastUpdate string   `json:"last_update"`
	ConfigHash string   `json:"config_hash"`
	// PipelineMode is who resumes the run: standalone (AgenTeam itself), hotl
	// (HOTL's engine) or dispatch-only (no pipeline).
	PipelineMode string `json:"pipeline_mode"`
	// WorkflowFile is the HOTL workflow a hotl run resumes from, when the state names
	// one (its resume command is `/hotl:resume <workflow-file>`).
	WorkflowFile string                `json:"workflow_file"`
	Status       string                `json:"status"`
	Stages       map[string]ateamStage `json:"stages"`
	// WorktreePath is the run's .ateam-worktrees/<slug>, relative to the directory
	// holding .agenteam/ (worktree isolation only).
	WorktreePath string `json:"worktree_path"`
}

type ateamEvent struct {
	TS    string         `json:"ts"`
	Type  string         `json:"type"`
	Stage *string        `json:"stage"`
	Data  map[string]any `json:"data"`
}

// ScanAgenTeam reads an AgenTeam tree (.agenteam/): every state/<run>.json is a run.
// Nothing below root (the worktree's top, or dir itself when the user named it) is
// read through a symbolic link, and every file is read bounded (readSource); ctx
// cancelled (SIGTERM) ends the scan.
func ScanAgenTeam(ctx context.Context, root, dir string) ([]*Plan, []Problem, error) {
	src := confine.Tree{Dir: root}
	sd := filepath.Join(dir, "state")
	ents, err := readDir(src, sd)
	if err != nil {
		return nil, nil, err
	}
	var plans []*Plan
	var probs []Problem
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if e.IsDir() {
			// A directory where a run's state file is expected: said, not passed over.
			p := filepath.Join(sd, e.Name())
			probs = append(probs, *badErr(p, fault.Refused("%s is a directory: %v", p, errNotRegular)))
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".json")
		files, prob := readAteamFiles(ctx, src, dir, name)
		if prob == nil {
			var p *Plan
			if p, prob = ateamRun(dir, name, files); prob == nil {
				plans = append(plans, p)
				continue
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		probs = append(probs, *prob)
	}
	plans, more := NameRuns(plans, nil)
	return plans, append(probs, more...), nil
}

// readAteamFiles reads a run's state file and events file (if any), bounded.
func readAteamFiles(ctx context.Context, src confine.Tree, dir, name string) (map[string][]byte, *Problem) {
	sp := filepath.Join(dir, "state", name+".json")
	ep := filepath.Join(dir, "events", name+".jsonl")
	files := map[string][]byte{}
	b, err := readSource(ctx, src, sp)
	if err != nil {
		return nil, badErr(sp, err)
	}
	files["state.json"] = b
	switch b, err := readSource(ctx, src, ep); {
	case err == nil:
		files["events.jsonl"] = b
	case !errors.Is(err, fs.ErrNotExist):
		return nil, badErr(ep, err)
	}
	return files, nil
}

// ateamRun turns one run's files (as readAteamFiles read them) into a plan; the run
// id is named later, with every other run's (nameRuns).
func ateamRun(dir, name string, files map[string][]byte) (*Plan, *Problem) {
	sp := filepath.Join(dir, "state", name+".json")
	ep := filepath.Join(dir, "events", name+".jsonl")
	var st ateamState
	if err := strictJSON(files["state.json"], &st); err != nil {
		return nil, bad(sp, "%v", err)
	}
	if st.Stages == nil || st.Status == "" {
		return nil, bad(sp, "no stages or status: not an AgenTeam run state")
	}
	created, ok := stamp(st.StartedAt)
	if !ok {
		return nil, bad(sp, "started_at %q is not a time", st.StartedAt)
	}
	var evs []ateamEvent
	raw := string(files["events.jsonl"])
	if raw != "" && !strings.HasSuffix(raw, "\n") {
		return nil, bad(ep, "the last line is cut short (no newline): the file is torn")
	}
	for i, line := range strings.Split(raw, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e ateamEvent
		if err := strictJSON([]byte(line), &e); err != nil {
			return nil, bad(ep, "line %d: %v", i+1, err)
		}
		if _, ok := stamp(e.TS); !ok {
			return nil, bad(ep, "line %d: ts %q is not a time", i+1, e.TS)
		}
		evs = append(evs, e)
	}
	srcID := st.RunID
	if srcID == "" {
		srcID = name
	}
	p := &Plan{SourceID: srcID, Path: sp, JobIDs: map[string]string{}}
	p.RunID, p.Mapped = MapName(srcID)
	order := st.StageOrder
	if len(order) == 0 {
		for n := range st.Stages {
			order = append(order, n)
		}
		sort.Strings(order)
	}
	var defs []ledger.StageDef
	var safe []string
	baseline := ""
	for _, n := range order {
		s, ok := st.Stages[n]
		if !ok {
			return nil, bad(sp, "stage_order names %q, which has no stage", n)
		}
		d := ledger.StageDef{Name: n, MaxRetries: s.MaxRetries, Gate: s.Gate}
		if d.Gate == "auto" {
			d.Gate = ""
		}
		if s.Verify != nil {
			d.Verify = *s.Verify
		}
		// verify_safe is the run's own definition and carries over (null: not safe). It
		// does not make the command run here: an imported command runs only once a
		// person trusts it (docs/contract.md §10, package trust), so until then resume skips it and
		// says so; after, resume verifies first as AgenTeam would.
		if s.VerifySafe != nil && *s.VerifySafe {
			d.VerifySafe = true
			safe = append(safe, n)
		}
		if s.ReworkTo != nil {
			d.ReworkTo = *s.ReworkTo
		}
		if baseline == "" {
			baseline = s.Baseline
		}
		defs = append(defs, d)
	}
	if err := ledger.CheckStages(defs); err != nil {
		return nil, badErr(sp, fmt.Errorf("its stages cannot be kept: %w", err))
	}
	h := ledger.Header{RunID: p.RunID, Kind: ledger.KindSingle, CreatedAt: created, Intent: st.Task,
		Baseline: p.runBaseline(baseline), Stages: defs,
		ImportedFrom: &ledger.ImportedFrom{System: AgenTeam, Path: sp, SourceID: srcID, Hash: hashFiles(files), ConfigHash: st.ConfigHash, PipelineMode: st.PipelineMode}}
	h.PipelineMode, h.ManagedBy, h.ResumeWith, h.ResumeWithText = ateamMode(st.PipelineMode, st.WorkflowFile)
	s0 := ledger.State{RunID: p.RunID, Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	for _, d := range defs {
		s0.Stages = append(s0.Stages, ledger.StageState{Name: d.Name, Status: ledger.StagePending})
	}
	p.Events = append(p.Events, ledger.RunStartedEvent(ledger.About{Time: created}, ledger.RunStartedData{Baseline: h.Baseline, ImportedFrom: AgenTeam}))
	p.States = append(p.States, s0)
	cur := clone(s0)
	// retried are the stages a runner_retry re-dispatched: the stage_dispatched that
	// may follow it records the same dispatch, not another attempt.
	retried := map[string]bool{}
	for _, e := range evs {
		t, _ := stamp(e.TS)
		if e.Type == "run_started" {
			// The ledger's own first event stands for it, at the run's start.
			continue
		}
		stage := ""
		if e.Stage != nil {
			stage = *e.Stage
		}
		i := stageIndex(cur.Stages, stage)
		if i >= 0 {
			ss := &cur.Stages[i]
			ss.Attempts = append([]ledger.Attempt(nil), ss.Attempts...)
			again := retried[stage]
			delete(retried, stage)
			switch e.Type {
			case "stage_dispatched":
				ss.Status = ledger.StageDispatched
				if again {
					// Attempts count once per dispatch (AgenTeam's retry budget):
					// runner_retry, then stage_dispatched, is one dispatch.
					break
				}
				ss.Attempts = append(ss.Attempts, ledger.Attempt{N: len(ss.Attempts) + 1, StartedAt: t, Baseline: sourceBaseline(st.Stages[stage].Baseline)})
			case "stage_verified":
				if e.Data["result"] == "pass" {
					ss.Status = ledger.StagePassed
				} else {
					ss.Status = ledger.StageFailed
				}
			case "runner_retry":
				// AgenTeam's runner: verify failed, attempts left -> failed, then
				// dispatched again (a new attempt) with no stage_dispatched event.
				ss.Status = ledger.StageDispatched
				ss.Attempts = append(ss.Attempts, ledger.Attempt{N: len(ss.Attempts) + 1, StartedAt: t, Baseline: sourceBaseline(st.Stages[stage].Baseline)})
				retried[stage] = true
			case "role_started", "role_finished":
				// The roles of the dispatch the retry opened: the next stage_dispatched
				// is still the same one.
				retried[stage] = again
			case "stage_gated":
				ss.Status = ledger.StageGated
			case "stage_completed":
				// The runner also ends a stage whose retries ran out with
				// stage_completed {"result": "failed"}.
				if e.Data["result"] == "failed" {
					ss.Status = ledger.StageFailed
				} else {
					ss.Status = ledger.StageCompleted
				}
			case "runner_rework":
				ss.Status = ledger.StageRework
				ss.Reworks++
			}
			ss.UpdatedAt = t
		}
		p.Events = append(p.Events, ledger.SourceEvent(ledger.About{Time: t, Stage: validStage(stage)}, e.Type, ledger.ImportedEventData{Source: mustJSON(e.Data)}))
		p.States = append(p.States, clone(cur))
	}
	// The final event: the stage statuses as state.json has them (it is the source's
	// own truth; the events only tell how it got there).
	fin := clone(cur)
	for i := range fin.Stages {
		s := st.Stages[fin.Stages[i].Name]
		switch s.Status {
		case "in-progress":
			fin.Stages[i].Status = ledger.StageDispatched
		case "":
		default:
			fin.Stages[i].Status = s.Status
		}
		if fin.Stages[i].Status == ledger.StageDispatched && len(fin.Stages[i].Attempts) == 0 {
			at, _ := stamp(s.StartedAt)
			fin.Stages[i].Attempts = []ledger.Attempt{{N: 1, StartedAt: at, Baseline: sourceBaseline(s.Baseline)}}
		}
	}
	for i := range fin.Stages {
		known := false
		for _, k := range ledger.StageStatuses {
			known = known || k == fin.Stages[i].Status
		}
		if !known {
			return nil, bad(sp, "stage %s has status %q", fin.Stages[i].Name, fin.Stages[i].Status)
		}
	}
	switch st.Status {
	case "completed", "done", "DONE":
		fin.Status = ledger.RunCompleted
	case "failed":
		fin.Status = ledger.RunFailed
	}
	end := created
	if u, ok := stamp(st.LastUpdate); ok {
		end = u
	}
	if n := len(p.Events); p.Events[n-1].Time > end {
		end = p.Events[n-1].Time
	}
	p.Events = append(p.Events, ledger.ImportedEvent(ledger.About{Time: end}, ledger.ImportedData{Source: sp,
		ImportedAgenTeam: &ledger.ImportedAgenTeam{Status: st.Status, VerifySafeInSource: safe}}))
	p.States = append(p.States, fin)
	for _, d := range defs {
		if d.Verify != "" {
			p.Notes = append(p.Notes, "verify commands came from AgenTeam: not trusted to run here")
			break
		}
	}
	if wt := st.WorktreePath; wt != "" {
		if slug, ok := ateamWorktree(wt); ok {
			p.Worktree = filepath.Join(filepath.Dir(filepath.Clean(dir)), ateamWorktrees, slug)
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("worktree_path %q is not %s/<slug>, where AgenTeam makes worktrees: left alone", wt, ateamWorktrees))
		}
	}
	p.Header = h
	return p, nil
}

// ateamWorktrees is the directory, beside .agenteam/, AgenTeam makes a run's
// worktree in (worktree isolation).
const ateamWorktrees = ".ateam-worktrees"

// ateamWorktree is the slug of worktree_path when it is .ateam-worktrees/<slug>, the
// only place AgenTeam makes a worktree: a source naming any other directory (the
// project's own checkout, a worktree of the user's) would have it adopted, and its
// uncommitted files snapshotted into the run, which a push carries to the remote.
func ateamWorktree(wt string) (string, bool) {
	dir, slug, ok := strings.Cut(filepath.ToSlash(filepath.Clean(wt)), "/")
	return slug, ok && dir == ateamWorktrees && confine.Name(slug) == nil
}

// The resume command of a HOTL-managed AgenTeam run, as AgenTeam's resume procedure
// gives it: the workflow file filled in when the state names a usable one, else the
// pattern itself, kept as text.
const (
	hotlOwner        = "hotl"
	hotlResume       = "/hotl:resume "
	hotlWorkflowHole = "<workflow-file>"
)

// workflowFileRE is compiled on first use: its {1,200} unrolls into a program that
// cost a third of every command's package initialisers, import or not.
var workflowFileRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._/-]{1,200}$`) })

// ateamMode maps AgenTeam's pipeline_mode to the header's (docs/contract.md §13): hotl is
// managed by HOTL, resumed with `/hotl:resume <workflow-file>`; dispatch-only stays
// dispatch-only; anything else is standalone. text: the resume command is a pattern
// to fill in, never a runnable command.
func ateamMode(mode, workflow string) (pipelineMode, owner, resumeWith string, text bool) {
	switch mode {
	case "hotl":
		if usableWorkflowFile(workflow) {
			return ledger.ModeManaged, hotlOwner, hotlResume + workflow, false
		}
		return ledger.ModeManaged, hotlOwner, hotlResume + hotlWorkflowHole, true
	case ledger.ModeDispatchOnly:
		return ledger.ModeDispatchOnly, "", "", false
	}
	return "", "", "", false
}

// usableWorkflowFile reports whether a workflow file named by the source may stand in
// a command shown to an agent: a relative path inside the project, each component a
// plain file name (confine.Name), of characters no shell reads specially.
func usableWorkflowFile(p string) bool {
	if !workflowFileRE().MatchString(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") {
		return false
	}
	for c := range strings.SplitSeq(p, "/") {
		if confine.Name(c) != nil {
			return false
		}
	}
	return true
}
