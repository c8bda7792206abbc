package gitstate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

// repoKind is one way git-atlas reaches a repository: go-git in-process, the git CLI
// fallback, or a sha256 repository (CLI, since go-git cannot open it).
type repoKind struct {
	name   string
	format string // sha1 or sha256
	noGo   bool   // GIT_ATLAS_NO_GOGIT=1
	goGit  bool   // expected Repository.UsesGoGit()
}

var repoKinds = []repoKind{
	{name: "gogit", format: "sha1", goGit: true},
	{name: "cli", format: "sha1", noGo: true},
	{name: "sha256", format: "sha256"},
}

// newRepo makes a repository with one commit and opens it the way kind says. The
// repository is a copy of one built once for each object format (testenv.CopyTemplate;
// its index, which holds no entry, removed: git reads a missing index as an empty one,
// and there is nothing to refresh): no git process, where git init and commit were two
// for each of this package's many repositories.
func newRepo(t testing.TB, kind repoKind) *git.Repository {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo") // git's environment is TestMain's (testenv.Pin)
	testenv.CopyTemplate(t, dir, "newRepo-"+kind.format, func(tmpl string) error {
		if _, err := testenv.GitErr(tmpl, "", "init", "-q", "-b", "main", "--object-format="+kind.format); err != nil {
			return err
		}
		if _, err := testenv.GitErr(tmpl, "", "commit", "-q", "--allow-empty", "-m", "first"); err != nil {
			return err
		}
		return os.Remove(filepath.Join(tmpl, ".git", "index"))
	})
	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if kind.noGo {
		repo.UseGitForObjects()
	}
	if repo.UsesGoGit() != kind.goGit {
		t.Fatalf("UsesGoGit = %v, want %v", repo.UsesGoGit(), kind.goGit)
	}
	return repo
}

// run runs git in dir and returns its trimmed stdout.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return runIn(t, dir, "", args...)
}

func runIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, stdin, args...)
}

// newRun creates a run with the given stage definitions.
func newRun(t testing.TB, s *Store, id string, defs ...ledger.StageDef) *ledger.Run {
	t.Helper()
	ctx := context.Background()
	base, err := s.Repo.ResolveCommit(ctx, git.HeadRev())
	if err != nil {
		t.Fatal(err)
	}
	h := ledger.Header{RunID: id, Kind: ledger.KindSingle, CreatedAt: ledger.Stamp(time.Now().UTC()), Baseline: base, Stages: defs}
	st := ledger.State{RunID: id, Status: ledger.RunRunning, Stages: []ledger.StageState{}}
	for _, d := range defs {
		st.Stages = append(st.Stages, ledger.StageState{Name: d.Name, Status: ledger.StagePending})
	}
	pin := git.RefUpdate{Name: PinRef(id, "baseline"), New: base.String(), Old: git.ZeroID}
	r, err := s.Create(ctx, h, st, ledger.Event{Type: "run_started"}, pin)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// transition applies one stage transition through the store, as the CLI does.
func transition(s *Store, id, stage, to string) error {
	_, err := s.Update(context.Background(), id, func(r *ledger.Run) (*Change, error) {
		from := ""
		if _, st, ok := r.Stage(stage); ok {
			from = st.Status
		}
		if err := ledger.ApplyStageTransition(r, stage, to, "", r.Header.Baseline, ledger.Stamp(time.Now().UTC()), ledger.RandomNonce()); err != nil {
			return nil, err
		}
		return &Change{Event: ledger.StageTransitionEvent(ledger.About{Stage: stage}, ledger.StageTransitionData{From: from, To: to})}, nil
	})
	return err
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
