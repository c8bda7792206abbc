package gitstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

func TestStoreLifecycle(t *testing.T) {
	t.Parallel()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t, kind)
			s := New(repo)
			r := newRun(t, s, "r1", ledger.StageDef{Name: "plan", MaxRetries: 1}, ledger.StageDef{Name: "code"})
			if r.State.Seq != 1 || r.Tip == "" {
				t.Fatalf("created %+v", r.State)
			}
			if len(r.Tip) != map[string]int{"sha1": 40, "sha256": 64}[kind.format] {
				t.Fatalf("tip %s", r.Tip)
			}
			pin, _ := repo.ReadRef(ctx, PinRef("r1", "baseline"))
			if pin != r.Header.Baseline.String() {
				t.Fatalf("pin = %q, want %q (created in the same transaction)", pin, r.Header.Baseline)
			}
			// A second start of the same id is a conflict and changes nothing.
			h := r.Header
			if _, err := s.Create(ctx, h, ledger.State{RunID: "r1", Status: ledger.RunRunning}, ledger.Event{Type: "run_started"}); !errors.Is(err, fault.ErrConflict) {
				t.Fatalf("duplicate create: err = %v, want conflict", err)
			}
			for _, to := range []string{ledger.StageDispatched, ledger.StagePassed, ledger.StageCompleted} {
				if err := transition(s, "r1", "plan", to); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				data, _ := json.Marshal(map[string]int{"i": i})
				if _, err := s.Update(ctx, "r1", func(r *ledger.Run) (*Change, error) {
					return &Change{Event: ledger.Event{Type: "note", Stage: "code", Data: data}}, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			// fn refusing aborts with nothing written; fn with no change writes nothing.
			tip, _ := repo.ReadRef(ctx, RunRef("r1"))
			boom := errors.New("boom")
			if _, err := s.Update(ctx, "r1", func(r *ledger.Run) (*Change, error) { r.State.Status = ledger.RunFailed; return nil, boom }); !errors.Is(err, boom) {
				t.Fatalf("err = %v", err)
			}
			if _, err := s.Update(ctx, "r1", func(r *ledger.Run) (*Change, error) { return nil, nil }); err != nil {
				t.Fatal(err)
			}
			if now, _ := repo.ReadRef(ctx, RunRef("r1")); now != tip {
				t.Fatal("an aborted update moved the ref")
			}

			got, err := New(repo).Load(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if got.State.Seq != 7 || got.State.Status != ledger.RunRunning || got.CurrentStage().Name != "code" {
				t.Fatalf("loaded %+v", got.State)
			}
			events, err := s.Log(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != 7 {
				t.Fatalf("%d events", len(events))
			}
			for i, ev := range events {
				if ev.Seq != i+1 || ev.Schema != ledger.Schema {
					t.Fatalf("event %d = %+v", i, ev)
				}
			}
			if events[0].Type != "run_started" || events[6].Type != "note" || string(events[6].Data) != `{"i":2}` {
				t.Fatalf("events = %+v", events)
			}
			assertOneHeaderBlob(t, repo, got.Tip, 7)

			if _, err := s.Load(ctx, "nope"); !errors.Is(err, fault.ErrNotFound) {
				t.Fatalf("Load(nope) = %v", err)
			}
			if _, err := s.Update(ctx, "nope", func(r *ledger.Run) (*Change, error) { return nil, nil }); !errors.Is(err, fault.ErrNotFound) {
				t.Fatalf("Update(nope) = %v", err)
			}
			if _, err := s.Load(ctx, "a..b"); !errors.Is(err, fault.ErrUsage) {
				t.Fatalf("Load(a..b) = %v", err)
			}
		})
	}
}

// A start killed between its ref updates leaves the run's pin, and the run's ref
// locked, but no run (internal/git/reftx.go renames the pin's lock first). Starting
// that id again is no conflict: the new run takes the pin over, once the kill's lock
// is stale, and is read back whole. A run that exists is still one.
func TestCreateAdoptsALeftoverPin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t, repoKinds[0])
	old := newRun(t, New(repo), "old").Tip // any commit but the new baseline
	if err := repo.UpdateRefs(ctx, "test", git.RefUpdate{Name: PinRef("r", "baseline"), New: old, Old: git.ZeroID}); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(repo.CommonDir, filepath.FromSlash(RunRef("r"))+".lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(old+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-2 * repo.LockAge())
	if err := os.Chtimes(lock, then, then); err != nil {
		t.Fatal(err)
	}

	r := newRun(t, New(repo), "r")
	if pin, _ := repo.ReadRef(ctx, PinRef("r", "baseline")); pin != r.Header.Baseline.String() {
		t.Fatalf("pin = %s, want the new run's baseline %s", pin, r.Header.Baseline)
	}
	if got, err := New(repo).Load(ctx, "r"); err != nil || got.Tip != r.Tip {
		t.Fatalf("Load = %v, %v; want tip %s", got, err, r.Tip)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the kill's lock is still there: %v", err)
	}
	h := r.Header
	pin := git.RefUpdate{Name: PinRef("r", "baseline"), New: old, Old: git.ZeroID}
	_, err := New(repo).Create(ctx, h, ledger.State{RunID: "r", Status: ledger.RunRunning}, ledger.Event{Type: "run_started"}, pin)
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), `run "r" already exists`) {
		t.Fatalf("second start: %v, want: already exists", err)
	}
	if now, _ := repo.ReadRef(ctx, PinRef("r", "baseline")); now != r.Header.Baseline.String() {
		t.Fatalf("a refused start moved the pin to %s", now)
	}
}

