package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/importer"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// kimiRun is a finished kimi-atlas run as its ctxstore.py writes one, its
// state.json only.
const kimiRun = `{"run_id": "%s", "created_ts": "2026-07-05T10:15:01Z", "updated_ts": "2026-07-05T10:30:00Z",
 "current_state": "OUTPUT", "intent": "fix the typo", "success_criteria": ["typo gone"], "stages": {}, "scope_paths": []}`

// kimiSource writes kimi-atlas runs named ids under dir.
func (f *wtFixture) kimiSource(dir string, ids ...string) {
	f.t.Helper()
	for _, id := range ids {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			f.t.Fatal(err)
		}
		f.write(filepath.Join(dir, id), "state.json", fmt.Sprintf(kimiRun, id))
	}
}

func TestImportUnknownSystemRefused(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	f.kimiSource(filepath.Join(f.dir, ".atlas"), "20260705-101501")
	res, err := f.ops.Import(f.ctx, ImportRequest{System: "svn", Dir: filepath.Join(f.dir, ".atlas")})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), `unknown system "svn"`) || res != nil {
		t.Fatalf("import svn: %+v, %v, want a usage error naming the system", res, err)
	}
}

// The source directory lives in a worktree: a bare repository has none.
func TestImportNeedsAWorktree(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	bare := filepath.Join(t.TempDir(), "bare.git")
	f.git(f.dir, "clone", "-q", "--bare", f.dir, bare)
	repo, err := git.Open(f.ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(repo).Import(f.ctx, ImportRequest{System: importer.KimiAtlas}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("import in a bare repository: %v, want a usage error", err)
	}
}

// Without a directory, import reads the system's own at the worktree root; a dry
// run writes no ref, and the import then writes the run, its source path as the
// repository sees it.
func TestImportDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	const id = "20260705-101501"
	f.kimiSource(filepath.Join(f.dir, ".atlas"), id)
	refs := f.refs()
	dry, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Dir != filepath.Join(f.dir, ".atlas") || !dry.DryRun || len(dry.Runs) != 1 || dry.Runs[0].Outcome != importer.Planned || dry.Runs[0].RunID != id {
		t.Fatalf("dry run: %+v", dry)
	}
	if again := f.refs(); again != refs {
		t.Fatalf("a dry run moved refs:\n%s---\n%s", refs, again)
	}
	res, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Outcome != importer.Imported {
		t.Fatalf("import: %+v", res)
	}
	r, err := f.ops.Reader().Load(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if src := r.Header.ImportedFrom; src == nil || src.System != importer.KimiAtlas || src.Path != ".atlas/"+id {
		t.Fatalf("imported_from: %+v, want kimi-atlas at .atlas/%s", src, id)
	}
}

// A directory with no run in it is not found, and the result, shown first, has empty
// lists, not nulls.
func TestImportOfEmptyDirectoryIsNotFound(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	dir := filepath.Join(f.dir, ".agenteam")
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := f.ops.Import(f.ctx, ImportRequest{System: importer.AgenTeam})
	if !errors.Is(err, fault.ErrNotFound) || res == nil {
		t.Fatalf("import of an empty directory: %+v, %v, want the result and a not-found error", res, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"system":"agenteam","dir":"` + dir + `","runs":[],"problems":[]}`; string(b) != want {
		t.Fatalf("result: %s, want %s", b, want)
	}
	if _, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas}); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("import with no .atlas/: %v, want not found", err)
	}
}

// When every run found is refused, the result comes back with a failure; one run
// imported beside a refused one is a success.
func TestImportWithEveryRunRefusedFails(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	dir := t.TempDir()
	f.kimiSource(dir, "r1") // the fixture's run r1 was not imported: refused
	res, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, Dir: dir})
	if !errors.Is(err, errNothingImported) || res == nil || len(res.Runs) != 1 || res.Runs[0].Outcome != importer.Refused {
		t.Fatalf("import: %+v, %v, want the refusal and a failure", res, err)
	}
	f.kimiSource(dir, "20260705-101501")
	if res, err = f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, Dir: dir}); err != nil || len(res.Runs) != 2 {
		t.Fatalf("import: %+v, %v, want one run refused, one imported, no error", res, err)
	}
}

// An import that imported nothing because a check of job add (or a bound on source
// files) refused every run exits as job add would; a mix of kinds, or a file that
// could not be parsed, stays a plain failure. A cancelled import (SIGTERM) ends with
// the cancellation and writes nothing.
func TestImportRefusalKinds(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	graph := func(dir, id, jobs string) {
		f.t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		f.write(filepath.Join(dir, id), "state.json", fmt.Sprintf(kimiRun, id))
		f.write(filepath.Join(dir, id), "plan.dag.json", `{"meta":{},"nodes":{},"jobs":[`+jobs+`]}`)
	}
	cycle := t.TempDir()
	graph(cycle, "c", `{"job_id":"a","deps":["b"],"state":"PENDING"},{"job_id":"b","deps":["a"],"state":"PENDING"}`)
	if _, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, Dir: cycle}); !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "jobs form a cycle") {
		t.Errorf("cycle: %v, want a usage error (exit 2) naming the cycle", err)
	}
	mixed := t.TempDir()
	graph(mixed, "c", `{"job_id":"a","deps":["b"],"state":"PENDING"},{"job_id":"b","deps":["a"],"state":"PENDING"}`)
	graph(mixed, "g", `{"job_id":"a","deps":["ghost"],"state":"PENDING"}`)
	if _, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, Dir: mixed}); !errors.Is(err, errNothingImported) {
		t.Errorf("mixed refusals: %v, want the plain failure", err)
	}
	refs := f.refs()
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	ok := t.TempDir()
	f.kimiSource(ok, "20260705-101501")
	if _, err := f.ops.Import(ctx, ImportRequest{System: importer.KimiAtlas, Dir: ok}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if again := f.refs(); again != refs {
		t.Errorf("a cancelled import moved refs")
	}
}

// A source run keeps the name an earlier import gave it when the source later gains
// a run whose id collides with it: é1 was imported as 1; è1, added since, would
// come first alone, but gets a name of its own, and nothing is imported twice.
func TestImportKeepsEarlierNames(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "main")
	dir := t.TempDir()
	f.kimiSource(dir, "é1")
	res, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, Dir: dir})
	if err != nil || len(res.Runs) != 1 || res.Runs[0].RunID != "1" {
		t.Fatalf("first import: %+v, %v", res, err)
	}
	f.kimiSource(dir, "è1")
	outcomes := func() map[string]string {
		t.Helper()
		res, err := f.ops.Import(f.ctx, ImportRequest{System: importer.KimiAtlas, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range res.Runs {
			got[r.SourceID] = r.Outcome + " " + r.RunID
		}
		return got
	}
	got := outcomes()
	if got["é1"] != "unchanged 1" || !strings.HasPrefix(got["è1"], "imported 1-") {
		t.Fatalf("second import: %v, want é1 unchanged as 1 and è1 imported under a name of its own", got)
	}
	again := outcomes()
	if again["é1"] != "unchanged 1" || again["è1"] != "unchanged "+strings.TrimPrefix(got["è1"], "imported ") {
		t.Fatalf("third import: %v", again)
	}
}
