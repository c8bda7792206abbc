package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMapName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"20260701-120000", "20260701-120000"},
		{"root.1#0", "root.1-0"},
		{"root#0", "root-0"},
		{"a/b", "a-b"},
		{"x.lock", ""}, // still refused after the first mapping: hashed
		{"#", ""},
	} {
		got, mapped := MapName(tc.in)
		if ledger.ValidName("run", got) != nil {
			t.Errorf("MapName(%q) = %q, which git-atlas refuses", tc.in, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("MapName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if mapped != (got != tc.in) {
			t.Errorf("MapName(%q): mapped = %v for %q", tc.in, mapped, got)
		}
		if again, _ := MapName(tc.in); again != got {
			t.Errorf("MapName(%q) is not deterministic: %q then %q", tc.in, got, again)
		}
	}
}

// TestKimiFields checks, field by field, that what the source says is what the plan's
// header and final state say.
func TestKimiFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"g/state.json": `{"run_id":"g","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:05:00Z","current_state":"CODED","intent":"i","success_criteria":["c1","c2"],"stages":{},"refine_passes":0,"verify_cmd":"make","verify_safe":null,"scope_paths":["src/"],"baseline_sha":"abc"}`,
		"g/intent.txt": "the intent\n",
		"g/log.jsonl":  `{"run_id":"g","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n",
		// plan.dag.json as kimi-atlas writes it (schemas.json task-dag, dag-node, job):
		// the plan in nodes, what happened in jobs ("<node>#0", scheduler.seed_jobs).
		"g/plan.dag.json": `{"meta":{"gas_remaining":3,"depth_max":3,"node_max":9,"next_seq":3},
			"nodes":{"r":{"kind":"DECOMPOSE","depth":0,"deps":[],"scope_paths":[],"success_criteria_subset":["c1","c2"],"children":["r.1","r.2","r.3"]},
			 "r.1":{"kind":"LEAF","depth":1,"deps":[],"scope_paths":["src/a/"],"success_criteria_subset":["c1"],"parent":"r"},
			 "r.2":{"kind":"LEAF","depth":1,"deps":["r.1"],"scope_paths":["src/b/**"],"success_criteria_subset":["c2","not-a-run-criterion"],"verify_cmd":"make check","parent":"r"},
			 "r.3":{"kind":"LEAF","depth":1,"deps":[],"scope_paths":["docs"],"success_criteria_subset":[],"parent":"r"}},
			"jobs":[{"job_id":"r.1#0","node_id":"r.1","deps":[],"attempts":2,"state":"FAILED","kind":"LEAF"},{"job_id":"r.2#0","node_id":"r.2","kind":"LEAF","deps":["r.1#0"],"attempts":1,"state":"RUNNING","lease":"r.2#0#1"},{"job_id":"r#0","node_id":"r","kind":"DECOMPOSE","deps":[],"attempts":0,"state":"PENDING"},{"job_id":"r.3#0","node_id":"r.3","kind":"LEAF","deps":[],"attempts":0,"state":"DONE"}]}`,
		"s/state.json":         `{"run_id":"s","created_ts":"2026-07-01T11:00:00Z","updated_ts":"2026-07-01T11:09:00Z","current_state":"OUTPUT","stages":{"INIT":{"status":"done","ts":"2026-07-01T11:00:00Z"}},"refine_passes":3,"scope_paths":[],"baseline_sha":"def"}`,
		"s/log.jsonl":          `{"run_id":"s","stage":"INIT","ts":"2026-07-01T11:00:00Z"}` + "\n" + `{"run_id":"s","stage":"REFINE","ts":"2026-07-01T11:08:00Z"}` + "\n",
		"torn/state.json":      `{"run_id":"torn","created_ts":"2026-07-01T11`,
		"tornlog/state.json":   `{"run_id":"tornlog","created_ts":"2026-07-01T11:00:00Z","current_state":"INIT","stages":{}}`,
		"tornlog/log.jsonl":    `{"run_id":"tornlog","stage":"INIT","ts":"2026-07-01T11:00:00Z"}`,
		"g/tasks/x/state.json": `{"run_id":"g/tasks/x","current_state":"OUTPUT"}`,
		// DONE is kimi-atlas's other terminal state (resume._TERMINAL_RUN_STATES).
		"d/state.json": `{"run_id":"d","created_ts":"2026-07-01T10:00:00Z","updated_ts":"2026-07-01T10:09:00Z","current_state":"DONE","stages":{},"scope_paths":[]}`,
	})
	plans, probs, err := ScanKimi(t.Context(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, p := range probs {
		rel, _ := filepath.Rel(dir, p.Path)
		reasons[rel] = p.Reason
	}
	for file, want := range map[string]string{"torn/state.json": "not valid JSON", "tornlog/log.jsonl": "torn"} {
		if !strings.Contains(reasons[file], want) {
			t.Errorf("problem for %s = %q, want it to say %q", file, reasons[file], want)
		}
	}
	if len(plans) != 3 {
		t.Fatalf("got %d plans, want 3 (g, s and d; a task sub-run is not a run)", len(plans))
	}
	by := map[string]*Plan{}
	for _, p := range plans {
		by[p.RunID] = p
	}
	g, s := by["g"], by["s"]
	gf, sf := g.States[len(g.States)-1], s.States[len(s.States)-1]
	for _, tc := range []struct {
		field     string
		got, want any
	}{
		{"g kind", g.Header.Kind, ledger.KindGraph},
		{"g intent (intent.txt wins)", g.Header.Intent, "the intent"},
		{"g criteria", strings.Join(g.Header.Criteria, ","), "c1,c2"},
		{"g verify", g.Header.Verify, "make"},
		{"g verify_safe (null: not safe)", g.Header.VerifySafe, false},
		{"g baseline (abc is no object id: none)", g.Header.Baseline.String(), ""},
		{"g source baseline, for the note", g.badBaseline, "abc"},
		{"g created", g.Header.CreatedAt, "2026-07-01T12:00:00Z"},
		// Gas is charged per dispatch; kimi-atlas's attempts count requeues only: r.1
		// FAILED at the cap (2 timeouts: 2 dispatches), r.2 RUNNING after 1 timeout (2),
		// r PENDING (0), r.3 DONE first time (1).
		{"g gas (spent + remaining)", g.Header.Gas, 8},
		{"g gas spent (dispatches)", gf.GasSpent, 5},
		{"g depth_max", g.Header.MaxDepth, 3},
		{"g node_max", g.Header.MaxJobs, 9},
		{"g job 0 scope (node scope_paths, canonical)", strings.Join(gf.Jobs[0].Scope, ","), "{src/a,src/a/**}"},
		{"g job 0 criteria (node subset)", strings.Join(gf.Jobs[0].Criteria, ","), "c1"},
		{"g job 0 depth", gf.Jobs[0].Depth, 1},
		{"g job 0 parent (node r's job)", gf.Jobs[0].Parent, "r-0"},
		{"g job 1 verify (node verify_cmd)", gf.Jobs[1].Verify, "make check"},
		{"g job 1 criteria (the run's only)", strings.Join(gf.Jobs[1].Criteria, ","), "c2"},
		{"g job 1 kind", gf.Jobs[1].Kind, "leaf"},
		{"g job 2 kind (node kind)", gf.Jobs[2].Kind, "decompose"},
		{"g job 2 depth (root)", gf.Jobs[2].Depth, 0},
		{"g job 3 DONE unverified here", gf.Jobs[3].Unverified != "", true},
		{"g criterion not the run's: noted", strings.Contains(strings.Join(g.Notes, "\n"), `"not-a-run-criterion"`), true},
		{"g job 0 id", gf.Jobs[0].ID, "r.1-0"},
		{"g job 0 state", gf.Jobs[0].State, ledger.JobFailed},
		{"g job 0 attempts", gf.Jobs[0].Attempts, 2},
		{"g job 1 state (RUNNING reset)", gf.Jobs[1].State, ledger.JobPending},
		{"g job 1 lease cleared", gf.Jobs[1].Lease, ""},
		{"g job 1 attempts kept", gf.Jobs[1].Attempts, 1},
		{"g job 1 needs", strings.Join(gf.Jobs[1].Needs, ","), "r.1-0"},
		{"g reset", strings.Join(g.Reset, ","), "r.2-0"},
		{"g job map", g.JobIDs["r.2#0"], "r.2-0"},
		{"g status", gf.Status, ledger.RunRunning},
		{"g driver", gf.Driver == nil, true},
		{"g last event time", g.Events[len(g.Events)-1].Time, "2026-07-01T12:05:00Z"},
		{"g log event time", g.Events[1].Time, "2026-07-01T12:00:01Z"},
		{"g imported_from system", g.Header.ImportedFrom.System, KimiAtlas},
		{"s kind", s.Header.Kind, ledger.KindSingle},
		{"s status (OUTPUT is finished)", sf.Status, ledger.RunCompleted},
		{"s INIT", sf.Stages[0].Status, ledger.StageCompleted},
		{"s CLARIFY never ran", sf.Stages[2].Status, ledger.StageSkipped},
		{"s REFINE reworks (refine_passes)", sf.Stages[7].Reworks, 3},
		{"s events (start, 2 log lines, imported)", len(s.Events), 4},
		{"d status (DONE is finished)", by["d"].States[len(by["d"].States)-1].Status, ledger.RunCompleted},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.field, tc.got, tc.want)
		}
	}
	if len(g.States) != len(g.Events) {
		t.Errorf("%d states for %d events", len(g.States), len(g.Events))
	}
	// Same bytes, same hash; changed bytes, another hash.
	again, _, _ := ScanKimi(t.Context(), dir, dir)
	for _, p := range again {
		if p.Header.ImportedFrom.Hash != by[p.RunID].Header.ImportedFrom.Hash {
			t.Errorf("%s: hash differs on a second read of the same files", p.RunID)
		}
	}
	write(t, dir, map[string]string{"s/log.jsonl": `{"run_id":"s","stage":"INIT","ts":"2026-07-01T11:00:00Z"}` + "\n"})
	changed, _, _ := ScanKimi(t.Context(), dir, dir)
	for _, p := range changed {
		if p.RunID == "s" && p.Header.ImportedFrom.Hash == s.Header.ImportedFrom.Hash {
			t.Errorf("s: hash unchanged after its log changed")
		}
	}
}

func TestAgenTeamFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"state/r1.json":   `{"run_id":"r1","task":"t","stage_order":["a","b"],"started_at":"2026-07-02T09:00:00Z","last_update":"2026-07-02T09:30:00Z","config_hash":"h","status":"running","stages":{"a":{"status":"completed","gate":"auto","verify":null,"verify_safe":null,"max_retries":1,"rework_to":null,"baseline":"abc"},"b":{"status":"dispatched","gate":"qa","verify":"make","verify_safe":true,"max_retries":3,"rework_to":"a","baseline":"abc"}}}`,
		"events/r1.jsonl": `{"ts":"2026-07-02T09:01:00Z","type":"stage_dispatched","run_id":"r1","stage":"b","data":{}}` + "\n" + `{"ts":"2026-07-02T09:02:00Z","type":"runner_rework","run_id":"r1","stage":"b","data":{"rework_to":"a"}}` + "\n" + `{"ts":"2026-07-02T09:03:00Z","type":"stage_dispatched","run_id":"r1","stage":"b","data":{}}` + "\n",
		"state/bad.json":  `{"run_id":"bad","stage_order":["a"],"started_at":"2026-07-02T09:00:00Z","status":"running","stages":{"a":{"status":"pending","rework_to":"nope"}}}`,
	})
	plans, probs, err := ScanAgenTeam(t.Context(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || len(probs) != 1 || !strings.Contains(probs[0].Reason, "rework_to") {
		t.Fatalf("plans %d, problems %+v", len(plans), probs)
	}
	p := plans[0]
	f := p.States[len(p.States)-1]
	for _, tc := range []struct {
		field     string
		got, want any
	}{
		{"intent (task)", p.Header.Intent, "t"},
		{"config hash", p.Header.ImportedFrom.ConfigHash, "h"},
		{"baseline (abc is no object id: none)", p.Header.Baseline.String(), ""},
		{"source baseline, for the note", p.badBaseline, "abc"},
		{"b gate", p.Header.Stages[1].Gate, "qa"},
		{"a gate (auto: none)", p.Header.Stages[0].Gate, ""},
		{"b max_retries", p.Header.Stages[1].MaxRetries, 3},
		{"b rework_to", p.Header.Stages[1].ReworkTo, "a"},
		{"b verify_safe (carried; trust decides whether it runs)", p.Header.Stages[1].VerifySafe, true},
		{"a verify_safe (null: not safe)", p.Header.Stages[0].VerifySafe, false},
		{"source's verify_safe kept in the imported event", string(p.Events[len(p.Events)-1].Data), `{"source":"` + filepath.Join(dir, "state", "r1.json") + `","status":"running","verify_safe_in_source":["b"]}`},
		{"a status", f.Stages[0].Status, ledger.StageCompleted},
		{"b status", f.Stages[1].Status, ledger.StageDispatched},
		{"b attempts", len(f.Stages[1].Attempts), 2},
		{"b attempt 2 started", f.Stages[1].Attempts[1].StartedAt, "2026-07-02T09:03:00Z"},
		{"b reworks", f.Stages[1].Reworks, 1},
		{"run status", f.Status, ledger.RunRunning},
		{"events", len(p.Events), 5},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.field, tc.got, tc.want)
		}
	}
}

