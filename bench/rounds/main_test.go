package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testknob"
)

func TestMain(m *testing.M) {
	testknob.NoRaceExitSleep()
	os.Exit(m.Run())
}

// TestCountSumsStages: a row's processes are its stages' counts, summed, each stage
// run under the counting script with its input and output connected; a script that
// cannot count makes the row's "-".
func TestCountSumsStages(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// As bench/procs.sh: COUNT COMMAND..., here counting each command's words.
	words := script("words.sh", "c=$1; shift; echo $# >\"$c\"; exec \"$@\"\n")
	c := &command{name: "x", stages: parse("printf 'a b' | wc -w")}
	if got, err := count(dir, words, c); err != nil || got != "4" {
		t.Errorf("count = %q, %v; want 4 (2 words + 2 words)", got, err)
	}
	none := script("none.sh", "c=$1; shift; echo - >\"$c\"; exec \"$@\"\n")
	if got, err := count(dir, none, c); err != nil || got != "-" {
		t.Errorf("count without strace = %q, %v; want -", got, err)
	}
}
