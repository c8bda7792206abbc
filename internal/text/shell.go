package text

import "strings"

// Command is a git-atlas command line for someone to run, every argument quoted for
// POSIX sh where it needs it (docs/contract.md §11.13: a printed command runs as printed): an
// argument of letters, digits and @%+=:,./_- (and # past its first byte) goes as it
// is, any other in single quotes (a quote inside it closed, escaped, reopened).
func Command(args ...string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ShellQuote(a))
	}
	return b.String()
}

// ShellQuote is one argument as POSIX sh reads it back unchanged.
func ShellQuote(s string) string {
	if s != "" && shellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("@%+=:,./_-", c) >= 0:
		case c == '#' && i > 0: // a word that starts with # is a comment
		default:
			return false
		}
	}
	return true
}
