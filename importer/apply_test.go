package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

func newStore(t *testing.T) *gitstate.Store {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "i"}} {
		testenv.Git(t, dir, "", args...)
	}
	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return gitstate.New(repo)
}

// TestApplyCompletesCutShort: an import killed between two events left a prefix of the
// same history; importing again writes the rest, and once complete writes nothing.
func TestApplyCompletesCutShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"r/state.json": `{"run_id":"r","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:05:00Z","current_state":"CODED","stages":{},"scope_paths":[]}`,
		"r/log.jsonl":  `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n" + `{"run_id":"r","stage":"INTENT_CAPTURED","ts":"2026-07-01T12:00:02Z"}` + "\n",
	})
	store := newStore(t)
	scan := func() *Plan {
		plans, probs, err := ScanKimi(t.Context(), dir, dir)
		if err != nil || len(probs) != 0 || len(plans) != 1 {
			t.Fatalf("scan: %v %v %d", err, probs, len(plans))
		}
		return plans[0]
	}
	// Cut short: only the first two events were written.
	p := scan()
	full := len(p.Events)
	p.Events, p.States = p.Events[:2], p.States[:2]
	if res := Apply(ctx, store, []*Plan{p}, false, nil); res[0].Outcome != Imported {
		t.Fatalf("first import: %+v", res[0])
	}
	res := Apply(ctx, store, []*Plan{scan()}, false, nil)
	if res[0].Outcome != Imported || res[0].Events != full-2 {
		t.Fatalf("second import: outcome %s, %d events; want imported, %d", res[0].Outcome, res[0].Events, full-2)
	}
	log, err := store.Log(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != full || log[full-1].Type != "imported" || log[2].Time != "2026-07-01T12:00:02Z" {
		t.Fatalf("log after completing: %+v", log)
	}
	tip, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r"))
	if res := Apply(ctx, store, []*Plan{scan()}, false, nil); res[0].Outcome != Unchanged {
		t.Fatalf("third import: %+v", res[0])
	}
	if again, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r")); again != tip {
		t.Fatalf("an unchanged import moved the run's ref")
	}
	// A source that changed since: refused with the reason, nothing written.
	write(t, dir, map[string]string{"r/log.jsonl": `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n"})
	if res := Apply(ctx, store, []*Plan{scan()}, false, nil); res[0].Outcome != Refused || res[0].Reason == "" {
		t.Fatalf("changed source: %+v", res[0])
	}
	if again, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r")); again != tip {
		t.Fatalf("a refused import moved the run's ref")
	}
}

// TestApplyAdoptsAfterCutShort: an import killed after its last event but before it
// adopted the source's worktree adopts it on the next import, snapshotting its dirty
// work first; once adopted, importing again writes nothing.
func TestApplyAdoptsAfterCutShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"r/state.json": `{"run_id":"r","created_ts":"2026-07-01T12:00:00Z","updated_ts":"2026-07-01T12:05:00Z","current_state":"CODED","stages":{},"scope_paths":[]}`,
		"r/log.jsonl":  `{"run_id":"r","stage":"INIT","ts":"2026-07-01T12:00:01Z"}` + "\n",
	})
	store := newStore(t)
	wt := dir + "/r/worktree"
	testenv.Git(t, store.Repo.TopLevel, "", "worktree", "add", "-q", "--detach", wt)
	write(t, dir, map[string]string{"r/worktree/work.txt": "unsaved work\n"})
	scan := func() *Plan {
		plans, probs, err := ScanKimi(t.Context(), dir, dir)
		if err != nil || len(probs) != 0 || len(plans) != 1 {
			t.Fatalf("scan: %v %v %d", err, probs, len(plans))
		}
		return plans[0]
	}
	// Killed before the adoption: every event written, the worktree not recorded.
	p := scan()
	if p.Worktree == "" {
		t.Fatal("the fixture's worktree was not seen")
	}
	p.Worktree = ""
	if res := Apply(ctx, store, []*Plan{p}, false, nil); res[0].Outcome != Imported {
		t.Fatalf("first import: %+v", res[0])
	}
	res := Apply(ctx, store, []*Plan{scan()}, false, nil)
	if res[0].Outcome != Imported || res[0].Snapshot == "" {
		t.Fatalf("second import: %+v, notes %v; want the worktree adopted with a snapshot", res[0], res[0].Notes)
	}
	r, err := store.Load(ctx, "r")
	if err != nil || r.State.Worktree("imported") == nil {
		t.Fatalf("after the second import the worktree is not recorded: %v", err)
	}
	tip, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r"))
	if res := Apply(ctx, store, []*Plan{scan()}, false, nil); res[0].Outcome != Unchanged {
		t.Fatalf("third import: %+v", res[0])
	}
	if again, _ := store.Repo.ReadRef(ctx, gitstate.RunRef("r")); again != tip {
		t.Fatal("an import of an adopted run moved its ref")
	}
}

