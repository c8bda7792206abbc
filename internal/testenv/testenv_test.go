package testenv

import (
	"strconv"
	"testing"
	"time"
)

// TestMore: a sweep always runs its short count; past it, it goes on until the
// deadline, and forever when none (or no Unix time) is set. (It sets the process's
// environment, so it does not run in parallel.)
func TestMore(t *testing.T) {
	past := strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)
	future := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	for _, c := range []struct {
		deadline    string
		done, short int
		want        bool
	}{
		{"", 100, 6, true},
		{"soon", 100, 6, true},
		{future, 100, 6, true},
		{past, 5, 6, true},
		{past, 6, 6, false},
		{past, 100, 6, false},
	} {
		t.Setenv(DeadlineVar, c.deadline)
		if got := More(c.done, c.short); got != c.want {
			t.Errorf("deadline %q: More(%d, %d) = %v, want %v", c.deadline, c.done, c.short, got, c.want)
		}
	}
}
