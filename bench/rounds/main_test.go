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

// TestRunMeasuresEachStage: a pipeline's run reports its wall time, its CPU time
// (every stage's, and what each stage waited for: here a shell's child does the work)
// and its largest process's peak RSS; a ratio over a floor too small to measure is "-".
func TestRunMeasuresEachStage(t *testing.T) {
	busy := `sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo $i'`
	u, err := run(t.TempDir(), [][]string{{"sh", "-c", busy}, {"wc", "-c"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if u.wall <= 0 || u.cpu <= 0 || u.rss <= 0 {
		t.Errorf("run = %+v; want wall, CPU and peak RSS measured", u)
	}
	if got := ratio(3, 0); got != "-" {
		t.Errorf("ratio over a zero floor = %q, want -", got)
	}
	if got := ratio(3, 2); got != "1.50x" {
		t.Errorf("ratio(3, 2) = %q, want 1.50x", got)
	}
}
