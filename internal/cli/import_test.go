package cli

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportMatchesSource imports source trees of both reference systems, written as
// their own code writes them (kimi-atlas scripts/ctxstore.py, plandag.py,
// scheduler.py; AgenTeam runtime/agenteam/state.py, events.py, runner.py): a graph run
// interrupted with a dirty headless worktree and a task sub-run, a finished single run
// with refine passes and verify_safe null, a dispatched AgenTeam run with a retry, a
// finished one, and torn files of each. Then show, log, job list and resume --plan
// must say, field by field, what the source said; the source tree is byte-identical
// and a second import moves no ref.
func TestImportMatchesSource(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	base := strings.TrimSpace(gitOut(t, repo, "rev-parse", "HEAD"))
	src := t.TempDir()
	kimi, ateam := filepath.Join(src, ".atlas"), filepath.Join(src, ".agenteam")
	const g, s = "20260705-101500", "20260705-101501" // kimi-atlas run ids: one-second stamps
	files := map[string]string{
		g + "/state.json": `{
  "run_id": "` + g + `", "created_ts": "2026-07-05T10:15:00Z", "updated_ts": "2026-07-05T10:40:00Z",
  "current_state": "CODED", "intent": "split the parser",
  "success_criteria": ["parser split", "tests pass"],
  "stages": {"INIT": {"status": "done", "ts": "2026-07-05T10:15:01Z"}, "INTENT_CAPTURED": {"status": "done", "ts": "2026-07-05T10:15:02Z"}},
  "refine_passes": 0, "draft_ref": "", "verify_cmd": "go test ./...", "scope_paths": ["parser/"], "baseline_sha": "` + base + `"
}`,
		g + "/intent.txt": "split the parser",
		g + "/log.jsonl": `{"run_id": "` + g + `", "stage": "INIT", "ts": "2026-07-05T10:15:01Z"}
{"run_id": "` + g + `", "stage": "INTENT_CAPTURED", "ts": "2026-07-05T10:15:02Z", "agent": "root"}
`,
		g + "/plan.dag.json": `{"meta": {"depth_max": 2, "node_max": 6, "gas_remaining": 4, "next_seq": 2},
 "nodes": {
  "root": {"kind": "DECOMPOSE", "depth": 0, "deps": [], "scope_paths": ["parser/"], "success_criteria_subset": ["parser split", "tests pass"], "children": ["root.1", "root.2"]},
  "root.1": {"kind": "LEAF", "depth": 1, "deps": [], "scope_paths": ["parser/lex/"], "success_criteria_subset": ["parser split"], "verify_cmd": "go test ./parser/lex", "parent": "root", "run_id": "` + g + `/tasks/root.1"},
  "root.2": {"kind": "LEAF", "depth": 1, "deps": ["root.1"], "scope_paths": ["parser/ast/"], "success_criteria_subset": ["tests pass"], "parent": "root"}
 },
 "jobs": [
  {"job_id": "root#0", "node_id": "root", "kind": "DECOMPOSE", "deps": [], "attempts": 0, "state": "DONE"},
  {"job_id": "root.1#0", "node_id": "root.1", "kind": "LEAF", "deps": [], "attempts": 1, "state": "RUNNING", "lease": "root.1#0#1"},
  {"job_id": "root.2#0", "node_id": "root.2", "kind": "LEAF", "deps": ["root.1#0"], "attempts": 0, "state": "PENDING"}
 ]}`,
		g + "/tasks/root.1/state.json": `{"run_id": "` + g + `/tasks/root.1", "created_ts": "2026-07-05T10:20:00Z", "current_state": "GROUNDED", "stages": {}}`,
		s + "/state.json": `{"run_id": "` + s + `", "created_ts": "2026-07-05T10:15:01Z", "updated_ts": "2026-07-05T10:30:00Z",
  "current_state": "OUTPUT", "intent": "fix the typo", "success_criteria": ["typo gone"], "stages": {},
  "refine_passes": 2, "draft_ref": "draft.v2.md", "verify_cmd": "make check", "verify_safe": null, "scope_paths": [], "baseline_sha": "` + base + `"}`,
		s + "/log.jsonl":  kimiLog(s, "INIT", "INTENT_CAPTURED", "TRIAGED", "GROUNDED", "CODED", "VERIFIED", "REFINE", "REFINE", "OUTPUT"),
		"torn/state.json": `{"run_id": "torn", "created_ts": "2026-07-05T09:00:00Z", "current_st`,
	}
	at := map[string]string{
		"state/20260705T110000Z.json": `{
  "run_id": "20260705T110000Z", "task": "add --json", "pipeline_mode": "standalone", "profile": null,
  "stage_order": ["design", "implement", "review"], "current_stage": "implement",
  "started_at": "2026-07-05T11:00:00Z", "last_update": "2026-07-05T11:30:00Z", "config_hash": "c0ffee", "status": "running", "branch": null,
  "stages": {
    "design": {"status": "completed", "roles": ["architect"], "gate": "auto", "verify": null, "verify_safe": null, "max_retries": 0, "rework_to": null, "criteria": {}, "started_at": "2026-07-05T11:01:00Z", "completed_at": "2026-07-05T11:05:00Z", "baseline": "` + base + `"},
    "implement": {"status": "dispatched", "roles": ["dev"], "gate": "human", "verify": "true", "verify_safe": true, "max_retries": 2, "rework_to": "design", "criteria": {}, "started_at": "2026-07-05T11:20:00Z", "baseline": "` + base + `",
      "verify_attempts": [{"attempt": 1, "result": "fail"}]},
    "review": {"status": "pending", "roles": ["reviewer"], "gate": "reviewer", "verify": null, "verify_safe": null, "max_retries": 1, "rework_to": "implement", "criteria": {}}
  },
  "write_locks": {"active": null, "queue": []}
}`,
		"events/20260705T110000Z.jsonl": ateamEvent("11:00:00", "run_started", "", `{"task": "add --json", "pipeline_mode": "standalone"}`) +
			ateamEvent("11:01:00", "stage_dispatched", "design", `{"roles": ["architect"], "isolation": "runner"}`) +
			ateamEvent("11:05:00", "stage_completed", "design", `{"result": "passed"}`) +
			ateamEvent("11:06:00", "stage_dispatched", "implement", `{"roles": ["dev"], "isolation": "runner"}`) +
			ateamEvent("11:15:00", "stage_verified", "implement", `{"result": "fail", "command": "true", "attempt": 1}`) +
			ateamEvent("11:20:00", "runner_retry", "implement", `{"attempt": 2, "max_retries": 2}`),
		"state/20260705T100000Z.json": `{"run_id": "20260705T100000Z", "task": "done", "stage_order": ["main"], "started_at": "2026-07-05T10:00:00Z", "last_update": "2026-07-05T10:09:00Z", "config_hash": "", "status": "completed",
  "stages": {"main": {"status": "completed", "gate": "auto", "verify": null, "verify_safe": null, "max_retries": 1, "rework_to": null}}}`,
		"events/20260705T100000Z.jsonl": ateamEvent("10:01:00", "stage_dispatched", "main", `{"roles": ["dev"], "isolation": "runner"}`) +
			ateamEvent("10:09:00", "stage_completed", "main", `{"result": "passed"}`) +
			ateamEvent("10:09:00", "run_finished", "", `{"status": "completed"}`),
		"state/20260705T120000Z.json":   `{"run_id": "20260705T120000Z", "task": "torn", "stage_order": ["main"], "started_at": "2026-07-05T12:00:00Z", "last_update": "2026-07-05T12:00:00Z", "status": "running", "stages": {"main": {"status": "pending"}}}`,
		"events/20260705T120000Z.jsonl": `{"ts": "2026-07-05T12:00:00Z", "type": "stage_disp`,
	}
	for name, body := range files {
		writeFile(t, filepath.Join(kimi, name), body)
	}
	for name, body := range at {
		writeFile(t, filepath.Join(ateam, name), body)
	}
	// kimi-atlas's headless worktree, with uncommitted work in it.
	wt := filepath.Join(kimi, g, "worktree")
	gitOut(t, repo, "worktree", "add", "-q", "--detach", wt, "HEAD")
	writeFile(t, filepath.Join(wt, "parser", "lex.go"), "package lex // half done\n")
	before := treeHash(t, src)

	atlas(t, repo, "import", "kimi-atlas", kimi)
	atlas(t, repo, "import", "agenteam", ateam)

	type check struct{ path, want string }
	for _, tc := range []struct {
		args   []string
		checks []check
	}{
		{[]string{"show", g}, []check{
			{"header.kind", "graph"}, {"header.intent", "split the parser"},
			{"header.criteria", `["parser split","tests pass"]`}, {"header.verify", "go test ./..."},
			{"header.baseline", base}, {"header.created_at", "2026-07-05T10:15:00Z"},
			{"header.imported_from.system", "kimi-atlas"}, {"header.imported_from.source_id", g},
			{"header.max_depth", "2"}, {"header.max_jobs", "6"},
			// Gas: 4 remaining; dispatched: root once, root.1 twice (one requeue).
			{"header.gas", "7"}, {"state.gas_spent", "3"},
			{"state.status", "running"},
			{"state.worktrees.0.node", "imported"}, {"state.worktrees.0.adopted", "kimi-atlas"},
			{"state.snapshots.@len", "1"},
			// The criteria are the leaves' to meet: the DECOMPOSE root hands them down.
			{"verdict.verdict", "unresolved"}, {"verdict.unresolved", `["parser split","tests pass"]`},
		}},
		{[]string{"log", g}, []check{
			{"events.0.type", "run_started"}, {"events.0.time", "2026-07-05T10:15:00Z"},
			{"events.1.stage", "INIT"}, {"events.1.time", "2026-07-05T10:15:01Z"},
			{"events.2.stage", "INTENT_CAPTURED"}, {"events.2.time", "2026-07-05T10:15:02Z"},
			{"events.3.type", "imported"}, {"events.3.time", "2026-07-05T10:40:00Z"},
			{"events.3.data.reset_jobs", `["root.1-0"]`}, {"events.4.type", "snapshot"}, {"events.5.type", "worktree_adopted"},
		}},
		{[]string{"job", "list", g}, []check{
			{"jobs.@len", "3"},
			{"jobs.0.id", "root-0"}, {"jobs.0.state", "DONE"}, {"jobs.0.attempts", "0"}, {"jobs.0.kind", "decompose"},
			{"jobs.0.criteria", "<none>"},
			{"jobs.1.id", "root.1-0"}, {"jobs.1.state", "PENDING"}, {"jobs.1.attempts", "1"},
			{"jobs.1.scope", `["{parser/lex,parser/lex/**}"]`}, {"jobs.1.verify", "go test ./parser/lex"},
			{"jobs.1.depth", "1"}, {"jobs.1.parent", "root-0"}, {"jobs.1.criteria", `["parser split"]`},
			{"jobs.2.needs", `["root.1-0"]`}, {"jobs.2.state", "PENDING"},
			{"ready", `["root.1-0"]`}, {"gas_remaining", "4"}, {"gas_limit", "7"},
		}},
		{[]string{"resume", "--plan", g}, []check{
			{"live", "false"}, {"baseline.present", "true"}, {"frontier.ready_jobs", `["root.1-0"]`},
			{"frontier.gas_remaining", "4"}, {"worktrees.0.action", "keep"},
			{"commands.@len", "2"}, {"commands.1.trusted", "false"}, {"next_action.action", "claim"},
		}},
		{[]string{"show", s}, []check{
			{"header.kind", "single"}, {"header.intent", "fix the typo"}, {"header.verify_safe", "<none>"},
			{"state.status", "completed"}, {"state.updated_at", "2026-07-05T10:30:00Z"}, {"state.stages.@len", "9"},
			{"state.stages.2.name", "CLARIFY"}, {"state.stages.2.status", "skipped"},
			{"state.stages.6.status", "completed"}, {"state.stages.7.name", "REFINE"}, {"state.stages.7.reworks", "2"},
		}},
		{[]string{"log", s}, []check{{"events.@len", "11"}, {"events.7.stage", "REFINE"}, {"events.9.stage", "OUTPUT"}}},
		{[]string{"show", "20260705T110000Z"}, []check{
			{"header.intent", "add --json"}, {"header.imported_from.config_hash", "c0ffee"},
			{"header.stages.@len", "3"}, {"header.stages.1.name", "implement"}, {"header.stages.1.gate", "human"},
			{"header.stages.1.verify", "true"}, {"header.stages.1.verify_safe", "true"},
			{"header.stages.1.max_retries", "2"}, {"header.stages.1.rework_to", "design"},
			{"header.stages.0.gate", "<none>"}, {"header.stages.2.gate", "reviewer"},
			{"state.stages.0.status", "completed"}, {"state.stages.1.status", "dispatched"},
			{"state.stages.1.attempts.@len", "2"}, {"state.stages.1.attempts.0.started_at", "2026-07-05T11:06:00Z"},
			{"state.stages.1.attempts.1.started_at", "2026-07-05T11:20:00Z"}, {"state.stages.2.status", "pending"},
			{"state.status", "running"},
		}},
		{[]string{"log", "20260705T110000Z"}, []check{
			{"events.1.type", "stage_dispatched"}, {"events.1.time", "2026-07-05T11:01:00Z"},
			{"events.4.type", "stage_verified"}, {"events.4.data.source.result", "fail"},
			{"events.5.type", "runner_retry"}, {"events.5.time", "2026-07-05T11:20:00Z"},
		}},
		{[]string{"resume", "--plan", "20260705T110000Z"}, []check{
			{"interrupted_stage.name", "implement"}, {"interrupted_stage.status", "dispatched"},
			{"interrupted_stage.attempts", "2"}, {"interrupted_stage.budget_left", "1"},
			{"interrupted_stage.verify_command", "true"}, {"interrupted_stage.verify_safe", "true"},
			{"interrupted_stage.has_gate", "true"}, {"config_drift.match", "true"},
			{"completed_stages", `["design"]`}, {"remaining_stages", `["review"]`},
			{"commands.0.trusted", "false"},
		}},
		{[]string{"show", "20260705T100000Z"}, []check{{"state.status", "completed"}, {"state.stages.0.status", "completed"}}},
	} {
		var doc any
		if err := json.Unmarshal([]byte(atlas(t, repo, append(tc.args, "--json")...)), &doc); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for _, c := range tc.checks {
			if got := jsonAt(doc, c.path); got != c.want {
				t.Errorf("%s: %s = %s, want %s", strings.Join(tc.args, " "), c.path, got, c.want)
			}
		}
	}
	// The runs that could not be read, and nothing else, are missing.
	var list struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(atlas(t, repo, "list", "--all", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range list.Runs {
		ids = append(ids, r.RunID)
	}
	if got := strings.Join(ids, " "); len(ids) != 4 || strings.Contains(got, "torn") || strings.Contains(got, "120000Z") || strings.Contains(got, "tasks") {
		t.Errorf("imported runs: %s, want the four readable ones", got)
	}
	if after := treeHash(t, src); after != before {
		t.Errorf("the source tree changed:\n%s\n---\n%s", before, after)
	}
	refs := gitOut(t, repo, "for-each-ref", "--format=%(refname) %(objectname)")
	atlas(t, repo, "import", "kimi-atlas", kimi)
	atlas(t, repo, "import", "agenteam", ateam)
	if again := gitOut(t, repo, "for-each-ref", "--format=%(refname) %(objectname)"); again != refs {
		t.Errorf("a second import moved refs:\n%s\n---\n%s", refs, again)
	}
}

func kimiLog(run string, stages ...string) string {
	var b strings.Builder
	for i, st := range stages {
		fmt.Fprintf(&b, `{"run_id": %q, "stage": %q, "ts": "2026-07-05T10:%02d:00Z"}`+"\n", run, st, 16+i)
	}
	return b.String()
}

func ateamEvent(clock, typ, stage, data string) string {
	st := "null"
	if stage != "" {
		st = strconv.Quote(stage)
	}
	return fmt.Sprintf(`{"ts": "2026-07-05T%sZ", "type": %q, "run_id": "r", "stage": %s, "data": %s}`+"\n", clock, typ, st, data)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeHash lists every file under dir with its mode and a hash of its bytes.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v %x\n", rel, info.Mode(), sha256.Sum256(body))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// jsonAt is the value at a dotted path (numbers index lists, @len is a list's length):
// a string as it is, anything else as JSON, "<none>" when the path leads nowhere.
func jsonAt(doc any, path string) string {
	cur := doc
	for k := range strings.SplitSeq(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[k]
			if !ok {
				return "<none>"
			}
			cur = next
		case []any:
			if k == "@len" {
				return strconv.Itoa(len(v))
			}
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(v) {
				return "<none>"
			}
			cur = v[i]
		default:
			return "<none>"
		}
	}
	if s, ok := cur.(string); ok {
		return s
	}
	b, _ := json.Marshal(cur)
	return string(b)
}
