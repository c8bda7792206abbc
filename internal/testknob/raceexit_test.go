package testknob

import (
	"flag"
	"os"
	"os/exec"
	"testing"
)

func TestMain(m *testing.M) {
	NoRaceExitSleep()
	switch os.Getenv("TESTKNOB_CHILD") {
	case "gorace": // a child of TestNoRaceExitSleep
		_, _ = os.Stdout.WriteString(os.Getenv("GORACE"))
		os.Exit(0)
	case "parallel": // a child of TestProcessBoundParallel
		ProcessBoundParallel()
		_, _ = os.Stdout.WriteString(flag.Lookup("test.parallel").Value.String())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestNoRaceExitSleep: a race-built test binary runs with the exit sleep off and the
// rest of its GORACE kept, in one GORACE variable.
func TestNoRaceExitSleep(t *testing.T) {
	if !raceEnabled {
		t.Skip("built without -race: there is no exit sleep")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1", "TESTKNOB_CHILD=gorace")
	out, err := cmd.Output()
	if got, want := string(out), "halt_on_error=1 atexit_sleep_ms=0"; err != nil || got != want {
		t.Errorf("the binary started with GORACE=halt_on_error=1 ran with GORACE=%q (%v), want %q", got, err, want)
	}
}

// TestProcessBoundParallel: a suite's -test.parallel defaults to twice GOMAXPROCS;
// one given on the command line is kept.
func TestProcessBoundParallel(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "4"},
		{[]string{"-test.parallel=3"}, "3"},
	} {
		cmd := exec.Command(exe, c.args...)
		cmd.Env = append(os.Environ(), "TESTKNOB_CHILD=parallel", "GOMAXPROCS=2")
		out, err := cmd.Output()
		if err != nil || string(out) != c.want {
			t.Errorf("with %q and GOMAXPROCS=2: -test.parallel %q (%v), want %s", c.args, out, err, c.want)
		}
	}
}
