package testenv

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// GitRun runs git with args in dir, in env (the whole environment; nil: this
// process's, Pin's in a suite that pins it), with stdin (none when ""), and returns
// its standard output and standard error. It and the helpers below (GitErr, GitEnvErr:
// the output or an error with git's message; Git, GitEnv: the trimmed output or the
// test fails) are the suites' one way of running git themselves (git-atlas's own git
// runs through internal/git; internal/git's tests keep one helper of their own, as
// testenv imports internal/git).
func GitRun(dir string, env []string, stdin string, args ...string) (string, string, error) {
	c := exec.Command("git", args...)
	c.Dir, c.Env = dir, env
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	return stdout.String(), stderr.String(), err
}

// GitErr is GitEnvErr in this process's environment (Pin's, in a suite that pins it).
func GitErr(dir, stdin string, args ...string) (string, error) {
	return GitEnvErr(dir, nil, stdin, args...)
}

// GitEnvErr is GitRun with git's standard error in the error it returns.
func GitEnvErr(dir string, env []string, stdin string, args ...string) (string, error) {
	out, stderr, err := GitRun(dir, env, stdin, args...)
	if err != nil {
		return out, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, stderr)
	}
	return out, nil
}

// Git is GitEnv in this process's environment (Pin's, in a suite that pins it).
func Git(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	return GitEnv(t, dir, nil, stdin, args...)
}

// GitEnv is GitEnvErr that fails t on error; it returns the output trimmed.
func GitEnv(t testing.TB, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	out, err := GitEnvErr(dir, env, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}
