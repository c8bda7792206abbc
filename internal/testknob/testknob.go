// Package testknob holds the knobs the test suites share that need no git: how big a
// sweep runs (the sweeps build tag) and how a test splits a field's name into words.
// It is a leaf: it imports nothing of the module, so the pure ledger's tests use it
// without importing git (internal/testenv, which starts git, forwards Long and Rounds
// for the suites that start processes).
package testknob

// SweepsTag is the build tag of the full stress and kill sweeps: `go test -tags sweeps`
// (.ci/run's sweep step, `make test-sweeps`) runs them at full size. Without it every
// sweep still runs, with fewer rounds, so that the README's test command stays short
// and nothing goes untested; the full sizes are then constants the compiler drops.
const SweepsTag = "sweeps"

// Long reports whether the tests were built with the sweeps tag: the full sweeps.
func Long() bool { return long }

// Rounds is long when the full sweeps were asked for, else short.
func Rounds(short, long int) int {
	if Long() {
		return long
	}
	return short
}
