package gitatlas_test

// The root package's two helpers for starting processes: every git process its tests
// start goes through gitCmd, every git-atlas binary but TestGolden's (the race-built
// test binary, TestMain) is atlasBinary's.

import (
	"fmt"
	"path/filepath"
	"strings"
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

// gitCmd is gitRun with git's standard error in the error it returns.
func gitCmd(dir string, env []string, stdin string, args ...string) ([]byte, error) {
	out, stderr, err := gitRun(dir, env, stdin, args...)
	if err != nil {
		return []byte(out), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr)
	}
	return []byte(out), nil
}

// mustGit is gitCmd that fails t on error; it returns the output trimmed.
func mustGit(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	out, err := gitCmd(dir, env, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
