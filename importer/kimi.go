// Package importer brings runs over from the reference systems (docs/contract.md §13): it reads
// their files (never writes them) and turns each source run into a plan of ledger
// writes; Apply makes them through gitstate's store.
package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// Systems.
const (
	KimiAtlas = ledger.SystemKimiAtlas
	AgenTeam  = ledger.SystemAgenTeam
)

// kimiStages is kimi-atlas's canonical stage machine, in order (its ctxstore.STAGES).
var kimiStages = []string{"INIT", "INTENT_CAPTURED", "CLARIFY", "TRIAGED", "GROUNDED", "CODED", "VERIFIED", "REFINE", "OUTPUT"}

// Plan is one source run made ready to write.
type Plan struct {
	SourceID string            `json:"source_id"`
	RunID    string            `json:"run_id"`
	Mapped   bool              `json:"mapped,omitempty"`
	Path     string            `json:"path"`
	Header   ledger.Header     `json:"-"`
	States   []ledger.State    `json:"-"` // the state after each event
	Events   []ledger.Event    `json:"-"`
	JobIDs   map[string]string `json:"job_ids,omitempty"` // source job id -> job id, where mapped
	Reset    []string          `json:"reset_jobs,omitempty"`
	Worktree string            `json:"worktree,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
	// badBaseline is the source's own baseline when it is not a full object id: the
	// run is imported without one (noteBadBaseline).
	badBaseline string
}

// Problem is a source run that could not be read.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Err is the refusal, of a fault kind when a check of `job add` or `start`
	// refused the source (nil for a file that could not be read or parsed).
	Err error `json:"-"`
}

// ScanKimi reads a kimi-atlas tree (.atlas/): each <run>/ with a state.json is a run;
// task sub-runs under <run>/tasks/ belong to their parent and are not runs of their own.
// Nothing below root (the worktree's top, or dir itself when the user named it) is
// read through a symbolic link, and every file is read bounded (readSource); ctx
// cancelled (SIGTERM) ends the scan.
func ScanKimi(ctx context.Context, root, dir string) ([]*Plan, []Problem, error) {
	src := confine.Tree{Dir: root}
	ents, err := readDir(src, dir)
	if err != nil {
		return nil, nil, err
	}
	var plans []*Plan
	var probs []Problem
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		// A symbolic link where a run could be is refused (reported) as it is read,
		// not passed over.
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		rd := filepath.Join(dir, e.Name())
		files, prob := readKimiFiles(ctx, src, rd)
		if files == nil && prob == nil {
			continue
		}
		if prob == nil {
			var p *Plan
			if p, prob = kimiRun(rd, e.Name(), files); prob == nil {
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

func validRun(n string) bool { return ledger.ValidName("run", n) == nil }

// RunNames are the names a source run id may have been given by an earlier import:
// the one it gets alone, and the one it gets beside an id that collides with it.
func RunNames(sourceID string) []string {
	n := candidate(sourceID, validRun)
	return []string{n, withHash(n, sourceID)}
}

// kimiFiles are the files of one kimi-atlas run that import reads.
var kimiFiles = []string{"state.json", "log.jsonl", "plan.dag.json", "intent.txt"}

// readKimiFiles reads a run's files, bounded; a missing one is left out, and a
// directory with no state.json is no run (no files, no problem).
func readKimiFiles(ctx context.Context, src confine.Tree, rd string) (map[string][]byte, *Problem) {
	files := map[string][]byte{}
	for _, f := range kimiFiles {
		b, err := readSource(ctx, src, filepath.Join(rd, f))
		switch {
		case err == nil:
			files[f] = b
		case errors.Is(err, fs.ErrNotExist) && f == "state.json":
			return nil, nil
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, badErr(filepath.Join(rd, f), err)
		}
	}
	return files, nil
}

// NameRuns gives the plans' runs their ids, one to one (assignNames): two source
// runs whose ids map to one name, or to names that differ only in case, get names
// of their own; prefer holds the names earlier imports gave (source id -> run id),
// which are kept. A plan that cannot be named is a problem.
func NameRuns(plans []*Plan, prefer map[string]string) ([]*Plan, []Problem) {
	var ids []string
	for _, p := range plans {
		ids = append(ids, p.SourceID)
	}
	names, err := assignNames("run", ids, validRun, nil, prefer)
	if err != nil {
		var probs []Problem
		for _, p := range plans {
			probs = append(probs, *badErr(p.Path, err))
		}
		return nil, probs
	}
	var out []*Plan
	var probs []Problem
	seen := map[string]string{}
	for _, p := range plans {
		if other, dup := seen[p.SourceID]; dup {
			probs = append(probs, *badErr(p.Path, fault.Usage("run id %q is also the id of the run at %s", p.SourceID, other)))
			continue
		}
		seen[p.SourceID] = p.Path
		p.RunID = names[p.SourceID]
		p.Mapped = p.RunID != p.SourceID
		p.Header.RunID = p.RunID
		for i := range p.States {
			p.States[i].RunID = p.RunID
		}
		out = append(out, p)
	}
	return out, probs
}

type kimiState struct {
	RunID        string   `json:"run_id"`
	CreatedTS    string   `json:"created_ts"`
	UpdatedTS    string   `json:"updated_ts"`
	CurrentState string   `json:"current_state"`
	Intent       string   `json:"intent"`
	Criteria     []string `json:"success_criteria"`
	Stages       map[string]struct {
		Status string `json:"status"`
		TS     string `json:"ts"`
	} `json:"stages"`
	RefinePasses int      `json:"refine_passes"`
	VerifyCmd    string   `json:"verify_cmd"`
	VerifySafe   *bool    `json:"verify_safe"`
	ScopePaths   []string `json:"scope_paths"`
	BaselineSHA  string   `json:"baseline_sha"`
}

type kimiLog struct {
	RunID string `json:"run_id"`
	Stage string `json:"stage"`
	TS    string `json:"ts"`
	// Verdict is VERIFIED's and OUTPUT's telemetry (ctxstore.advance(..., verdict=)).
	Verdict any `json:"verdict"`
}

// kimiDAG is plan.dag.json (kimi-atlas references/schemas.json "task-dag"): the
// halting caps and gas in meta, the plan's nodes (what each is to do: scope, criteria,
// verify, place in the expansion tree), and one job per node (what happened to it:
// state, attempts, lease; scheduler.seed_jobs names it "<node>#0").
type kimiDAG struct {
	Meta struct {
		GasRemaining *int `json:"gas_remaining"`
		Gas          int  `json:"gas"`
		DepthMax     int  `json:"depth_max"`
		NodeMax      int  `json:"node_max"`
	} `json:"meta"`
	Nodes map[string]kimiNode `json:"nodes"`
	Jobs  []struct {
		JobID    string   `json:"job_id"`
		NodeID   string   `json:"node_id"`
		Kind     string   `json:"kind"`
		Deps     []string `json:"deps"`
		Attempts int      `json:"attempts"`
		State    string   `json:"state"`
		Lease    string   `json:"lease"`
		Scope    []string `json:"scope"`
	} `json:"jobs"`
}

// kimiNode is one node of plan.dag.json (schemas.json "dag-node").
type kimiNode struct {
	Kind       string   `json:"kind"`
	Depth      int      `json:"depth"`
	Deps       []string `json:"deps"`
	ScopePaths []string `json:"scope_paths"`
	Criteria   []string `json:"success_criteria_subset"`
	VerifyCmd  string   `json:"verify_cmd"`
	Parent     string   `json:"parent"`
	Children   []string `json:"children"`
}

// kimiMaxAttempts is kimi-atlas's per-job attempt cap (plandag.MAX_ATTEMPTS).
const kimiMaxAttempts = 2

// kimiDispatches is how many times kimi-atlas dispatched a job, each charging one
// gas: its attempts count only requeues (a timeout or an expired lease,
// scheduler.apply_receipt and reap_expired), so a job that is RUNNING or DONE was
// dispatched once more than that, and so was one FAILED by a receipt (under the cap);
// one FAILED at the cap and a PENDING one were not.
func kimiDispatches(state string, attempts int) int {
	switch state {
	case ledger.JobRunning, ledger.JobDone:
		return attempts + 1
	case ledger.JobFailed:
		if attempts >= kimiMaxAttempts {
			return attempts
		}
		return attempts + 1
	}
	return attempts
}

func bad(path, format string, args ...any) *Problem {
	return &Problem{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// stamp turns a source time ("2026-07-01T12:00:00Z") into the ledger's form.
func stamp(s string) (string, bool) {
	for _, f := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(f, s); err == nil {
			return ledger.Stamp(t), true
		}
	}
	return "", false
}

// badErr is a problem with its refusal kept (Problem.Err).
func badErr(path string, err error) *Problem {
	return &Problem{Path: path, Reason: err.Error(), Err: err}
}

// kimiRun turns one run's files (as readKimiFiles read them) into a plan; the run
// id is named later, with every other run's (nameRuns).
func kimiRun(rd, name string, files map[string][]byte) (*Plan, *Problem) {
	var st kimiState
	sp := filepath.Join(rd, "state.json")
	if err := strictJSON(files["state.json"], &st); err != nil {
		return nil, bad(sp, "%v", err)
	}
	if st.CurrentState == "" {
		return nil, bad(sp, "no current_state")
	}
	created, ok := stamp(st.CreatedTS)
	if !ok {
		return nil, bad(sp, "created_ts %q is not a time", st.CreatedTS)
	}
	var log []kimiLog
	lp := filepath.Join(rd, "log.jsonl")
	for i, line := range strings.Split(string(files["log.jsonl"]), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var l kimiLog
		if err := strictJSON([]byte(line), &l); err != nil {
			return nil, bad(lp, "line %d: %v", i+1, err)
		}
		if _, ok := stamp(l.TS); !ok {
			return nil, bad(lp, "line %d: ts %q is not a time", i+1, l.TS)
		}
		log = append(log, l)
	}
	if len(files["log.jsonl"]) > 0 && !strings.HasSuffix(string(files["log.jsonl"]), "\n") {
		return nil, bad(lp, "the last line is cut short (no newline): the file is torn")
	}
	srcID := st.RunID
	if srcID == "" {
		srcID = name
	}
	p := &Plan{SourceID: srcID, Path: rd, JobIDs: map[string]string{}}
	p.RunID, p.Mapped = MapName(srcID)
	intent := st.Intent
	if b, ok := files["intent.txt"]; ok && len(b) > 0 {
		intent = strings.TrimRight(string(b), "\n")
	}
	scope, err := ledger.CanonicalScope(st.ScopePaths)
	if err != nil {
		return nil, bad(sp, "scope_paths: %v", err)
	}
	h := ledger.Header{RunID: p.RunID, Kind: ledger.KindSingle, CreatedAt: created, Intent: intent,
		Criteria: st.Criteria, Verify: st.VerifyCmd, Scope: scope, Baseline: p.runBaseline(st.BaselineSHA),
		ImportedFrom: &ledger.ImportedFrom{System: KimiAtlas, Path: rd, SourceID: srcID, Hash: hashFiles(files)}}
	if st.VerifySafe == nil && st.VerifyCmd != "" {
		p.Notes = append(p.Notes, "verify_safe not recorded: the verify command is not trusted")
	}
	var dag kimiDAG
	_, graph := files["plan.dag.json"]
	dp := filepath.Join(rd, "plan.dag.json")
	if graph {
		if err := strictJSON(files["plan.dag.json"], &dag); err != nil {
			return nil, bad(dp, "%v", err)
		}
		if dag.Meta.DepthMax < 0 || dag.Meta.NodeMax < 0 || dag.Meta.Gas < 0 || (dag.Meta.GasRemaining != nil && *dag.Meta.GasRemaining < 0) {
			// As `start` refuses --max-depth, --max-jobs and --gas below zero.
			return nil, badErr(dp, fault.Usage("meta: depth_max, node_max, gas and gas_remaining must not be negative"))
		}
		h.Kind, h.MaxAttempts, h.Stages = ledger.KindGraph, kimiMaxAttempts, []ledger.StageDef{}
		// The halting caps carry over: a resumed run expands no further than it could there.
		h.MaxDepth, h.MaxJobs = dag.Meta.DepthMax, dag.Meta.NodeMax
	} else {
		h.Stages = kimiStageDefs()
	}
	// The state right after start: every stage pending.
	s0 := ledger.State{RunID: p.RunID, Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	for _, d := range h.Stages {
		s0.Stages = append(s0.Stages, ledger.StageState{Name: d.Name, Status: ledger.StagePending})
	}
	p.Events = append(p.Events, ledger.RunStartedEvent(ledger.About{Time: created}, ledger.RunStartedData{Baseline: h.Baseline, ImportedFrom: KimiAtlas}))
	p.States = append(p.States, s0)
	cur := clone(s0)
	var steps []kimiStep
	seen := map[string]string{} // stage -> when last recorded
	refines := 0
	for _, l := range log {
		t, _ := stamp(l.TS)
		if slices.Contains(kimiStages, l.Stage) {
			steps = append(steps, kimiStep{stage: l.Stage, at: t})
			seen[l.Stage] = t
			if l.Stage == "REFINE" {
				refines++
			}
		}
		if !graph {
			// Each state is where the kimi-atlas resume procedure would stand after the
			// lines so far (statuses only: the attempts go into the final state, so a
			// long log costs one pass, not one per line).
			cur = kimiStatuses(s0, seen, lastStage(steps), refines, false)
		}
		data := ledger.ImportedStageData{SourceStage: l.Stage}
		if l.Verdict != nil {
			data.Verdict = mustJSON(l.Verdict)
		}
		p.Events = append(p.Events, ledger.ImportedStageEvent(ledger.About{Time: t, Stage: validStage(l.Stage)}, data))
		p.States = append(p.States, clone(cur))
	}
	end := created
	if u, ok := stamp(st.UpdatedTS); ok {
		end = u
	}
	if n := len(p.Events); n > 0 && p.Events[n-1].Time > end {
		end = p.Events[n-1].Time
	}
	finished := st.CurrentState == "OUTPUT" || st.CurrentState == "DONE"
	// The final event: the state as the source left it, leases cleared as a resume would.
	fin := clone(cur)
	if !graph {
		// Stages state.json marks done that the log does not tell (a log cut short
		// or missing) still count as recorded.
		logged := map[string]bool{}
		for _, s := range steps {
			logged[s.stage] = true
		}
		for _, n := range kimiStages {
			if sv, ok := st.Stages[n]; ok && sv.Status == "done" && !logged[n] {
				at, ok := stamp(sv.TS)
				if !ok {
					at = end
				}
				steps = append(steps, kimiStep{stage: n, at: at})
			}
		}
		fin = kimiPosition(s0, steps, st.CurrentState, st.RefinePasses, finished)
	} else {
		var prob *Problem
		if prob = kimiGraph(p, &h, &fin, dag, dp); prob != nil {
			return nil, prob
		}
	}
	if finished {
		fin.Status = ledger.RunCompleted
		for i := range fin.Stages {
			if fin.Stages[i].Status == ledger.StagePending {
				fin.Stages[i].Status = ledger.StageSkipped
			}
		}
	}
	p.Events = append(p.Events, ledger.ImportedEvent(ledger.About{Time: end}, ledger.ImportedData{Source: rd,
		ImportedKimi: &ledger.ImportedKimi{CurrentState: st.CurrentState, ResetJobs: p.Reset, RefinePasses: st.RefinePasses, JobIDs: p.JobIDs}}))
	p.States = append(p.States, fin)
	if fi, err := os.Lstat(filepath.Join(rd, "worktree")); err == nil && fi.IsDir() {
		p.Worktree = filepath.Join(rd, "worktree")
	}
	if len(p.JobIDs) > 0 {
		h.ImportedFrom.JobIDs = p.JobIDs
	}
	p.Header = h
	return p, nil
}

// kimiMaxPasses is kimi-atlas's cap of refine passes (verdict.MAX_PASSES).
const kimiMaxPasses = 2

// kimiStageDefs are a single run's stages, with kimi-atlas's gates and budgets: its
// pre-CODE approval is a human gate after GROUNDED (CODED starts only once it is
// passed), its OUTPUT a human gate; REFINE runs at most kimiMaxPasses times, and
// CODED and VERIFIED once more than that (the first pass, then one per refine).
func kimiStageDefs() []ledger.StageDef {
	var defs []ledger.StageDef
	for _, s := range kimiStages {
		d := ledger.StageDef{Name: s, MaxRetries: kimiMaxPasses}
		switch s {
		case "GROUNDED", "OUTPUT":
			d.Gate = "human"
		case "REFINE":
			d.MaxRetries = kimiMaxPasses - 1
		}
		defs = append(defs, d)
	}
	return defs
}

// kimiStep is one stage kimi-atlas recorded (ctxstore.advance), in order.
type kimiStep struct {
	stage, at string
}

// kimiNext is the stage the kimi-atlas resume procedure re-enters after last was
// recorded ("the stage after the last one recorded done"): the next in its order,
// but CODED after REFINE (a refine pass re-dispatches the coder), and none after
// OUTPUT. A conditional stage (CLARIFY, REFINE) that is next is a decision still to
// take, so it is left pending, not skipped.
func kimiNext(last string) string {
	if last == "REFINE" {
		return "CODED"
	}
	i := slices.Index(kimiStages, last)
	if i < 0 || i+1 >= len(kimiStages) {
		return ""
	}
	return kimiStages[i+1]
}

// kimiPosition is a single run's stages after steps, where the kimi-atlas resume
// procedure stands (docs/contract.md §13): before the stage it re-enters, each stage recorded is
// completed and each never recorded was skipped (CLARIFY when the run never needed
// it); from that stage on, everything is pending, so the re-verify after a refine
// pass comes next and VERIFIED is not shown completed. GROUNDED as the last step
// waits at its gate (the pre-CODE approval). Every recorded step is an attempt of
// its stage and each REFINE a rework, so the budgets go on from where the run was.
// last is the source's current_state ("": the last step); finished: the run ended.
func kimiPosition(s0 ledger.State, steps []kimiStep, last string, passes int, finished bool) ledger.State {
	if !slices.Contains(kimiStages, last) {
		last = lastStage(steps)
	}
	attempts := map[string][]ledger.Attempt{}
	seen := map[string]string{}
	for _, s := range steps {
		attempts[s.stage] = append(attempts[s.stage], ledger.Attempt{N: len(attempts[s.stage]) + 1, StartedAt: s.at})
		seen[s.stage] = s.at
	}
	st := kimiStatuses(s0, seen, last, max(len(attempts["REFINE"]), passes), finished)
	for i := range st.Stages {
		st.Stages[i].Attempts = attempts[st.Stages[i].Name]
	}
	return st
}

func lastStage(steps []kimiStep) string {
	if n := len(steps); n > 0 {
		return steps[n-1].stage
	}
	return ""
}

// kimiStatuses is kimiPosition's statuses: seen holds each stage recorded and when
// it last was, passes the refine passes.
func kimiStatuses(s0 ledger.State, seen map[string]string, last string, passes int, finished bool) ledger.State {
	st := clone(s0)
	resumeAt := len(kimiStages)
	if !finished {
		if next := kimiNext(last); last == "" {
			resumeAt = 0
		} else if next != "" {
			resumeAt = slices.Index(kimiStages, next)
		}
	}
	for i := range st.Stages {
		ss := &st.Stages[i]
		at, recorded := seen[ss.Name]
		ss.UpdatedAt = at
		if ss.Name == "REFINE" {
			ss.Reworks = passes
		}
		idx := slices.Index(kimiStages, ss.Name)
		switch {
		case idx >= resumeAt:
			ss.Status = ledger.StagePending
		case !recorded:
			ss.Status, ss.Reason = ledger.StageSkipped, "not recorded by kimi-atlas"
		case ss.Name == "GROUNDED" && last == "GROUNDED" && !finished:
			ss.Status, ss.Reason = ledger.StageGated, "kimi-atlas's pre-CODE approval"
		default:
			ss.Status = ledger.StageCompleted
		}
	}
	return st
}

// kimiGraph puts a graph run's jobs into fin, as plan.dag.json has them, after every
// check `job add` makes (docs/contract.md §13): job ids named one to one (assignNames: reserved
// names, names that differ only in case and ids git refuses get names of their
// own, the mapping in p.JobIDs), a need on a job the plan does not have, a job
// listed twice, a cycle, the job and depth caps. Any of these refuses the run.
func kimiGraph(p *Plan, h *ledger.Header, fin *ledger.State, dag kimiDAG, dp string) *Problem {
	spent := 0
	var ids []string
	listed := map[string]bool{}
	for _, j := range dag.Jobs {
		if listed[j.JobID] {
			return badErr(dp, fault.Usage("job %q is listed twice", j.JobID))
		}
		listed[j.JobID] = true
		ids = append(ids, j.JobID)
	}
	names, err := assignNames("job", ids, func(n string) bool { return ledger.CheckNodeName("job", n) == nil }, nil, nil)
	if err != nil {
		return badErr(dp, err)
	}
	jobOfNode := map[string]string{}
	for _, j := range dag.Jobs {
		if j.NodeID != "" {
			jobOfNode[j.NodeID] = names[j.JobID]
		}
	}
	var specs []ledger.JobSpec
	for _, j := range dag.Jobs {
		id := names[j.JobID]
		if id != j.JobID {
			p.JobIDs[j.JobID] = id
		}
		needs := []string{}
		for _, d := range j.Deps {
			n, ok := names[d]
			if !ok {
				return badErr(dp, fault.NotFound("job %q needs %q, which the plan does not have", j.JobID, d))
			}
			needs = append(needs, n)
		}
		state := j.State
		switch state {
		case ledger.JobPending, ledger.JobRunning, ledger.JobDone, ledger.JobFailed:
		default:
			return bad(dp, "job %q has state %q", j.JobID, j.State)
		}
		if j.Attempts < 0 {
			return bad(dp, "job %q has %d attempts", j.JobID, j.Attempts)
		}
		jb := ledger.Job{ID: id, State: state, Needs: needs, Kind: strings.ToLower(j.Kind), Attempts: j.Attempts, Scope: j.Scope}
		// What the job is to do lives on its node: scope, criteria, verify, and its
		// place in the expansion tree.
		if node, ok := dag.Nodes[j.NodeID]; ok {
			if len(node.ScopePaths) > 0 {
				scope, err := ledger.CanonicalScope(node.ScopePaths)
				if err != nil {
					return bad(dp, "node %q scope_paths: %v", j.NodeID, err)
				}
				jb.Scope = scope
			}
			// A DECOMPOSE node hands its criteria down to its children (kimi-atlas
			// refuses a split that drops one, plandag.criteria_conservation_defects):
			// its own DONE meets none of them.
			crit := node.Criteria
			if node.Kind == "DECOMPOSE" && len(node.Children) > 0 {
				crit = nil
			}
			for _, c := range crit {
				if slices.Contains(h.Criteria, c) {
					jb.Criteria = append(jb.Criteria, c)
				} else {
					p.Notes = append(p.Notes, fmt.Sprintf("node %s names criterion %q, which is not one of the run's: not kept on job %s", j.NodeID, c, id))
				}
			}
			jb.Verify, jb.Depth = node.VerifyCmd, node.Depth
			if node.Parent != "" {
				jb.Parent = jobOfNode[node.Parent]
			}
			if kind := strings.ToLower(node.Kind); jb.Kind == "" && kind != "" {
				jb.Kind = kind
			}
		}
		if jb.Kind != "" && ledger.ValidName("kind", jb.Kind) != nil {
			jb.Kind, _ = MapName(jb.Kind)
		}
		if jb.Depth < 0 || jb.Depth > ledger.MaxDepth(h) {
			// As an expansion past --max-depth is refused.
			return badErr(dp, fault.Refused("job %q is at depth %d, past the run's cap of %d (depth_max)", j.JobID, jb.Depth, ledger.MaxDepth(h)))
		}
		if state == ledger.JobDone {
			jb.Unverified = "imported from kimi-atlas: not verified here"
		}
		if state == ledger.JobRunning {
			jb.Lease, jb.Holder = ledger.LeaseToken(id, j.Attempts, 0, ""), "imported"
		}
		specs = append(specs, ledger.JobSpec{ID: id, Needs: needs, Scope: jb.Scope, Verify: jb.Verify, Kind: jb.Kind, Criteria: jb.Criteria})
		fin.Jobs = append(fin.Jobs, jb)
		spent += kimiDispatches(state, j.Attempts)
	}
	// The graph as a whole, through the checks of `job add` itself: reserved names,
	// case twins, needs, cycles (the names above pass the first two by construction).
	scratch := ledger.State{RunID: p.RunID}
	if err := ledger.CheckJobCap(h, &scratch, len(specs)); err != nil {
		return badErr(dp, err)
	}
	if err := ledger.AddJobs(&scratch, specs); err != nil {
		return badErr(dp, err)
	}
	p.Reset = ledger.ResumeReset(fin)
	fin.GasSpent = spent
	if dag.Meta.GasRemaining != nil {
		h.Gas = spent + *dag.Meta.GasRemaining
	}
	if dag.Meta.Gas > 0 {
		h.Gas = dag.Meta.Gas
	}
	return nil
}

func stageIndex(ss []ledger.StageState, name string) int {
	for i := range ss {
		if ss[i].Name == name {
			return i
		}
	}
	return -1
}

func validStage(s string) string {
	if ledger.ValidName("stage", s) == nil {
		return s
	}
	n, _ := MapName(s)
	return n
}

func clone(s ledger.State) ledger.State {
	c := s
	c.Stages = append([]ledger.StageState(nil), s.Stages...)
	c.Jobs = append([]ledger.Job(nil), s.Jobs...)
	return c
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// strictJSON decodes one JSON document and refuses a torn or trailing one.
func strictJSON(b []byte, v any) error {
	if len(strings.TrimSpace(string(b))) == 0 {
		return fmt.Errorf("empty file")
	}
	if !json.Valid(b) {
		var probe any
		if err := json.Unmarshal(b, &probe); err != nil {
			return fmt.Errorf("not valid JSON (torn or truncated?): %w", err)
		}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("unexpected shape: %w", err)
	}
	return nil
}

// hashFiles is a stable hash of a source run's files.
func hashFiles(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

var badChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// MapName returns a name git-atlas accepts for a source id, deterministically, and
// whether it had to change it: refused characters become "-", and a name that is
// still refused (or too long) becomes a prefix plus a short hash of the original.
func MapName(id string) (string, bool) {
	if ledger.ValidName("run", id) == nil {
		return id, false
	}
	n := badChars().ReplaceAllString(id, "-")
	n = strings.Trim(strings.ReplaceAll(n, "..", "."), "-.")
	sum := sha256.Sum256([]byte(id))
	if ledger.ValidName("run", n) != nil || len(n) > 64 {
		if len(n) > 50 {
			n = n[:50]
		}
		n = strings.Trim(n, "-.")
		if n == "" {
			n = "run"
		}
		n += "-" + hex.EncodeToString(sum[:])[:8]
	}
	return n, true
}
