package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCallConcurrent: Call from 8 goroutines at once (the MCP server serves calls
// concurrently) claims every job of one graph run exactly once. Run under -race, it
// is also the check that a command run through Call shares no mutable state with the
// others.
func TestCallConcurrent(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	const jobs, workers = 16, 8
	atlas(t, repo, "start", "--id", "g", "--graph")
	for i := range jobs {
		atlas(t, repo, "job", "add", "g", fmt.Sprintf("j%02d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func(holder string) {
			defer wg.Done()
			polls := 0 // in a row without a grant: bounded, so a lost write fails the test rather than hangs it
			for {
				if polls++; polls > 2000 {
					errs <- fmt.Errorf("%s: no grant after %d claims in a row", holder, polls-1)
					return
				}
				out, e := Call(ctx, repo, []string{"job", "claim", "g", "--holder=" + holder})
				if e != nil && e.Kind == "conflict" {
					continue // another claim won the write: claim again
				}
				var g struct {
					Job    *struct{ ID string } `json:"job"`
					Lease  *string              `json:"lease"`
					Reason *string              `json:"reason"`
				}
				if err := json.Unmarshal(out, &g); err != nil {
					errs <- fmt.Errorf("claim printed %q (%w)", out, e)
					return
				}
				if g.Job == nil {
					if *g.Reason == "finished" && e != nil && e.Code == ExitRefused {
						return
					}
					if *g.Reason == "waiting" && e == nil {
						continue
					}
					errs <- fmt.Errorf("claim: reason %s, error %+w", *g.Reason, e)
					return
				}
				polls = 0
				for range 10 { // a stale lease is a conflict too, and never succeeds
					_, e = Call(ctx, repo, []string{"job", "done", "g", g.Job.ID, "--lease=" + *g.Lease, "--status=ok", "--holder=" + holder})
					if e == nil || e.Kind != "conflict" {
						break
					}
				}
				if e != nil {
					errs <- fmt.Errorf("done %s: %+w", g.Job.ID, e)
					return
				}
			}
		}(fmt.Sprintf("w%d", w))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var log struct {
		Events []struct{ Type, Job string } `json:"events"`
	}
	out, e := Call(ctx, repo, []string{"log", "g", "--type=job_claimed"})
	if e != nil || json.Unmarshal(out, &log) != nil {
		t.Fatalf("log: %s %+v", out, e)
	}
	granted := map[string]int{}
	for _, ev := range log.Events {
		granted[ev.Job]++
	}
	for i := range jobs {
		if j := fmt.Sprintf("j%02d", i); granted[j] != 1 {
			t.Errorf("job %s granted %d times", j, granted[j])
		}
	}
}

// TestCallErrors: a failed command's error is the --json error object, with its code
// and kind, and a document the command printed as well is returned too.
func TestCallErrors(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	out, e := Call(ctx, repo, []string{"show", "--", "bad id"})
	if e == nil || e.Code != ExitUsage || e.Kind != "usage" || out != nil || !strings.Contains(e.Message, "bad id") {
		t.Fatalf("show of a bad id: %s %+v", out, e)
	}
	var raw map[string]any
	if err := json.Unmarshal(e.Raw, &raw); err != nil || raw["kind"] != "usage" || raw["code"] != float64(2) {
		t.Fatalf("Raw = %s", e.Raw)
	}
	if _, ok := raw["hint"]; !ok {
		t.Fatalf("Raw has no hint: %s", e.Raw)
	}
	if _, e := Call(ctx, repo, []string{"no-such-command"}); e == nil || e.Kind != "usage" {
		t.Fatalf("unknown command: %+v", e)
	}
	atlas(t, repo, "start", "--id", "g", "--graph")
	out, e = Call(ctx, repo, []string{"job", "claim", "g"})
	if e == nil || e.Code != ExitRefused || !strings.Contains(string(out), `"halted"`) {
		t.Fatalf("claim from an empty graph: %s %+v", out, e)
	}
	if _, e := Call(ctx, t.TempDir(), []string{"list"}); e == nil || e.Kind != "usage" {
		t.Fatalf("list outside a repository: %+v", e)
	}
}

// A person's step (ops.PersonOnlySteps) through MCP is refused, exit 5, even with
// --approved-by: the MCP server's calls come with Via MCP (issue 31.7). The same
// command line, headless, is accepted with --approved-by.
func TestMCPRefusesAPersonsStep(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	pipeline := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(pipeline, []byte(`{"stages": [{"name": "check", "gate": "human"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	atlas(t, repo, "start", "--id", "h", "--pipeline", pipeline, "--holder", "d")
	for _, to := range []string{"dispatched", "passed", "gated"} {
		atlas(t, repo, "transition", "h", "check", to, "--holder", "d")
	}
	_, f := callForMCP(ctx, repo, []string{"transition", "h", "check", "completed", "--holder", "d", "--approved-by", "alice"})
	if f == nil || f.Code != ExitRefused || !strings.Contains(string(f.Object), "through MCP") {
		t.Fatalf("a human gate through MCP: %+v, want refused (exit 5) through MCP", f)
	}
	if _, e := Call(ctx, repo, []string{"transition", "h", "check", "rejected", "--holder", "d"}); e == nil || e.Code != ExitRefused {
		t.Fatalf("the same on the command line, headless, naming nobody: %+v, want refused", e)
	}
	if _, e := Call(ctx, repo, []string{"transition", "h", "check", "rejected", "--holder", "d", "--approved-by", "alice"}); e != nil {
		t.Fatalf("the same on the command line with --approved-by: %+v", e)
	}
	for _, to := range []string{"dispatched", "passed", "gated"} {
		atlas(t, repo, "transition", "h", "check", to, "--holder", "d")
	}
	if _, errs, code := onTerminal(t, repo, nil, "transition", "h", "check", "completed", "--holder", "d"); code != 0 {
		t.Fatalf("a person at a terminal: exit %d\n%s", code, errs)
	}
}
