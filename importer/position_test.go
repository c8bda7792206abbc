package importer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ledger"
)

func kimiLines(id string, stages ...string) string {
	var b strings.Builder
	for i, s := range stages {
		verdict := ""
		if s == "VERIFIED" {
			verdict = `,"verdict":"UNVERIFIED"`
		}
		fmt.Fprintf(&b, `{"run_id":"%s","stage":"%s","ts":"2026-07-01T12:00:%02dZ"%s}`+"\n", id, s, i, verdict)
	}
	return b.String()
}

// A single run stands where the kimi-atlas resume procedure would re-enter it (the
// stage after the last one recorded): interrupted after VERIFIED (fail) → REFINE →
// CODED, the re-verify is next (VERIFIED pending, not completed), CLARIFY (never
// needed) is skipped, the refine pass is counted (REFINE pending with its attempt
// and rework), the budgets go on from the recorded attempts, and kimi-atlas's
// gates (pre-CODE approval after GROUNDED, OUTPUT) are the stages' gates.
func TestKimiResumePosition(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const st = `{"run_id":"%s","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:30:00Z","current_state":"%s","stages":{},"refine_passes":%s}`
	state := func(id, cur, passes string) string { return fmt.Sprintf(st, id, cur, passes) }
	write(t, dir, map[string]string{
		"loop/state.json":   state("loop", "CODED", "1"),
		"loop/log.jsonl":    kimiLines("loop", "INIT", "INTENT_CAPTURED", "TRIAGED", "GROUNDED", "CODED", "VERIFIED", "REFINE", "CODED"),
		"gate/state.json":   state("gate", "GROUNDED", "0"),
		"gate/log.jsonl":    kimiLines("gate", "INIT", "INTENT_CAPTURED", "CLARIFY", "TRIAGED", "GROUNDED"),
		"refine/state.json": state("refine", "REFINE", "2"),
		"refine/log.jsonl":  kimiLines("refine", "INIT", "INTENT_CAPTURED", "TRIAGED", "GROUNDED", "CODED", "VERIFIED", "REFINE", "CODED", "VERIFIED", "REFINE"),
		"fresh/state.json":  state("fresh", "INTENT_CAPTURED", "0"),
		"fresh/log.jsonl":   kimiLines("fresh", "INIT", "INTENT_CAPTURED"),
	})
	plans, probs, err := ScanKimi(t.Context(), dir, dir)
	if err != nil || len(probs) != 0 {
		t.Fatalf("%+v %v", probs, err)
	}
	by := map[string]*Plan{}
	for _, p := range plans {
		by[p.RunID] = p
	}
	statuses := func(id string) string {
		p := by[id]
		fin := p.States[len(p.States)-1]
		var out []string
		for _, s := range fin.Stages {
			out = append(out, s.Name+"="+s.Status)
		}
		return strings.Join(out, " ")
	}
	stage := func(id, name string) ledger.StageState {
		fin := by[id].States[len(by[id].States)-1]
		for _, s := range fin.Stages {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("%s has no stage %s", id, name)
		return ledger.StageState{}
	}
	for id, want := range map[string]string{
		"loop":   "INIT=completed INTENT_CAPTURED=completed CLARIFY=skipped TRIAGED=completed GROUNDED=completed CODED=completed VERIFIED=pending REFINE=pending OUTPUT=pending",
		"gate":   "INIT=completed INTENT_CAPTURED=completed CLARIFY=completed TRIAGED=completed GROUNDED=gated CODED=pending VERIFIED=pending REFINE=pending OUTPUT=pending",
		"refine": "INIT=completed INTENT_CAPTURED=completed CLARIFY=skipped TRIAGED=completed GROUNDED=completed CODED=pending VERIFIED=pending REFINE=pending OUTPUT=pending",
		"fresh":  "INIT=completed INTENT_CAPTURED=completed CLARIFY=pending TRIAGED=pending GROUNDED=pending CODED=pending VERIFIED=pending REFINE=pending OUTPUT=pending",
	} {
		if got := statuses(id); got != want {
			t.Errorf("%s:\n got %s\nwant %s", id, got, want)
		}
	}
	for _, tc := range []struct {
		what      string
		got, want int
	}{
		{"loop CODED attempts", len(stage("loop", "CODED").Attempts), 2},
		{"loop VERIFIED attempts (one before the refine)", len(stage("loop", "VERIFIED").Attempts), 1},
		{"loop REFINE passes", stage("loop", "REFINE").Reworks, 1},
		{"refine REFINE passes", stage("refine", "REFINE").Reworks, 2},
		{"refine REFINE attempts", len(stage("refine", "REFINE").Attempts), 2},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.what, tc.got, tc.want)
		}
	}
	gates := map[string]string{}
	retries := map[string]int{}
	for _, d := range by["loop"].Header.Stages {
		gates[d.Name], retries[d.Name] = d.Gate, d.MaxRetries
	}
	if gates["GROUNDED"] != "human" || gates["OUTPUT"] != "human" || gates["CODED"] != "" {
		t.Errorf("gates %v: want kimi-atlas's pre-CODE approval (after GROUNDED) and OUTPUT gates", gates)
	}
	// REFINE runs at most twice (MAX_PASSES): after two passes it has no attempt left.
	if retries["REFINE"]+1 != kimiMaxPasses || retries["CODED"] != kimiMaxPasses {
		t.Errorf("budgets %v", retries)
	}
	// The state after each line is the position then: after the first VERIFIED line,
	// VERIFIED is completed and the refine decision is next.
	p := by["loop"]
	afterVerified := p.States[6]
	if p.Events[6].Stage != "VERIFIED" || afterVerified.Stages[6].Status != ledger.StageCompleted || afterVerified.Stages[7].Status != ledger.StagePending {
		t.Errorf("after VERIFIED: %+v", afterVerified.Stages)
	}
	if !strings.Contains(string(p.Events[6].Data), `"verdict":"UNVERIFIED"`) {
		t.Errorf("VERIFIED's verdict not kept: %s", p.Events[6].Data)
	}
}
