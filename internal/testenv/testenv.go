// Package testenv holds the conventions the test suites share: which sweeps run long.
package testenv

import "os"

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
