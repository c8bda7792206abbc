package ledger

import (
	"strings"
	"testing"
)

// plainName is ValidName's verdict.
func FuzzPlainName(f *testing.F) {
	for _, s := range []string{"a", "a.b", "A_1-x", "..", "a..b", "x.lock", ".a", "-a", "_a", "a.", strings.Repeat("a", 64), strings.Repeat("a", 65), "é", "a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if plainName(name) != (ValidName("job", name) == nil) {
			t.Fatalf("plainName(%q) = %v, ValidName says %v", name, plainName(name), ValidName("job", name))
		}
	})
}
