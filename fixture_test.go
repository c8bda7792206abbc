package gitatlas_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// fixtureTemplate is the user's repository buildFixture made once for the whole test
// binary; cleaningUp removes it.
var fixtureTemplate struct {
	once sync.Once
	dir  string // holds repo
	err  error
}

// makeFixture creates the user's repository at repo (see buildFixture): a copy of the
// one built for the first caller, its index refreshed, since the copy's files have
// other inodes and change times than the index recorded. What a test sees is what a
// fresh build gives: the same commits (identity and dates are pinned), index entries,
// files, modes and modification times, and a clean stat cache, so that no git command
// of the test has the index to rewrite. No git process (restat refreshes the index)
// instead of seven: the fixture is made for every transcript.
func makeFixture(repo string, vars []string) error {
	fixtureTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "atlas-fixture-")
		if err != nil {
			fixtureTemplate.err = err
			return
		}
		fixtureTemplate.dir = dir
		fixtureTemplate.err = buildFixture(filepath.Join(dir, "repo"), vars)
	})
	if fixtureTemplate.err != nil {
		return fixtureTemplate.err
	}
	if err := testenv.CopyTree(repo, filepath.Join(fixtureTemplate.dir, "repo")); err != nil {
		return err
	}
	tmpl := filepath.Join(fixtureTemplate.dir, "repo")
	if ok, err := testenv.Restat(repo, tmpl); err != nil || ok {
		return err
	}
	_, err := gitCmd(repo, append(os.Environ(), vars...), "", "update-index", "-q", "--refresh")
	return err
}

// TestFixtureIndexRefreshed: the copy's index, refreshed without git (testenv.Restat), is one
// git has nothing to refresh in: `git update-index --refresh` leaves its bytes as they
// are, and git status lists exactly the fixture's three changes.
func TestFixtureIndexRefreshed(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := testenv.Home(home); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), gitEnv(home)...)
	repo := filepath.Join(work, "repo")
	if err := makeFixture(repo, gitEnv(home)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	if err := testenv.CopyTree(repo, filepath.Join(fixtureTemplate.dir, "repo")); err != nil {
		t.Fatal(err)
	}
	if ok, err := testenv.Restat(repo, filepath.Join(fixtureTemplate.dir, "repo")); err != nil || !ok {
		t.Fatalf("restat: %v, %v: git would refresh the index", ok, err)
	}
	index := filepath.Join(repo, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	mustGit(t, repo, env, "", "update-index", "-q", "--refresh")
	if after, err := os.ReadFile(index); err != nil || !bytes.Equal(after, before) {
		t.Errorf("git refreshed the index restat wrote (%v)", err)
	}
	if st, err := gitCmd(repo, env, "", "status", "--porcelain"); err != nil || string(st) != " M README\nM  src/a.go\n?? notes.txt\n" {
		t.Errorf("git status: %v\n%s", err, st)
	}
}
