package git

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Shell is a command line of the user's, run by `sh -c` in Dir: a verify, or the
// demo's worker. It is not git: it runs with the user's environment less the leaked
// variables (UserEnv), then Env, in a process group of its own that is killed whole
// when its context ends (a test runner's children go with it).
type Shell struct {
	Dir    string
	Script string
	Env    []string // extra variables, after UserEnv
	Stdout io.Writer
	Stderr io.Writer
	// WaitDelay bounds the wait, once the context ended and the group was killed,
	// for a descendant that left the group and keeps the output pipes open
	// (exec.Cmd.WaitDelay); 0 waits for them.
	WaitDelay time.Duration
}

// ShellResult is how a Shell command ended.
type ShellResult struct {
	// Started is false when the command never ran (Err says why).
	Started bool
	// ExitCode is the command's exit code: 0 when it succeeded, -1 when a signal
	// ended it.
	ExitCode int
	// Err is nil when the command exited 0.
	Err error
}

func (s Shell) command(ctx context.Context) *exec.Cmd {
	userCommand.note() // and again when it ends (shellResult)
	c := exec.CommandContext(ctx, "sh", "-c", s.Script)
	c.Dir = s.Dir
	c.Env = append(UserEnv(), s.Env...)
	c.Stdout, c.Stderr = s.Stdout, s.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = s.WaitDelay
	return c
}

// Run runs the command to its end, or until ctx ends (then its whole process group
// is killed).
func (s Shell) Run(ctx context.Context) ShellResult {
	c := s.command(ctx)
	return shellResult(c, c.Run())
}

func shellResult(c *exec.Cmd, err error) ShellResult {
	userCommand.note()
	if err != nil && c.ProcessState == nil {
		return ShellResult{ExitCode: -1, Err: err}
	}
	res := ShellResult{Started: true, Err: err}
	if err != nil {
		res.ExitCode = -1
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			res.ExitCode = ee.ExitCode()
		}
	}
	return res
}

// userCommand is what a user's command may change: anything (picture.go).
var userCommand = effect{list: true, all: true}

// Process is a Shell command started and not yet waited for.
type Process struct {
	c      *exec.Cmd
	cancel context.CancelFunc
	// Stdout is the command's standard output when Start was asked for it (Shell.Stdout
	// nil), else nil. Read it before Wait.
	Stdout io.Reader
}

// Start starts the command. With s.Stdout nil, its output is Process.Stdout.
func (s Shell) Start(ctx context.Context) (*Process, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := s.command(ctx)
	p := &Process{c: c, cancel: cancel}
	if s.Stdout == nil {
		out, err := c.StdoutPipe()
		if err != nil {
			cancel()
			return nil, err
		}
		p.Stdout = out
	}
	if err := c.Start(); err != nil {
		cancel()
		return nil, err
	}
	return p, nil
}

// Kill kills the command's whole process group and waits for it.
func (p *Process) Kill() ShellResult {
	p.cancel()
	return p.Wait()
}

// Wait waits for the command to end.
func (p *Process) Wait() ShellResult {
	defer p.cancel()
	return shellResult(p.c, p.c.Wait())
}
