//go:build !race

package testknob

// raceEnabled: built with -race.
const raceEnabled = false