// assertOneHeaderBlob walks the chain from tip: n commits, single parents, and one
// run.json blob in all of them (docs/contract.md §11.5).
func assertOneHeaderBlob(t *testing.T, repo *git.Repository, tip string, n int) {
	t.Helper()
	ctx := context.Background()
	var specs []git.BlobSpec
	for c := tip; c != ""; {
		specs = append(specs, at(t, c, "run.json"))
		info, err := repo.Commit(ctx, mustOID(t, c))
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Parents) > 1 {
			t.Fatalf("ledger commit %s has %d parents", c, len(info.Parents))
		}
		c = ""
		if len(info.Parents) == 1 {
			c = info.Parents[0].String()
		}
	}
	if len(specs) != n {
		t.Fatalf("chain has %d commits, want %d", len(specs), n)
	}
	blobs, err := repo.BlobsAt(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blobs {
		if b.Err != nil || b.ID != blobs[0].ID {
			t.Fatalf("commit %d: run.json %s (%v), want %s", i, b.ID, b.Err, blobs[0].ID)
		}
	}
}

func TestListReportsCorruptRunsAndKeepsTheOthers(t *testing.T) {
	t.Parallel()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t, kind)
			dir := repo.CommonDir
			s := New(repo)
			newRun(t, s, "a-good", ledger.StageDef{Name: "x"})
			good := newRun(t, s, "z-good", ledger.StageDef{Name: "x"})
			zero := strings.Repeat("0", len(good.Tip))
			blob := runIn(t, dir, "hello\n", "hash-object", "-w", "--stdin")
			// A commit whose tree lacks state.json, and one whose state.json is not JSON.
			tree := func(files map[string]string) string {
				var in strings.Builder
				for name, content := range files {
					fmt.Fprintf(&in, "100644 blob %s\t%s\n", runIn(t, dir, content, "hash-object", "-w", "--stdin"), name)
				}
				return runIn(t, dir, in.String(), "mktree")
			}
			runJSON := run(t, dir, "cat-file", "blob", good.Tip+":run.json")
			noState := run(t, dir, "commit-tree", "-m", "x", tree(map[string]string{"run.json": strings.Replace(runJSON, "z-good", "nostate", 1)}))
			badJSON := run(t, dir, "commit-tree", "-m", "x", tree(map[string]string{"run.json": strings.Replace(runJSON, "z-good", "badjson", 1), "state.json": "{"}))
			for name, id := range map[string]string{"blobrun": blob, "nostate": noState, "badjson": badJSON} {
				run(t, dir, "update-ref", RunRef(name), id)
			}
			// A ref to an object that does not exist: only a broken disk or tool makes one.
			missing := strings.Repeat("1", len(zero))
			run(t, dir, "update-ref", "--no-deref", RunRef("missing"), good.Tip)
			writeLooseRef(t, dir, RunRef("missing"), missing)

			entries, err := s.List(ctx, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"a-good": "", "z-good": "",
				"badjson": "state.json: unexpected end of JSON input",
				"blobrun": "its ref points at a blob (" + blob + "), not a ledger commit",
				"missing": "its ref points at " + missing + ", which is missing from the object store",
				"nostate": "has no readable state.json",
			}
			if len(entries) != len(want) {
				t.Fatalf("%d entries, want %d", len(entries), len(want))
			}
			for _, e := range entries {
				w := want[e.ID]
				if w == "" {
					if e.Err != nil || e.Run == nil {
						t.Errorf("%s: %v", e.ID, e.Err)
					}
					continue
				}
				if !errors.Is(e.Err, ErrCorrupt) || !strings.Contains(e.Err.Error(), w) {
					t.Errorf("%s: err = %v, want ErrCorrupt saying %q", e.ID, e.Err, w)
				}
				if _, err := s.Load(ctx, e.ID); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%s) = %v", e.ID, err)
				}
				if _, err := s.Update(ctx, e.ID, func(r *ledger.Run) (*Change, error) { return &Change{Event: ledger.Event{Type: "note"}}, nil }); !errors.Is(err, ErrCorrupt) {
					t.Errorf("Update(%s) = %v", e.ID, err)
				}
			}
		})
	}
}

