package cli

import (
	"os"
	"time"

	"github.com/git-atlas/git-atlas/ops"

	"golang.org/x/term"
)

// System is what a command reads of the process around it: the environment, whether
// a stream is an interactive terminal and how wide it is, and the clock. Main gives
// the process's own (OSSystem); a test gives its own, so that a prompt or a progress
// bar is tested without a pseudo-terminal and without setting the process's
// environment (such tests can run in parallel). kong's `env:` flag defaults (--session from
// $ATLAS_SESSION) still read the process's environment: kong has no hook for it.
type System struct {
	// Getenv returns an environment variable ("" when unset).
	Getenv func(key string) string
	// Terminal reports whether a stream (stdin, stdout or stderr) is an interactive
	// terminal, and its width in columns (0 when unknown).
	Terminal func(stream any) (ok bool, width int)
	// Now is the clock: the time the operations write and judge by and a command
	// shows ages from (nil: the system clock, in UTC).
	Now func() time.Time
	// Via is the front end the command came through (ops.ViaCommandLine, ViaMCP,
	// ViaHook): a person's step is refused through MCP and from an agent hook.
	Via string
}

// OSSystem is the process's environment and terminals.
func OSSystem() System {
	return System{Getenv: os.Getenv, Terminal: osTerminal, Now: utcNow}
}

func utcNow() time.Time { return time.Now().UTC() }

func osTerminal(stream any) (bool, int) {
	f, ok := stream.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		cols = 0
	}
	return true, cols
}

// system is the command's System; an Env made without one has the process's.
func (e *Env) system() System {
	if e.sys.Getenv == nil || e.sys.Terminal == nil {
		s := OSSystem()
		s.Via = e.sys.Via
		return s
	}
	return e.sys
}

// person is who stands behind the command, for a person's step (ops.Person): the
// front end, a person at a terminal (stdin one, and not CI), and --approved-by.
func (e *Env) person(approvedBy string) ops.Person {
	return ops.Person{Via: e.system().Via, Terminal: e.isTerminal(e.Stdin) && e.getenv("CI") != "true", ApprovedBy: approvedBy}
}

// forAgent reports whether the command's output goes to an agent's context (MCP, an
// agent's hook): a run's free text then reaches it only where ops trusts it.
func (e *Env) forAgent() bool { return e.system().Via != ops.ViaCommandLine }

// isTerminal reports whether stream is an interactive terminal.
func (e *Env) isTerminal(stream any) bool {
	ok, _ := e.system().Terminal(stream)
	return ok
}

// terminalWidth is stream's width in columns when it is a terminal (0 when unknown).
func (e *Env) terminalWidth(stream any) (bool, int) { return e.system().Terminal(stream) }

// now is the command's clock.
func (e *Env) now() time.Time {
	if n := e.system().Now; n != nil {
		return n()
	}
	return utcNow()
}

// getenv reads the command's environment.
func (e *Env) getenv(key string) string { return e.system().Getenv(key) }
