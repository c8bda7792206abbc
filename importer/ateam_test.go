package importer

import (
	"fmt"
	"strings"
	"testing"
)

func ateamEv(min int, typ, stage, data string) string {
	return fmt.Sprintf(`{"ts":"2026-07-02T09:%02d:00Z","type":"%s","run_id":"r","stage":"%s","data":%s}`+"\n", min, typ, stage, data)
}

// Attempts count once per dispatch, as AgenTeam's retry budget does: runner_retry
// then stage_dispatched is one re-dispatch (two attempts in all, one of max_retries
// 2 left), and a runner_retry alone (the runner's own loop) is one too. The run's
// pipeline_mode is kept with where it came from.
func TestAgenTeamAttemptsPerDispatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const state = `{"run_id":"%s","task":"t","pipeline_mode":"%s","stage_order":["impl"],"started_at":"2026-07-02T09:00:00Z","last_update":"2026-07-02T09:30:00Z","config_hash":"h","status":"running","stages":{"impl":{"status":"dispatched","gate":"auto","verify":"make","verify_safe":true,"max_retries":2}}}`
	write(t, dir, map[string]string{
		"state/skill.json": fmt.Sprintf(state, "skill", "hotl"),
		"events/skill.jsonl": ateamEv(1, "stage_dispatched", "impl", `{"roles":["dev"]}`) +
			ateamEv(2, "stage_verified", "impl", `{"result":"fail"}`) +
			ateamEv(3, "runner_retry", "impl", `{"attempt":2,"max_retries":2}`) +
			ateamEv(4, "stage_dispatched", "impl", `{"roles":["dev"]}`),
		"state/runner.json": fmt.Sprintf(state, "runner", "standalone"),
		"events/runner.jsonl": ateamEv(1, "stage_dispatched", "impl", `{"roles":["dev"]}`) +
			ateamEv(2, "role_started", "impl", `{"role":"dev"}`) +
			ateamEv(3, "role_finished", "impl", `{"role":"dev","exit_code":0}`) +
			ateamEv(4, "stage_verified", "impl", `{"result":"fail"}`) +
			ateamEv(5, "runner_retry", "impl", `{"attempt":2,"max_retries":2}`) +
			ateamEv(6, "role_started", "impl", `{"role":"dev"}`) +
			ateamEv(7, "role_finished", "impl", `{"role":"dev","exit_code":0}`) +
			ateamEv(8, "stage_verified", "impl", `{"result":"fail"}`) +
			ateamEv(9, "runner_retry", "impl", `{"attempt":3,"max_retries":2}`),
	})
	plans, probs, err := ScanAgenTeam(t.Context(), dir, dir)
	if err != nil || len(probs) != 0 || len(plans) != 2 {
		t.Fatalf("plans %d, %+v, %v", len(plans), probs, err)
	}
	for _, p := range plans {
		fin := p.States[len(p.States)-1]
		want := map[string]int{"skill": 2, "runner": 3}[p.RunID]
		if got := len(fin.Stages[0].Attempts); got != want {
			t.Errorf("%s: %d attempts, want %d", p.RunID, got, want)
		}
		for i, a := range fin.Stages[0].Attempts {
			if a.N != i+1 {
				t.Errorf("%s: attempt %d numbered %d", p.RunID, i+1, a.N)
			}
		}
		mode := map[string]string{"skill": "hotl", "runner": "standalone"}[p.RunID]
		if p.Header.ImportedFrom.PipelineMode != mode || p.Header.ImportedFrom.ConfigHash != "h" {
			t.Errorf("%s: imported_from %+v, want pipeline_mode %s and config_hash h", p.RunID, p.Header.ImportedFrom, mode)
		}
	}
	if !strings.Contains(plans[0].Header.ImportedFrom.System, AgenTeam) {
		t.Errorf("system %q", plans[0].Header.ImportedFrom.System)
	}
}