// writeLooseRef points a ref at any id, bypassing git's checks.
func writeLooseRef(t *testing.T, commonDir, ref, id string) {
	t.Helper()
	run(t, commonDir, "pack-refs", "--all", "--prune")
	run(t, commonDir, "update-ref", "-d", ref)
	if err := writeFile(commonDir+"/"+ref, id+"\n"); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaIsReadOnly(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"run.json", "state.json"} {
		t.Run(doc, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t, repoKinds[0])
			s := New(repo)
			r := newRun(t, s, "r", ledger.StageDef{Name: "x"})
			dir := repo.CommonDir
			files := map[string]string{}
			for _, f := range []string{"run.json", "state.json", "event.json"} {
				files[f] = run(t, dir, "cat-file", "blob", r.Tip+":"+f)
			}
			files[doc] = strings.Replace(files[doc], `"schema":1`, `"schema":2`, 1)
			var in strings.Builder
			for name, content := range files {
				fmt.Fprintf(&in, "100644 blob %s\t%s\n", runIn(t, dir, content, "hash-object", "-w", "--stdin"), name)
			}
			c := run(t, dir, "commit-tree", "-p", r.Tip, "-m", "from the future", runIn(t, dir, in.String(), "mktree"))
			run(t, dir, "update-ref", RunRef("r"), c)

			got, err := s.Load(ctx, "r")
			if err != nil {
				t.Fatalf("a newer schema must stay readable: %v", err)
			}
			if got.Writable() == nil {
				t.Fatal("Writable() = nil for a newer schema")
			}
			_, err = s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) { return &Change{Event: ledger.Event{Type: "note"}}, nil })
			var newer *ledger.ErrNewerSchema
			if !errors.Is(err, fault.ErrRefused) || !errors.As(err, &newer) || newer.Doc != doc || newer.Found != 2 {
				t.Fatalf("Update = %v, want a refusal naming %s schema 2", err, doc)
			}
			if tip, _ := repo.ReadRef(ctx, RunRef("r")); tip != c {
				t.Fatal("the refused write moved the ref")
			}
			if entries, err := s.List(ctx, ListOptions{}); err != nil || entries[0].Err != nil {
				t.Fatalf("List = %v, %v", entries, err)
			}
			if _, err := s.Log(ctx, "r"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConcurrentUpdates is the in-process version of the CLI stress test: every
// writer's events land exactly once, in one chain, with consecutive seqs. With the
// sweeps build tag 8 writers of 12 events (4 of 8 without go-git); without it 4 writers
// of 6 (3 of 6): every write still races two or three others for the one ref (a lost
// compare-and-swap and its retry), on both kinds of repository.
func TestConcurrentUpdates(t *testing.T) {
	t.Parallel()
	for _, kind := range repoKinds[:2] {
		t.Run(kind.name, func(t *testing.T) {
			// Small: the 16 x 200 processes of stress_test.go are the big version.
			writers, each := testenv.Rounds(4, 8), testenv.Rounds(6, 12)
			if kind.noGo {
				writers, each = testenv.Rounds(3, 4), testenv.Rounds(6, 8)
			}
			if testing.Short() {
				writers, each = 3, 4
			}
			ctx := context.Background()
			repo := newRepo(t, kind)
			newRun(t, New(repo), "r", ledger.StageDef{Name: "x"})
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					s := New(repo)
					for i := 0; i < each; i++ {
						data, _ := json.Marshal(map[string]string{"m": fmt.Sprintf("%d-%d", w, i)})
						if _, err := s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
							return &Change{Event: ledger.Event{Type: "note", Data: data}}, nil
						}); err != nil {
							errs <- err
						}
					}
				}(w)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			events, err := New(repo).Log(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for i, ev := range events {
				if ev.Seq != i+1 {
					t.Fatalf("event %d has seq %d", i, ev.Seq)
				}
				if ev.Type == "note" {
					var d map[string]string
					_ = json.Unmarshal(ev.Data, &d)
					if seen[d["m"]] {
						t.Fatalf("duplicate %s", d["m"])
					}
					seen[d["m"]] = true
				}
			}
			if len(seen) != writers*each || len(events) != writers*each+1 {
				t.Fatalf("%d notes, %d events; want %d", len(seen), len(events), writers*each)
			}
		})
	}
}

// A write that lost the compare-and-swap waits before it tries again (pause), but not
// past its context: a caller that gave up (Ctrl-C, a deadline) gets the context's
// error at once instead of an hour's wait.
func TestPauseHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pause(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("pause = %v, want context.Canceled", err)
	}
	if err := pause(context.Background(), 0); err != nil {
		t.Fatalf("pause 0 = %v", err)
	}
}
