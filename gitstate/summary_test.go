package gitstate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// summaryRuns makes runs of every shape a summary line must carry: escapes and
// non-ASCII in the intent, a sealed session and a plain one, nil and empty stage
// lists, a driver lease and a reason, and an intent too long for a line.
func summaryRuns(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	base, err := s.Repo.ResolveCommit(ctx, git.HeadRev())
	if err != nil {
		t.Fatal(err)
	}
	create := func(id, intent, session string, stages []ledger.StageState) {
		t.Helper()
		h := ledger.Header{RunID: id, Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(time.Now().UTC()), Baseline: base, Intent: intent, Session: session}
		for _, st := range stages {
			h.Stages = append(h.Stages, ledger.StageDef{Name: st.Name})
		}
		if _, err := s.Create(ctx, h, ledger.State{RunID: id, Status: ledger.RunRunning, Stages: stages}, ledger.Event{Type: "run_started"}); err != nil {
			t.Fatal(err)
		}
	}
	create("plain", "do it", "", []ledger.StageState{{Name: "code", Status: ledger.StagePending}, {Name: "test", Status: ledger.StagePending}})
	create("escapes", "say \"hi\" \\ then\nnewline <b>&amp;</b> \u00fcn\u00efcode \U0001F389 \u2028", ledger.SealPrefix+strings.Repeat("5e", 32), []ledger.StageState{})
	create("nil-stages", "", "bench", nil)
	create("long", strings.Repeat("long intent ", 600), "", []ledger.StageState{{Name: "code", Status: ledger.StagePending}})
	if err := transition(s, "plain", "code", ledger.StageDispatched); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "plain", func(r *ledger.Run) (*Change, error) {
		r.State.Driver = &ledger.Lease{Holder: "agent \"7\"", Session: "s-7", ExpiresAt: ledger.Stamp(time.Now().UTC().Add(3600e9))}
		r.State.Reason = "waiting on <review>"
		return &Change{Event: ledger.Event{Type: "note"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// tipMessages reads every run's tip as a listing at ListSummaries does.
func tipMessages(t *testing.T, s *Store) map[string]git.RefMessage {
	t.Helper()
	ctx := context.Background()
	refs, err := s.Repo.ListRefs(ctx, "refs/atlas/runs")
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[string]git.RefMessage{}
	if err := s.Repo.CommitMessages(ctx, refs, func(_ int, m git.RefMessage) {
		msgs[strings.TrimPrefix(m.Name, RunsPrefix)] = m
	}); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// Listing at ListSummaries reads runs from their tips' summary lines, and every run it
// reads is the run the documents hold: the same header and state fields as decoding
// run.json and state.json, for every shape of run, in every kind of repository.
func TestSummaryLinesMatchDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := New(newRepo(t, kind))
			summaryRuns(t, s)
			fromDocs, err := s.list(ctx, bothDocs, func(id, tip string, b []git.Blob) (*ledger.Run, error) { return decodeSummary(id, tip, b[0], b[1]) })
			if err != nil {
				t.Fatal(err)
			}
			listed, err := s.List(ctx, ListOptions{Depth: ListSummaries})
			if err != nil {
				t.Fatal(err)
			}
			msgs := tipMessages(t, s)
			if len(fromDocs) != 4 || len(listed) != 4 || len(msgs) != 4 {
				t.Fatalf("%d runs from documents, %d listed, %d messages; want 4", len(fromDocs), len(listed), len(msgs))
			}
			for i, want := range fromDocs {
				if want.Err != nil {
					t.Fatalf("%s: %v", want.ID, want.Err)
				}
				got := fromMessage(want.ID, msgs[want.ID])
				if want.ID == "long" {
					if got != nil || strings.Contains(string(msgs[want.ID].Message), "Atlas-Summary") {
						t.Errorf("long: a summary line over %d bytes was written", maxSummary)
					}
				} else if got == nil {
					t.Fatalf("%s: no usable summary line in %q", want.ID, msgs[want.ID].Message)
				} else if !sameSummary(got, want.Run) {
					t.Errorf("%s: from the message\n%+v\n%+v\nfrom the documents\n%+v\n%+v", want.ID, got.Header, got.State, want.Run.Header, want.Run.State)
				}
				if l := listed[i]; l.ID != want.ID || l.Err != nil || !sameSummary(l.Run, want.Run) {
					t.Errorf("%s: ListSummaries gave %s %+v (%v)", want.ID, l.ID, l.Run, l.Err)
				}
			}
		})
	}
}

// fromMessage reads the run summarized in a ledger tip's message, or nil.
func fromMessage(id string, m git.RefMessage) *ledger.Run {
	return fromLine(id, m.ID, string(lineOf(m)))
}

func sameSummary(a, b *ledger.Run) bool {
	return a.Tip == b.Tip && reflect.DeepEqual(a.Header, b.Header) && reflect.DeepEqual(a.State, b.State)
}

// A summary line describes its own commit's tree only: a commit made with plain git
// that copies the previous message onto new documents is read from the documents.
func TestSummaryLineBoundToTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "a", ledger.StageDef{Name: "code"})
	dir := s.Repo.CommonDir
	tip := run(t, dir, "rev-parse", RunRef("a"))
	msg := run(t, dir, "log", "-1", "--format=%B", tip)
	if !strings.Contains(msg, "Atlas-Summary: 1 ") {
		t.Fatalf("no summary line in %q", msg)
	}
	state := strings.Replace(run(t, dir, "cat-file", "blob", tip+":state.json"), `"status":"running"`, `"status":"failed"`, 1)
	blob := runIn(t, dir, state+"\n", "hash-object", "-w", "--stdin")
	var tree strings.Builder
	for line := range strings.SplitSeq(run(t, dir, "ls-tree", tip), "\n") {
		if strings.HasSuffix(line, "\tstate.json") {
			line = "100644 blob " + blob + "\tstate.json"
		}
		tree.WriteString(line + "\n")
	}
	newTree := runIn(t, dir, tree.String(), "mktree")
	next := runIn(t, dir, msg+"\n", "commit-tree", newTree, "-p", tip)
	run(t, dir, "update-ref", RunRef("a"), next, tip)

	if m := tipMessages(t, s)["a"]; fromMessage("a", m) != nil {
		t.Fatalf("the copied summary line of tree %s was used for tree %s", run(t, dir, "rev-parse", tip+"^{tree}"), m.Tree)
	}
	entries, err := s.List(ctx, ListOptions{Depth: ListSummaries})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Err != nil || entries[0].Run.State.Status != ledger.RunFailed || entries[0].Run.Tip != next {
		t.Fatalf("got %+v, want run a failed at %s", entries, next)
	}
}

