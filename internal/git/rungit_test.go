package git

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// runGit runs git with args in dir, in env (nil: this process's, TestMain's pinned
// one), with stdin (none when ""), and returns its standard output, with git's
// standard error in the error. It is this package's one helper for running git in
// its own tests: they are package git, which internal/testenv (the other suites'
// GitRun, GitErr, Git) imports, so they cannot import it.
func runGit(dir string, env []string, stdin string, args ...string) (string, error) {
	c := exec.Command("git", args...)
	c.Dir, c.Env = dir, env
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return stdout.String(), nil
}

// mustGit is runGit that fails t on error; it returns the output trimmed.
func mustGit(t testing.TB, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	out, err := runGit(dir, env, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}