// TestAgenTeamRunnerEvents: the events AgenTeam's runner writes (runtime/agenteam/
// runner.py) count as they count there: runner_retry is a new attempt (the runner
// moves failed -> dispatched with no stage_dispatched event), and stage_completed
// {"result": "failed"} (retries used up) leaves the stage failed, at every event.
func TestAgenTeamRunnerEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ev := func(ts, typ, data string) string {
		return `{"ts":"2026-07-03T10:` + ts + `Z","type":"` + typ + `","run_id":"r","stage":"code","data":` + data + `}` + "\n"
	}
	write(t, dir, map[string]string{
		"state/r.json": `{"run_id":"r","task":"t","stage_order":["code"],"started_at":"2026-07-03T10:00:00Z","last_update":"2026-07-03T10:09:00Z","status":"failed","stages":{"code":{"status":"failed","gate":"auto","verify":"make","verify_safe":null,"max_retries":2,"rework_to":null,"baseline":"abc","verify_attempts":[{"attempt":1,"result":"fail"},{"attempt":2,"result":"fail"},{"attempt":3,"result":"fail"}]}}}`,
		"events/r.jsonl": ev("01:00", "stage_dispatched", `{"roles":["dev"],"isolation":"runner"}`) +
			ev("02:00", "stage_verified", `{"result":"fail","command":"make","attempt":1}`) +
			ev("03:00", "runner_retry", `{"attempt":2,"max_retries":2}`) +
			ev("04:00", "stage_verified", `{"result":"fail","command":"make","attempt":2}`) +
			ev("05:00", "runner_retry", `{"attempt":3,"max_retries":2}`) +
			ev("06:00", "stage_verified", `{"result":"fail","command":"make","attempt":3}`) +
			ev("07:00", "stage_completed", `{"result":"failed","reason":"verify failed"}`),
	})
	plans, probs, err := ScanAgenTeam(t.Context(), dir, dir)
	if err != nil || len(probs) != 0 || len(plans) != 1 {
		t.Fatalf("plans %d, problems %+v, err %v", len(plans), probs, err)
	}
	p := plans[0]
	// States: start, then one per event, then the final one.
	for i, want := range []struct {
		status   string
		attempts int
	}{
		{ledger.StagePending, 0},
		{ledger.StageDispatched, 1}, {ledger.StageFailed, 1},
		{ledger.StageDispatched, 2}, {ledger.StageFailed, 2},
		{ledger.StageDispatched, 3}, {ledger.StageFailed, 3},
		{ledger.StageFailed, 3},
		{ledger.StageFailed, 3},
	} {
		ss := p.States[i].Stages[0]
		if ss.Status != want.status || len(ss.Attempts) != want.attempts {
			t.Errorf("after event %d (%s): %s with %d attempts, want %s with %d", i, p.Events[i].Type, ss.Status, len(ss.Attempts), want.status, want.attempts)
		}
	}
	if f := p.States[len(p.States)-1]; f.Status != ledger.RunFailed {
		t.Errorf("run status %s, want failed", f.Status)
	}
	if a := p.States[len(p.States)-1].Stages[0].Attempts; len(a) == 3 && a[2].StartedAt != "2026-07-03T10:05:00Z" {
		t.Errorf("attempt 3 started %s, want the runner_retry's time", a[2].StartedAt)
	}
}

