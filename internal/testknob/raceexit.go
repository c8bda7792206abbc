package testknob

import (
	"os"
	"strings"
	"syscall"
)

// NoRaceExitSleep is the first call of every suite's TestMain (testenv.Pin makes it
// for the suites it pins). A race-built binary's last act before a successful exit is
// the race runtime's finalizer, which sleeps GORACE's atexit_sleep_ms (1 s by default)
// so that races found late are still reported; `go test ./...` runs the packages'
// binaries one or two at a time, so the README's test command waited that second once
// per package, nearly all of what the smallest packages' tests took
// (bench/results/2026-12-07.md). The race runtime reads GORACE once, when the process
// starts, so a race-built binary whose GORACE does not set the sleep executes itself
// again, same arguments and same process, with atexit_sleep_ms=0 added: every race is
// still found, printed and turned into exit 66, as testenv does for the processes the
// suites start. Without the race detector, or if the executable cannot be found, it
// does nothing.
func NoRaceExitSleep() {
	g := ""
	for _, kv := range startEnv {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			g = v
		}
	}
	if !raceEnabled || strings.Contains(g, "atexit_sleep_ms") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := []string{"GORACE=" + strings.TrimSpace(g+" atexit_sleep_ms=0")}
	for _, kv := range startEnv {
		if !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure: run as is
}

// startEnv is the environment the binary started with: testknob is a leaf, so its
// variables are set before any package of the module changes the environment in its
// init (testenv's sets GORACE and TMPDIR), and the binary executed again starts from
// the same environment.
var startEnv = os.Environ()
