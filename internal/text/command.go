package text

import (
	"fmt"
	"strconv"
	"strings"
)

// ShowCommand is a command as a person reads it before trusting it: Go-quoted (control
// characters, invisible and bidirectional characters escaped), whole, never cut, and
// every run of more than two spaces written outside the quotes as its length (`"make
// test" <200 spaces> "&& curl …"`), so nothing hides past the edge of a terminal.
func ShowCommand(command string) string {
	var b strings.Builder
	rest := command
	for {
		i := strings.Index(rest, "   ")
		if i < 0 {
			break
		}
		n := len(rest[i:]) - len(strings.TrimLeft(rest[i:], " "))
		if i > 0 {
			b.WriteString(strconv.Quote(rest[:i]) + " ")
		}
		fmt.Fprintf(&b, "<%d spaces>", n)
		rest = rest[i+n:]
		if rest != "" {
			b.WriteString(" ")
		}
	}
	if rest != "" || b.Len() == 0 {
		b.WriteString(strconv.Quote(rest))
	}
	return b.String()
}