// TestImportedTimesReadBack: a source's times in every shape the importer accepts (RFC
// 3339 with an offset or a fraction, and without a zone, with a T or a space) are
// written as Stamp writes them, so the imported runs and their logs read back (a time
// in any other shape makes a run unreadable, ledger.CheckDocuments).
func TestImportedTimesReadBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shapes := []string{"2026-07-01T12:00:00Z", "2026-07-01T14:00:01.5+02:00", "2026-07-01T12:00:02", "2026-07-01 12:00:03", "2026-07-01T12:00:04.123456789Z"}
	kimi, ateam := t.TempDir(), t.TempDir()
	var klog, alog string
	for i, s := range shapes {
		klog += `{"run_id":"k","stage":"` + []string{"INIT", "INTENT_CAPTURED", "CLARIFY", "PLAN", "CODED"}[i] + `","ts":"` + s + `"}` + "\n"
		alog += `{"ts":"` + s + `","type":"stage_dispatched","run_id":"a","stage":"b","data":{}}` + "\n"
	}
	write(t, kimi, map[string]string{
		"k/state.json": `{"run_id":"k","created_ts":"` + shapes[3] + `","updated_ts":"` + shapes[1] + `","current_state":"CODED","stages":{"INIT":{"status":"done","ts":"` + shapes[2] + `"}},"scope_paths":[]}`,
		"k/log.jsonl":  klog,
	})
	write(t, ateam, map[string]string{
		"state/a.json":   `{"run_id":"a","task":"t","stage_order":["b"],"started_at":"` + shapes[1] + `","last_update":"` + shapes[3] + `","status":"running","stages":{"b":{"status":"dispatched","max_retries":9}}}`,
		"events/a.jsonl": alog,
	})
	kp, kprobs, err := ScanKimi(ctx, kimi, kimi)
	if err != nil || len(kprobs) != 0 || len(kp) != 1 {
		t.Fatalf("kimi-atlas: %v %+v %d", err, kprobs, len(kp))
	}
	ap, aprobs, err := ScanAgenTeam(ctx, ateam, ateam)
	if err != nil || len(aprobs) != 0 || len(ap) != 1 {
		t.Fatalf("agenteam: %v %+v %d", err, aprobs, len(ap))
	}
	store := newStore(t)
	for _, res := range Apply(ctx, store, append(kp, ap...), false, nil) {
		if res.Outcome != Imported {
			t.Fatalf("import: %+v", res)
		}
	}
	canonical := func(what, s string) {
		t.Helper()
		if tm, err := ledger.ParseStamp(s); err != nil || ledger.Stamp(tm) != s {
			t.Errorf("%s: %q is not as Stamp writes it", what, s)
		}
	}
	for _, id := range []string{"k", "a"} {
		r, err := store.Load(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		canonical(id+" created_at", r.Header.CreatedAt)
		canonical(id+" updated_at", r.State.UpdatedAt)
		for _, st := range r.State.Stages {
			if st.UpdatedAt != "" {
				canonical(id+" stage "+st.Name+" updated_at", st.UpdatedAt)
			}
			for _, at := range st.Attempts {
				canonical(id+" stage "+st.Name+" started_at", at.StartedAt)
			}
		}
		events, err := store.Log(ctx, id)
		if err != nil {
			t.Fatalf("%s log: %v", id, err)
		}
		if len(events) < len(shapes) {
			t.Fatalf("%s: %d events", id, len(events))
		}
		for _, e := range events {
			canonical(id+" event "+string(e.Type), e.Time)
		}
	}
}

// isWorktree takes only a linked worktree of the repository: not its main one (the
// user's checkout), nor one reached through a symbolic link.
func TestIsWorktreeTakesOnlyLinkedOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore(t)
	main := store.Repo.Worktree(filepath.Dir(store.Repo.CommonDir)).Path
	linked := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, main, "", "worktree", "add", "-q", "--detach", linked)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(linked, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{main: false, linked: true, link: false} {
		if got, why := isWorktree(ctx, store.Repo, path); got != want {
			t.Errorf("isWorktree(%s) = %v (%s), want %v", path, got, why, want)
		}
	}
}