// A ref whose object is missing is reported on its run alone, with or without a cache
// (for-each-ref's own read of every message dies on it).
func TestSummariesSurviveMissingObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, kind := range repoKinds[:2] {
		t.Run(kind.name, func(t *testing.T) {
			s := New(newRepo(t, kind))
			newRun(t, s, "a", ledger.StageDef{Name: "code"})
			newRun(t, s, "b", ledger.StageDef{Name: "code"})
			if err := writeFile(s.Repo.CommonDir+"/refs/atlas/runs/gone", strings.Repeat("1", 40)+"\n"); err != nil {
				t.Fatal(err)
			}
			if err := s.Repo.RefMessages(ctx, "refs/atlas/runs", func(git.RefMessage) {}); err == nil {
				t.Fatal("for-each-ref read a missing object")
			}
			for _, pass := range []string{"no cache", "cached"} {
				entries, err := s.List(ctx, ListOptions{Depth: ListSummaries})
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != 3 || entries[0].Err != nil || entries[1].Err != nil || entries[2].ID != "gone" || entries[2].Err == nil {
					t.Fatalf("%s: got %+v", pass, entries)
				}
			}
			if c := cacheLines(t, s); len(c) != 2 {
				t.Fatalf("cache %v, want the two readable runs", c)
			}
		})
	}
}

// canonicalSeeds are summary lines as json.Marshal writes them, and near misses.
var canonicalSeeds = []string{
	`{"run":{"schema":1,"run_id":"a","kind":"single","intent":"do it","session":"s","baseline":"1111111111111111111111111111111111111111","created_at":"2026-01-01T00:00:00Z"},"state":{"schema":1,"run_id":"a","status":"running","reason":"r","seq":5,"epoch":2,"updated_at":"2026-01-01T00:00:05Z","stages":[{"name":"plan","status":"completed"},{"name":"code","status":"dispatched"}],"driver":{"holder":"h","expires_at":"2026-01-01T01:00:00Z"}}}`,
	`{"run":{"schema":1,"run_id":"a","kind":"graph","baseline":"1111111111111111111111111111111111111111","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":0,"epoch":0,"updated_at":"t","stages":null}}`,
	`{"run":{"schema":1,"run_id":"a","kind":"graph","baseline":"1111111111111111111111111111111111111111","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":0,"epoch":0,"updated_at":"t","stages":[]}}`,
	`{"run":{"schema":1,"run_id":"a","kind":"graph","baseline":"1111111111111111111111111111111111111111","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":-3,"epoch":007,"updated_at":"t","stages":[]}}`,
	`{"run":{"schema":1,"run_id":"a\"b","kind":"graph","baseline":"1111111111111111111111111111111111111111","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":0,"epoch":0,"updated_at":"t","stages":[]}}`,
	`{"run":{"schema":1,"run_id":"a","kind":"graph","baseline":"1111111111111111111111111111111111111111","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":0,"epoch":0,"updated_at":"t","stages":[{"name":"x","status":"y"},]}}`,
	`{"run":{"schema":1,"run_id":"\xff","kind":"graph","baseline":"1111111111111111111111111111111111111111","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":0,"epoch":0,"updated_at":"t","stages":[]}}`,
	`{"run": {"schema":1}}`,
	`{"run":{"schema":1,"run_id":"a","kind":"graph","baseline":"abc","created_at":"t"},"state":{"schema":1,"run_id":"a","status":"running","seq":0,"epoch":0,"updated_at":"t","stages":[]}}`,
}

