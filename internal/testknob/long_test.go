//go:build !sweeps

package testknob

import "testing"

// TestShortWithoutTheTag: without the sweeps build tag the sweeps are short, whatever
// the environment says (ATLAS_LONG_TESTS once chose the full sizes: the README's test
// command must not grow because a variable was left set).
func TestShortWithoutTheTag(t *testing.T) {
	t.Setenv("ATLAS_LONG_TESTS", "1")
	if Long() || Rounds(1, 2) != 1 {
		t.Errorf("Long() = %v, Rounds(1, 2) = %d without the %s tag: want false, 1", Long(), Rounds(1, 2), SweepsTag)
	}
}
