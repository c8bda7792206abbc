package text

import (
	"os/exec"
	"testing"
)

// Every argument comes back from sh as it went in, whatever it holds.
func TestCommandQuotesForSh(t *testing.T) {
	t.Parallel()
	args := []string{"git", "atlas", "transition", "r-1.x", "code", "passed", "--lease", "code#1@0.ab12",
		"#x", "a b", "it's", "$(touch /tmp/no)", "`x`", "", "-v", "a\nb", "*", "~", "é"}
	line := Command(args...)
	if want := "git atlas transition r-1.x code passed --lease code#1@0.ab12"; line[:len(want)] != want {
		t.Fatalf("plain arguments are quoted: %s", line)
	}
	got, err := exec.Command("sh", "-c", "set -- "+line+`; for a in "$@"; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	start := 0
	for i, c := range got {
		if c == 0 {
			back = append(back, string(got[start:i]))
			start = i + 1
		}
	}
	if len(back) != len(args) {
		t.Fatalf("sh read %d arguments from %s, want %d: %q", len(back), line, len(args), back)
	}
	for i := range args {
		if back[i] != args[i] {
			t.Errorf("argument %d: sh read %q, want %q (line %s)", i, back[i], args[i], line)
		}
	}
}