// Every line parseCanonical accepts is valid JSON that json.Unmarshal decodes to the
// same summary.
func FuzzParseCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var fast, slow ledgerSummary
		if !fast.parseCanonical(string(doc)) {
			return
		}
		if err := json.Unmarshal(doc, &slow); err != nil {
			t.Fatalf("accepted %q, which json.Unmarshal refuses: %v", doc, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nparseCanonical %+v\njson.Unmarshal %+v", doc, fast, slow)
		}
	})
}

func TestParseCanonicalSeeds(t *testing.T) {
	t.Parallel()
	accepted := map[int]bool{0: true, 1: true, 2: true} // the others need json.Unmarshal
	for i, s := range canonicalSeeds {
		var sum ledgerSummary
		if got := sum.parseCanonical(s); got != accepted[i] {
			t.Errorf("seed %d: parseCanonical = %v, want %v", i, got, accepted[i])
		}
	}
}

// cacheLines reads the summary cache as listing does, failing when it is unusable.
func cacheLines(t *testing.T, s *Store) map[string]cachedSummary {
	t.Helper()
	c, _, _, _ := s.readCache()
	if c == nil {
		t.Fatal("no usable summary cache")
	}
	return c
}

func listRuns(t *testing.T, s *Store) map[string]*ledger.Run {
	t.Helper()
	entries, err := s.List(context.Background(), ListOptions{Depth: ListSummaries})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]*ledger.Run{}
	for _, e := range entries {
		if e.Err != nil {
			t.Fatalf("%s: %v", e.ID, e.Err)
		}
		runs[e.ID] = e.Run
	}
	return runs
}

// Listing keeps every run's summary in the cache, by tip, including runs read from
// their documents; the next listing reads the cache and gives the same runs.
func TestSummaryCacheServesListing(t *testing.T) {
	t.Parallel()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := New(newRepo(t, kind))
			summaryRuns(t, s)
			first := listRuns(t, s)
			cache := cacheLines(t, s)
			if len(cache) != 4 {
				t.Fatalf("cache holds %d runs, want 4 (the long one from its documents)", len(cache))
			}
			for id, r := range first {
				if cache[id].tip != r.Tip {
					t.Errorf("%s: cached at %s, tip %s", id, cache[id].tip, r.Tip)
				}
			}
			second := listRuns(t, s)
			for id, r := range first {
				if !sameSummary(second[id], r) {
					t.Errorf("%s: from the cache %+v, first read %+v", id, second[id], r)
				}
			}

			// The cache is what the second listing read: a line changed under a valid
			// checksum shows (only the cache says "blocked"), for the same tip only.
			forged := map[string]cachedSummary{}
			for id, c := range cache {
				c.line = strings.Replace(c.line, `"status":"running"`, `"status":"blocked"`, 1)
				forged[id] = c
			}
			s.writeCache(forged, []string{"escapes", "long", "nil-stages", "plain"}, false, git.RefsMark{})
			if got := listRuns(t, s)["plain"].State.Status; got != "blocked" {
				t.Fatalf("status %q: the cache was not read", got)
			}
			s.Writer = ledger.Writer{Session: "s-7"} // the driving session (docs/contract.md §5.1)
			if err := transition(s, "plain", "code", ledger.StagePassed); err != nil {
				t.Fatal(err)
			}
			runs := listRuns(t, s)
			if runs["plain"].State.Status != ledger.RunRunning || runs["plain"].State.Stages[0].Status != ledger.StagePassed {
				t.Fatalf("after a new event: %+v, want the new tip's state", runs["plain"].State)
			}
			if runs["long"].State.Status != "blocked" {
				t.Fatalf("long: %q, want its (forged, still current) cached line", runs["long"].State.Status)
			}
			if cacheLines(t, s)["plain"].tip != runs["plain"].Tip {
				t.Fatal("the cache was not rewritten with the new tip")
			}
		})
	}
}

