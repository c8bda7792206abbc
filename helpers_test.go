package gitatlas_test

// The root package's two helpers for starting processes: every git process its tests
// start goes through gitCmd, every git-atlas binary but TestGolden's (the race-built
// test binary, TestMain) is atlasBinary's.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// atlasBinary returns the directory of the real binary, built once per test binary
// (into a directory TestMain removes) without the race detector: the processes are
// what is under test, and -race makes each one several times slower (measured: the
// kill and stress tests here took 88 s with race-built children against 54 s). It is
// the git-atlas of every process this package starts but TestGolden's.
func atlasBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "atlas-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "git-atlas"), "./cmd/git-atlas").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

// built is the binary atlasBinary built.
var built struct {
	once sync.Once
	dir  string
	err  error
}

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
