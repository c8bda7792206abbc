package resume

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// gitIn runs git in dir and returns its trimmed stdout.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, stdin, args...)
}

// detectLedger makes a repository whose ledger holds runs in every state detection
// tells apart, written with plain git: interrupted, live, blocked, stopped, finished,
// from a newer schema, corrupt, and m-own, live and driven by session s-own. It
// returns the store, the time the runs are dated from and the baseline commit.
func detectLedger(t *testing.T) (*gitstate.Store, time.Time, string) {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "", "init", "-q", "-b", "main")
	gitIn(t, dir, "", "commit", "-q", "--allow-empty", "-m", "first")
	base := gitIn(t, dir, "", "rev-parse", "HEAD")
	now := time.Now().UTC()
	stamp := func(d time.Duration) string { return ledger.Stamp(now.Add(d)) }

	header := func(id, kind, extra string) string {
		return fmt.Sprintf(`{"schema":1,"run_id":%q,"kind":%q,"created_at":%q,"intent":"intent of %s","criteria":["c"],"baseline":%q,`+
			`"stages":[{"name":"plan","max_retries":2},{"name":"code","verify":"make","verify_safe":true,"gate":"human","max_retries":1}],"session":"s-%s"%s}`,
			id, kind, stamp(-time.Hour), id, base, id[:1], extra)
	}
	stages := func(plan, code string) string {
		return fmt.Sprintf(`"stages":[{"name":"plan","status":%q,"attempts":[{"n":1,"started_at":%q,"baseline":%q}]},{"name":"code","status":%q}]`, plan, stamp(-time.Hour), base, code)
	}
	state := func(id, status string, updated time.Duration, rest string) string {
		return fmt.Sprintf(`{"schema":1,"run_id":%q,"status":%q,"seq":7,"epoch":2,"updated_at":%q,%s}`, id, status, stamp(updated), rest)
	}
	jobs := `"jobs":[{"id":"j1","state":"RUNNING","needs":[],"attempts":1,"lease":"j1#1@2","holder":"w","expires_at":"2000-01-01T00:00:00Z"},` +
		`{"id":"j2","state":"PENDING","needs":["j1"],"attempts":0}],"gas_spent":1,` +
		`"worktrees":[{"node":"j1","path":"/nowhere","branch":"b","baseline":"` + base + `","head":"` + base + `"}]`
	future := `"future_state":{"a":[1,{"b":null}]},"union":{"head":"` + base + `","integrated":[],"at":"` + stamp(-time.Hour) + `","future_union":4}`
	runs := map[string][2]string{
		"a-interrupted": {header("a-interrupted", "single", ""), state("a-interrupted", "running", -time.Minute, stages("completed", "dispatched"))},
		"b-live": {header("b-live", "single", ""), state("b-live", "running", -2*time.Minute,
			stages("dispatched", "pending")+`,"driver":{"holder":"agent","expires_at":"`+stamp(time.Hour)+`"}`)},
		"c-expired-graph": {header("c-expired-graph", "graph", `,"gas":9`), state("c-expired-graph", "running", -3*time.Minute,
			`"stages":[],`+jobs+`,"driver":{"holder":"agent","expires_at":"`+stamp(-time.Hour)+`"}`)},
		"d-blocked":      {header("d-blocked", "single", ""), state("d-blocked", "blocked", -time.Minute, stages("passed", "pending"))},
		"e-live-blocked": {header("e-live-blocked", "single", ""), state("e-live-blocked", "blocked", -time.Minute, stages("passed", "pending")+`,"driver":{"holder":"h","expires_at":"`+stamp(time.Minute)+`"}`)},
		"f-stopped":      {header("f-stopped", "single", ""), state("f-stopped", "stopped", -5*time.Minute, stages("completed", "skipped"))},
		"g-completed":    {header("g-completed", "single", ""), state("g-completed", "completed", 0, stages("completed", "completed"))},
		"h-failed":       {header("h-failed", "single", ""), state("h-failed", "failed", 0, stages("completed", "failed"))},
		"i-future": {header("i-future", "single", `,"future_header":"h"`), strings.Replace(state("i-future", "running", -4*time.Minute,
			stages("completed", "gated")+","+future), `"schema":1`, `"schema":2`, 1)},
		"j-bad-stamp": {header("j-bad-stamp", "single", ""), state("j-bad-stamp", "running", -time.Minute, stages("pending", "pending")+`,"driver":{"holder":"h","expires_at":"soon"}`)},
		"k-badjson":   {header("k-badjson", "single", ""), "{"},
		"l-other-id":  {header("l-other-id", "single", ""), state("someone-else", "running", 0, stages("pending", "pending"))},
		"m-own": {header("m-own", "single", ""), state("m-own", "running", -6*time.Minute,
			stages("dispatched", "pending")+`,"driver":{"holder":"agent","expires_at":"`+stamp(time.Hour)+`","session":"s-own"}`)},
	}
	// Each run one root commit of run.json and state.json on its ref, all written by
	// one git fast-import (not five processes for each run).
	var stream strings.Builder
	data := func(s string) { fmt.Fprintf(&stream, "data %d\n%s\n", len(s), s) }
	for id, docs := range runs {
		fmt.Fprintf(&stream, "commit %s\ncommitter C O Mitter <committer@example.com> %d +0000\n", gitstate.RunRef(id), now.Unix())
		data("atlas: run_started " + id + "\n")
		for i, name := range []string{"run.json", "state.json"} {
			fmt.Fprintf(&stream, "M 100644 inline %s\n", name)
			data(docs[i] + "\n")
		}
	}
	gitIn(t, dir, stream.String(), "fast-import", "--quiet")

	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	store := gitstate.New(repo)
	return store, now, base
}