// A cache that fails its checksum is ignored as a whole and rewritten; a run whose
// ref is gone leaves the cache at the next listing; a cache that cannot be written
// costs nothing but speed.
func TestSummaryCacheDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(newRepo(t, repoKinds[0]))
	// No runs, no cache: `resume --brief` runs in repositories that never used git-atlas.
	if entries, err := s.List(ctx, ListOptions{Depth: ListSummaries}); err != nil || len(entries) != 0 {
		t.Fatalf("got %v, %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(s.Repo.CommonDir, "atlas")); !os.IsNotExist(err) {
		t.Fatalf("listing no runs created %s/atlas (%v)", s.Repo.CommonDir, err)
	}
	newRun(t, s, "a", ledger.StageDef{Name: "code"})
	newRun(t, s, "b", ledger.StageDef{Name: "code"})
	want := listRuns(t, s)
	path := s.Repo.CachePath(cacheName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(strings.Replace(string(data), `"status":"running"`, `"status":"paused!"`, 1))
	if err := os.WriteFile(path, bad, 0o666); err != nil {
		t.Fatal(err)
	}
	if c, _, _, _ := s.readCache(); c != nil {
		t.Fatal("a cache with a bad checksum was read")
	}
	for id, r := range listRuns(t, s) {
		if !sameSummary(r, want[id]) {
			t.Fatalf("%s: %+v, want %+v", id, r, want[id])
		}
	}
	if len(cacheLines(t, s)) != 2 {
		t.Fatal("the damaged cache was not rewritten")
	}

	run(t, s.Repo.CommonDir, "update-ref", "-d", RunRef("b"))
	if got := listRuns(t, s); len(got) != 1 {
		t.Fatalf("listed %d runs, want 1", len(got))
	}
	if c := cacheLines(t, s); len(c) != 1 || c["b"].tip != "" {
		t.Fatalf("cache after b was deleted: %v", c)
	}

	// A directory where the cache file should be: it cannot be replaced.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := transition(s, "a", "code", ledger.StageDispatched); err != nil {
		t.Fatal(err)
	}
	entries, err := s.List(ctx, ListOptions{Depth: ListSummaries})
	if err != nil || len(entries) != 1 || entries[0].Run.State.Stages[0].Status != ledger.StageDispatched {
		t.Fatalf("got %+v, %v", entries, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.tmp")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// go test -bench Summary ./gitstate: one summary line, as listing reads 1,000 of them.
func BenchmarkSummaryLine(b *testing.B) {
	doc := []byte(canonicalSeeds[0])
	b.Run("parseCanonical", func(b *testing.B) {
		for b.Loop() {
			var sum ledgerSummary
			if !sum.parseCanonical(string(doc)) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var sum ledgerSummary
			if err := json.Unmarshal(doc, &sum); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A cache written whole once the refs have settled is dated by them and is then the
// listing by itself (no for-each-ref); any later change to a ledger ref (plain git
// here) dates a ref file after it, and the refs are listed again.
func TestCompleteCacheDatedByRefs(t *testing.T) {
	t.Parallel()
	s := New(newRepo(t, repoKinds[0]))
	newRun(t, s, "a", ledger.StageDef{Name: "code"})
	newRun(t, s, "b", ledger.StageDef{Name: "code"})
	if err := transition(s, "b", "code", ledger.StageDispatched); err != nil {
		t.Fatal(err)
	}
	common := s.Repo.CommonDir
	date := func(at time.Time) { // as if the last ref change happened at
		for _, p := range []string{filepath.Join(common, "refs", "atlas", "runs"), filepath.Join(common, "refs", "atlas"), filepath.Join(common, "packed-refs")} {
			_ = os.Chtimes(p, at, at)
		}
	}
	settle := func() { date(time.Now().Add(-time.Hour)) }
	// The refs changed "now" (dated ahead, so that a slow machine cannot let them
	// settle before the listing looks): an undated cache.
	date(time.Now().Add(time.Hour))
	listRuns(t, s)
	if _, _, complete, _ := s.readCache(); complete {
		t.Fatal("a cache was dated by refs that had not settled")
	}
	settle()
	want := listRuns(t, s)
	cache, order, complete, _ := s.readCache()
	if !complete || len(cache) != 2 {
		t.Fatalf("settled refs: complete %v, %d runs", complete, len(cache))
	}
	// Served alone: a line changed under a valid checksum, same date, shows.
	fi, _ := os.Stat(s.Repo.CachePath(cacheName))
	forged := map[string]cachedSummary{}
	for id, c := range cache {
		c.line = strings.Replace(c.line, `"status":"running"`, `"status":"blocked"`, 1)
		forged[id] = c
	}
	mark := s.Repo.MarkRefs()
	if !s.writeCache(forged, order, true, mark) {
		t.Fatal("the forged cache was not written complete")
	}
	if fi2, _ := os.Stat(s.Repo.CachePath(cacheName)); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("dated %s, then %s", fi.ModTime(), fi2.ModTime())
	}
	if got := listRuns(t, s)["a"].State.Status; got != "blocked" {
		t.Fatalf("status %q: the complete cache was not the listing", got)
	}
	// Plain git takes b back to its first commit: listed from the refs again (a's
	// line, for the same tip, still comes from the cache).
	run(t, common, "update-ref", RunRef("b"), RunRef("b")+"~1")
	got := listRuns(t, s)
	if len(got) != 2 || got["b"].State.Status != ledger.RunRunning || got["b"].State.Stages[0].Status != ledger.StagePending || got["a"].State.Status != "blocked" {
		t.Fatalf("after plain git: %d runs, b %+v, a %q", len(got), got["b"].State, got["a"].State.Status)
	}
	run(t, common, "update-ref", RunRef("c"), want["a"].Tip+"~0")
	run(t, common, "update-ref", "-d", RunRef("c"))
	if got := listRuns(t, s); len(got) != 2 {
		t.Fatalf("%d runs", len(got))
	}
	settle()
	listRuns(t, s)
	if c, _, complete, _ := s.readCache(); !complete || len(c) != 2 {
		t.Fatalf("re-dated: complete %v, %d runs", complete, len(c))
	}
	run(t, common, "update-ref", "-d", RunRef("b"))
	if got := listRuns(t, s); len(got) != 1 {
		t.Fatalf("a deleted run still listed: %d runs", len(got))
	}
	// White box: the dated cache is read alone. A ref file slipped in with the
	// directory's time put back is not seen (no writer can do that: a rename dates it).
	settle()
	listRuns(t, s)
	runs := filepath.Join(common, "refs", "atlas", "runs")
	fi, _ = os.Stat(runs)
	if err := os.WriteFile(filepath.Join(runs, "hidden"), []byte(want["a"].Tip+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(runs, fi.ModTime(), fi.ModTime())
	if got := listRuns(t, s); len(got) != 1 {
		t.Fatalf("%d runs: the refs were listed, not the dated cache", len(got))
	}
}

// A complete cache's lines are decoded in chunks, one per core: the listing is the
// same as decoding them one by one, in id order, and one bad line anywhere (here in
// the last chunk) refuses the whole cache, as it did read serially.
func TestEntriesOfChunks(t *testing.T) {
	t.Parallel()
	const n = 1000
	cache := map[string]cachedSummary{}
	var order []string
	for i := range n {
		id := fmt.Sprintf("r%04d", (i*7919)%n) // not in id order
		line := strings.ReplaceAll(canonicalSeeds[0], `"run_id":"a"`, `"run_id":"`+id+`"`)
		line = strings.Replace(line, `"baseline":"1111111111111111111111111111111111111111"`, `"baseline":"`+strings.Repeat("a", 40)+`"`, 1) // a line holds a full id
		cache[id] = cachedSummary{tip: fmt.Sprintf("%040d", i), line: line}
		order = append(order, id)
	}
	entries, ok := entriesOf(cache, order)
	if !ok || len(entries) != n {
		t.Fatalf("entriesOf: %d entries, %v", len(entries), ok)
	}
	for i, e := range entries {
		want := fromLine(e.ID, cache[e.ID].tip, cache[e.ID].line)
		if e.ID != fmt.Sprintf("r%04d", i) || e.Run == nil || !reflect.DeepEqual(e.Run, want) {
			t.Fatalf("entry %d: %s %+v, want %+v", i, e.ID, e.Run, want)
		}
	}
	last := order[n-1]
	cache[last] = cachedSummary{tip: cache[last].tip, line: `{"run":`}
	if entries, ok := entriesOf(cache, order); ok || entries != nil {
		t.Fatalf("a bad last line: %d entries, %v; want the cache refused", len(entries), ok)
	}
}
