package importer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger"
)

// The source decoders take hostile bytes (docs/contract.md §13). Whatever the files hold, they
// never panic, and a plan they return is one the ledger accepts: its run id and job
// ids pass the checks of start and job add, no two jobs differ only in case, every
// need names a job of the run, every stage status is one of the machine's, and there
// is a state for every event. Seeds: testdata/fuzz/Fuzz*.

func FuzzKimiRun(f *testing.F) {
	f.Add(`{"run_id":"r","created_ts":"2026-07-01T12:00:00Z","current_state":"CODED","stages":{}}`,
		`{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:00Z"}`+"\n", "", "intent")
	f.Fuzz(func(t *testing.T, state, log, dag, intent string) {
		files := map[string][]byte{"state.json": []byte(state), "intent.txt": []byte(intent)}
		if log != "" {
			files["log.jsonl"] = []byte(log)
		}
		if dag != "" {
			files["plan.dag.json"] = []byte(dag)
		}
		p, prob := kimiRun(filepath.Join(t.TempDir(), "r"), "r", files)
		if prob != nil {
			if prob.Reason == "" {
				t.Fatalf("a problem with no reason: %+v", prob)
			}
			return
		}
		checkPlan(t, p)
	})
}

func FuzzAgenTeamRun(f *testing.F) {
	f.Add(`{"run_id":"r","started_at":"2026-07-02T09:00:00Z","status":"running","stage_order":["a"],"stages":{"a":{"status":"dispatched","max_retries":1}}}`,
		`{"ts":"2026-07-02T09:01:00Z","type":"stage_dispatched","stage":"a","data":{}}`+"\n")
	f.Fuzz(func(t *testing.T, state, events string) {
		files := map[string][]byte{"state.json": []byte(state)}
		if events != "" {
			files["events.jsonl"] = []byte(events)
		}
		p, prob := ateamRun(t.TempDir(), "r", files)
		if prob != nil {
			if prob.Reason == "" {
				t.Fatalf("a problem with no reason: %+v", prob)
			}
			return
		}
		checkPlan(t, p)
	})
}

func checkPlan(t *testing.T, p *Plan) {
	t.Helper()
	if err := ledger.ValidName("run", p.RunID); err != nil {
		t.Fatalf("run id: %v", err)
	}
	if len(p.States) != len(p.Events) || len(p.Events) < 2 {
		t.Fatalf("%d states for %d events", len(p.States), len(p.Events))
	}
	if err := ledger.CheckStages(p.Header.Stages); err != nil {
		t.Fatalf("stages: %v", err)
	}
	for _, st := range p.States {
		for _, s := range st.Stages {
			known := false
			for _, k := range ledger.StageStatuses {
				known = known || k == s.Status
			}
			if !known {
				t.Fatalf("stage %s has status %q", s.Name, s.Status)
			}
		}
	}
	fin := p.States[len(p.States)-1]
	ids := map[string]bool{}
	folded := map[string]string{}
	for _, j := range fin.Jobs {
		if err := ledger.CheckNodeName("job", j.ID); err != nil {
			t.Fatalf("job id: %v", err)
		}
		if other, dup := folded[strings.ToLower(j.ID)]; dup {
			t.Fatalf("jobs %q and %q differ only in case", j.ID, other)
		}
		folded[strings.ToLower(j.ID)], ids[j.ID] = j.ID, true
	}
	for _, j := range fin.Jobs {
		for _, n := range j.Needs {
			if !ids[n] {
				t.Fatalf("job %s needs %q, which the run does not have", j.ID, n)
			}
		}
	}
}
