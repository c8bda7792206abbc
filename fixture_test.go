package gitatlas_test

import (
	"os"
	"path/filepath"
	"sync"

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
// of the test has the index to rewrite. One git process instead of seven: the fixture
// is made for every transcript.
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
	_, err := gitCmd(repo, append(os.Environ(), vars...), "", "update-index", "-q", "--refresh")
	return err
}