// TestDetectBriefSameAsDetect: `resume --brief` reads runs as summaries, decoding
// only what detection needs; it must find the same interrupted runs, in the same
// order, with the same fields, as full reads (ListFull), whatever else the documents
// hold (jobs, worktrees, leases, fields from a newer git-atlas) and however a run's
// driver, status and stages stand.
func TestDetectBriefSameAsDetect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, now, base := detectLedger(t)
	full, fullBad, err := Detect(ctx, store, now, DetectOptions{Depth: gitstate.ListFull})
	if err != nil {
		t.Fatal(err)
	}
	brief, briefBad, err := Detect(ctx, store, now, DetectOptions{Depth: gitstate.ListSummaries})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range full {
		ids = append(ids, c.RunID)
	}
	if want := []string{"d-blocked", "a-interrupted", "c-expired-graph", "i-future", "f-stopped"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("Detect found %v, want %v", ids, want)
	}
	if len(brief) != len(full) {
		t.Fatalf("Detect at ListSummaries found %d runs, at ListFull %d", len(brief), len(full))
	}
	for i := range full {
		if brief[i].Run() != nil {
			t.Errorf("%s: a brief candidate carries its run", brief[i].RunID)
		}
		f := full[i]
		f.run = nil
		if !reflect.DeepEqual(brief[i], f) {
			t.Errorf("candidate %d:\nbrief  %+v\ndetect %+v", i, brief[i], f)
		}
	}
	if len(fullBad) != 3 || len(briefBad) != 3 {
		t.Fatalf("unreadable: detect %v, brief %v", fullBad, briefBad)
	}
	for i := range fullBad {
		if fullBad[i].RunID != briefBad[i].RunID {
			t.Errorf("unreadable %d: detect %s, brief %s", i, fullBad[i].RunID, briefBad[i].RunID)
		}
	}

	// A brief candidate is loaded in full when selected, and a summary is never
	// written back.
	r, err := Select(ctx, store, brief, "", "s-c", now, nil)
	if err != nil || r == nil || r.Header.RunID != "c-expired-graph" || len(r.State.Jobs) != 2 || r.Header.Baseline.String() != base {
		t.Fatalf("Select(brief candidates) = %+v, %v", r, err)
	}
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListSummaries})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Run != nil && e.Run.Writable() == nil {
			t.Errorf("%s: a summary is writable", e.ID)
		}
	}
}

// TestDetectOptions: each of Detect's options changes what it reports. Session makes
// the runs that session still drives candidates, first (Own), the others as without
// it; Depth decides whether candidates carry their run (ListFull) and their header's
// fields (not at ListStates); NoFetch reads the local ledger of a store whose remote
// cannot be reached, where a listing that fetches fails.
func TestDetectOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, now, _ := detectLedger(t)
	ids := func(cands []Candidate) []string {
		var out []string
		for _, c := range cands {
			out = append(out, c.RunID)
		}
		return out
	}
	detect := func(opt DetectOptions) []Candidate {
		t.Helper()
		cands, bad, err := Detect(ctx, store, now, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) != 3 {
			t.Fatalf("%+v: unreadable %v, want j-bad-stamp, k-badjson and l-other-id", opt, bad)
		}
		return cands
	}
	others := []string{"d-blocked", "a-interrupted", "c-expired-graph", "i-future", "f-stopped"}

	for _, depth := range []gitstate.ListDepth{gitstate.ListFull, gitstate.ListSummaries, gitstate.ListStates} {
		if got := ids(detect(DetectOptions{Depth: depth})); !reflect.DeepEqual(got, others) {
			t.Errorf("%v, no session: %v, want %v", depth, got, others)
		}
		own := detect(DetectOptions{Depth: depth, Session: "s-own"})
		if got, want := ids(own), append([]string{"m-own"}, others...); !reflect.DeepEqual(got, want) {
			t.Fatalf("%v, session s-own: %v, want %v", depth, got, want)
		}
		if !own[0].Own || !own[0].Live || own[1].Own {
			t.Errorf("%v, session s-own: %+v, want only m-own Own and Live", depth, own[:2])
		}
		for _, c := range own {
			if hasRun := c.Run() != nil; hasRun != (depth == gitstate.ListFull) {
				t.Errorf("%v: %s carries its run: %v", depth, c.RunID, hasRun)
			}
			if header := c.Kind != "" && c.Intent != ""; header != (depth != gitstate.ListStates) {
				t.Errorf("%v: %s has kind %q, intent %q", depth, c.RunID, c.Kind, c.Intent)
			}
			// The fixture's sessions are plain ids, as an earlier release wrote them:
			// they still match (m-own is Own) but are never shown.
			if c.Session != "" {
				t.Errorf("%v: %s shows the plain session %q", depth, c.RunID, c.Session)
			}
		}
	}

	unreachable := gitstate.New(store.Repo)
	unreachable.Remote = &gitstate.Remote{Name: filepath.Join(t.TempDir(), "no-such-remote")}
	local, _, err := Detect(ctx, unreachable, now, DetectOptions{Depth: gitstate.ListStates, NoFetch: true})
	if err != nil || !reflect.DeepEqual(ids(local), others) {
		t.Fatalf("NoFetch: %v, %v; want the local ledger's %v", ids(local), err, others)
	}
	if _, _, err := Detect(ctx, unreachable, now, DetectOptions{Depth: gitstate.ListStates}); err == nil {
		t.Fatal("a detection that fetches from an unreachable remote succeeded: the fetch was skipped")
	}
}
