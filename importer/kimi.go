// Package importer brings runs over from the reference systems (SPEC §13): it reads
// their files (never writes them) and turns each source run into a plan of ledger
// writes; Apply makes them through gitstate's store.
package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
)

// Systems.
const (
	KimiAtlas = "kimi-atlas"
	AgenTeam  = "agenteam"
)

// kimiStages is kimi-atlas's canonical stage machine, in order (its ctxstore.STAGES).
var kimiStages = []string{"INIT", "INTENT_CAPTURED", "CLARIFY", "TRIAGED", "GROUNDED", "CODED", "VERIFIED", "REFINE", "OUTPUT"}

// Plan is one source run made ready to write.
type Plan struct {
	SourceID string            `json:"source_id"`
	RunID    string            `json:"run_id"`
	Mapped   bool              `json:"mapped,omitempty"`
	Path     string            `json:"path"`
	Header   gitstate.Header   `json:"-"`
	States   []gitstate.State  `json:"-"` // the state after each event
	Events   []gitstate.Event  `json:"-"`
	JobIDs   map[string]string `json:"job_ids,omitempty"` // source job id -> job id, where mapped
	Reset    []string          `json:"reset_jobs,omitempty"`
	Worktree string            `json:"worktree,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
}

// Problem is a source run that could not be read.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Scan reads a kimi-atlas tree (.atlas/): each <run>/ with a state.json is a run;
// task sub-runs under <run>/tasks/ belong to their parent and are not runs of their own.
func ScanKimi(dir string) ([]*Plan, []Problem, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var plans []*Plan
	var probs []Problem
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		rd := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(rd, "state.json")); err != nil {
			continue
		}
		p, prob := kimiRun(rd, e.Name())
		if prob != nil {
			probs = append(probs, *prob)
			continue
		}
		plans = append(plans, p)
	}
	return plans, probs, nil
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
	case gitstate.JobRunning, gitstate.JobDone:
		return attempts + 1
	case gitstate.JobFailed:
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
			return gitstate.Stamp(t), true
		}
	}
	return "", false
}

func kimiRun(rd, name string) (*Plan, *Problem) {
	files := map[string][]byte{}
	for _, f := range []string{"state.json", "log.jsonl", "plan.dag.json", "intent.txt"} {
		b, err := os.ReadFile(filepath.Join(rd, f))
		if err == nil {
			files[f] = b
		} else if !os.IsNotExist(err) {
			return nil, bad(filepath.Join(rd, f), "cannot read: %v", err)
		}
	}
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
	scope, err := gitstate.CanonicalScope(st.ScopePaths)
	if err != nil {
		return nil, bad(sp, "scope_paths: %v", err)
	}
	h := gitstate.Header{RunID: p.RunID, Kind: gitstate.KindSingle, CreatedAt: created, Intent: intent,
		Criteria: st.Criteria, Verify: st.VerifyCmd, Scope: scope, Baseline: st.BaselineSHA,
		ImportedFrom: &gitstate.ImportedFrom{System: KimiAtlas, Path: rd, SourceID: srcID, Hash: hashFiles(files)}}
	if st.VerifySafe == nil && st.VerifyCmd != "" {
		p.Notes = append(p.Notes, "verify_safe not recorded: the verify command is not trusted")
	}
	var dag kimiDAG
	_, graph := files["plan.dag.json"]
	if graph {
		dp := filepath.Join(rd, "plan.dag.json")
		if err := strictJSON(files["plan.dag.json"], &dag); err != nil {
			return nil, bad(dp, "%v", err)
		}
		h.Kind, h.MaxAttempts, h.Stages = gitstate.KindGraph, kimiMaxAttempts, []gitstate.StageDef{}
		// The halting caps carry over: a resumed run expands no further than it could there.
		h.MaxDepth, h.MaxJobs = dag.Meta.DepthMax, dag.Meta.NodeMax
	} else {
		for _, s := range kimiStages {
			h.Stages = append(h.Stages, gitstate.StageDef{Name: s, MaxRetries: gitstate.DefaultMaxRetries})
		}
	}
	// The state right after start: every stage pending.
	s0 := gitstate.State{RunID: p.RunID, Status: gitstate.RunRunning, Stages: []gitstate.StageState{}}
	for _, d := range h.Stages {
		s0.Stages = append(s0.Stages, gitstate.StageState{Name: d.Name, Status: gitstate.StagePending})
	}
	p.Events = append(p.Events, gitstate.Event{Type: gitstate.EventRunStarted, Time: created, Data: mustJSON(map[string]any{"baseline": st.BaselineSHA, "imported_from": KimiAtlas})})
	p.States = append(p.States, s0)
	cur := clone(s0)
	refines := 0
	for _, l := range log {
		t, _ := stamp(l.TS)
		if l.Stage == "REFINE" {
			refines++
		}
		if !graph {
			if i := stageIndex(cur.Stages, l.Stage); i >= 0 {
				cur.Stages[i].Status = gitstate.StageCompleted
				cur.Stages[i].UpdatedAt = t
				if l.Stage == "REFINE" {
					cur.Stages[i].Reworks = refines
				}
			}
		}
		p.Events = append(p.Events, gitstate.Event{Type: gitstate.EventImportedStage, Time: t, Stage: validStage(l.Stage), Data: mustJSON(map[string]any{"source_stage": l.Stage})})
		p.States = append(p.States, clone(cur))
	}
	// The final event: the state as the source left it, leases cleared as a resume would.
	fin := clone(cur)
	if !graph {
		for name, sv := range st.Stages {
			if i := stageIndex(fin.Stages, name); i >= 0 && sv.Status == "done" {
				fin.Stages[i].Status = gitstate.StageCompleted
			}
		}
		if i := stageIndex(fin.Stages, "REFINE"); i >= 0 && st.RefinePasses > fin.Stages[i].Reworks {
			fin.Stages[i].Reworks = st.RefinePasses
		}
	} else {
		spent := 0
		seen := map[string]string{}
		jobOfNode := map[string]string{}
		for _, j := range dag.Jobs {
			if j.NodeID != "" {
				id, _ := MapName(j.JobID)
				jobOfNode[j.NodeID] = id
			}
		}
		for _, j := range dag.Jobs {
			id, mapped := MapName(j.JobID)
			if other, dup := seen[id]; dup {
				return nil, bad(filepath.Join(rd, "plan.dag.json"), "jobs %q and %q would both be named %q here", other, j.JobID, id)
			}
			seen[id] = j.JobID
			if mapped {
				p.JobIDs[j.JobID] = id
			}
			var needs []string
			for _, d := range j.Deps {
				n, _ := MapName(d)
				needs = append(needs, n)
			}
			if needs == nil {
				needs = []string{}
			}
			state := j.State
			switch state {
			case gitstate.JobPending, gitstate.JobRunning, gitstate.JobDone, gitstate.JobFailed:
			default:
				return nil, bad(filepath.Join(rd, "plan.dag.json"), "job %q has state %q", j.JobID, j.State)
			}
			jb := gitstate.Job{ID: id, State: state, Needs: needs, Kind: strings.ToLower(j.Kind), Attempts: j.Attempts, Scope: j.Scope}
			// What the job is to do lives on its node: scope, criteria, verify, and its
			// place in the expansion tree.
			if node, ok := dag.Nodes[j.NodeID]; ok {
				if len(node.ScopePaths) > 0 {
					scope, err := gitstate.CanonicalScope(node.ScopePaths)
					if err != nil {
						return nil, bad(filepath.Join(rd, "plan.dag.json"), "node %q scope_paths: %v", j.NodeID, err)
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
			if jb.Kind != "" && gitstate.ValidName("kind", jb.Kind) != nil {
				jb.Kind, _ = MapName(jb.Kind)
			}
			if state == gitstate.JobDone {
				jb.Unverified = "imported from kimi-atlas: not verified here"
			}
			if state == gitstate.JobRunning {
				jb.Lease, jb.Holder = gitstate.LeaseToken(id, j.Attempts, 0, ""), "imported"
			}
			fin.Jobs = append(fin.Jobs, jb)
			spent += kimiDispatches(state, j.Attempts)
		}
		p.Reset = gitstate.ResumeReset(&fin)
		fin.GasSpent = spent
		if dag.Meta.GasRemaining != nil {
			h.Gas = spent + *dag.Meta.GasRemaining
		}
		if dag.Meta.Gas > 0 {
			h.Gas = dag.Meta.Gas
		}
	}
	if st.CurrentState == "OUTPUT" || st.CurrentState == "DONE" {
		fin.Status = gitstate.RunCompleted
		for i := range fin.Stages {
			if fin.Stages[i].Status == gitstate.StagePending {
				fin.Stages[i].Status = gitstate.StageSkipped
			}
		}
	}
	end := created
	if u, ok := stamp(st.UpdatedTS); ok {
		end = u
	}
	if n := len(p.Events); n > 0 && p.Events[n-1].Time > end {
		end = p.Events[n-1].Time
	}
	p.Events = append(p.Events, gitstate.Event{Type: gitstate.EventImported, Time: end, Data: mustJSON(map[string]any{"source": rd, "current_state": st.CurrentState, "reset_jobs": p.Reset, "refine_passes": st.RefinePasses})})
	p.States = append(p.States, fin)
	if fi, err := os.Stat(filepath.Join(rd, "worktree")); err == nil && fi.IsDir() {
		p.Worktree = filepath.Join(rd, "worktree")
	}
	p.Header = h
	return p, nil
}

func stageIndex(ss []gitstate.StageState, name string) int {
	for i := range ss {
		if ss[i].Name == name {
			return i
		}
	}
	return -1
}

func validStage(s string) string {
	if gitstate.ValidName("stage", s) == nil {
		return s
	}
	n, _ := MapName(s)
	return n
}

func clone(s gitstate.State) gitstate.State {
	c := s
	c.Stages = append([]gitstate.StageState(nil), s.Stages...)
	c.Jobs = append([]gitstate.Job(nil), s.Jobs...)
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
			return fmt.Errorf("not valid JSON (torn or truncated?): %v", err)
		}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("unexpected shape: %v", err)
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
	if gitstate.ValidName("run", id) == nil {
		return id, false
	}
	n := badChars().ReplaceAllString(id, "-")
	n = strings.Trim(strings.ReplaceAll(n, "..", "."), "-.")
	sum := sha256.Sum256([]byte(id))
	if gitstate.ValidName("run", n) != nil || len(n) > 64 {
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
