// Package testenv holds the conventions the test suites share: which sweeps run long,
// and how the binaries a suite starts behave under the race detector.
package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A binary built with -race sleeps GORACE's atexit_sleep_ms (1 s by default) before it
// exits, so that late race reports get out. The suites run their own test binary as a
// command (testscript, the stress writers) thousands of times; that second each was
// most of the README's test command. Races are still reported: a race found while the
// command ran is printed when found and makes it exit 66. Every suite that imports
// testenv turns the sleep off for the processes it starts, unless GORACE says otherwise.
func init() {
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
}

// LongVar is the environment variable that selects the full stress and kill sweeps
// (.ci/run sets it). Without it every sweep still runs, with fewer rounds, so that the
// README's test command stays short and nothing goes untested.
const LongVar = "ATLAS_LONG_TESTS"

// Long reports whether the full sweeps were asked for: ATLAS_LONG_TESTS is set to
// anything but "" or "0".
func Long() bool {
	v := os.Getenv(LongVar)
	return v != "" && v != "0"
}

// Rounds is long when the full sweeps were asked for, else short.
func Rounds(short, long int) int {
	if Long() {
		return long
	}
	return short
}

// commandName is the name under which a test binary runs as git-atlas (see Main).
const commandName = "git-atlas"

// RunAsCommand, called first in TestMain, runs main and exits with its code when the
// test binary was started through the link Command made (its name is git-atlas), and
// returns otherwise: a suite that starts git-atlas as a process needs no `go build` of
// its own (the README's test command once built the same binary in three packages at
// once).
func RunAsCommand(main func() int) {
	if filepath.Base(os.Args[0]) == commandName {
		os.Exit(main())
	}
}

// Command returns the path of a git-atlas command for t: a link, named git-atlas, to
// the running test binary, whose TestMain must call RunAsCommand. Its directory can go first
// on PATH for `git atlas`. The binary is the test binary, race detector included when
// the tests run with -race.
func Command(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), commandName)
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}