// A source's own event whose type is one git-atlas writes itself (a job_claimed, a
// landed) is imported as imported_event: under that type it would be a payload of
// the wrong shape, a claim or a landing the ledger never made. A type git-atlas does
// not write (the runner's own, a note) keeps its name.
func TestAgenTeamReservedEventTypes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ev := func(ts, typ string) string {
		return `{"ts":"2026-07-03T10:` + ts + `Z","type":"` + typ + `","run_id":"r","stage":"code","data":{"x":1}}` + "\n"
	}
	write(t, dir, map[string]string{
		"state/r.json":   `{"run_id":"r","task":"t","stage_order":["code"],"started_at":"2026-07-03T10:00:00Z","last_update":"2026-07-03T10:09:00Z","status":"running","stages":{"code":{"status":"pending","gate":"auto","verify":null,"verify_safe":null,"max_retries":0,"rework_to":null,"baseline":"abc"}}}`,
		"events/r.jsonl": ev("01:00", "job_claimed") + ev("02:00", "landed") + ev("03:00", "runner_retry") + ev("04:00", "note"),
	})
	plans, probs, err := ScanAgenTeam(t.Context(), dir, dir)
	if err != nil || len(probs) != 0 || len(plans) != 1 {
		t.Fatalf("plans %d, problems %+v, err %v", len(plans), probs, err)
	}
	var got []string
	for _, e := range plans[0].Events[1:5] {
		got = append(got, string(e.Type))
		if err := ledger.CheckEvent(&e); err != nil {
			t.Errorf("%s: %v", e.Type, err)
		}
		if string(e.Data) != `{"source":{"x":1}}` {
			t.Errorf("%s data %s", e.Type, e.Data)
		}
	}
	if want := "imported_event,imported_event,runner_retry,note"; strings.Join(got, ",") != want {
		t.Fatalf("types %s, want %s", strings.Join(got, ","), want)
	}
}
