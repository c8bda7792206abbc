package gitatlas_test

// The root package's two helpers for starting processes: every git process its tests
// start goes through gitCmd, every git-atlas binary but TestGolden's (the race-built
// test binary, TestMain) is atlasBinary's.

import (
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// atlasBinary is the directory of testenv.Command, the git-atlas of every process
// this package starts but TestGolden's (the race-built test binary, TestMain).
func atlasBinary(t *testing.T) string { return filepath.Dir(testenv.Command(t)) }

// gitRun is testenv.GitRun: the one place this package starts git.
func gitRun(dir string, env []string, stdin string, args ...string) (string, string, error) {
	return testenv.GitRun(dir, env, stdin, args...)
}

// gitCmd is testenv.GitEnvErr.
func gitCmd(dir string, env []string, stdin string, args ...string) ([]byte, error) {
	out, err := testenv.GitEnvErr(dir, env, stdin, args...)
	return []byte(out), err
}

// mustGit is testenv.GitEnv.
func mustGit(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	return testenv.GitEnv(t, dir, env, stdin, args...)
}
