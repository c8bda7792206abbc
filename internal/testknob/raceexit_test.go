package testknob

import (
	"os"
	"os/exec"
	"testing"
)

func TestMain(m *testing.M) {
	NoRaceExitSleep()
	if os.Getenv("TESTKNOB_PRINT_GORACE") == "1" { // a child of TestNoRaceExitSleep
		os.Stdout.WriteString(os.Getenv("GORACE"))
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
	cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1", "TESTKNOB_PRINT_GORACE=1")
	out, err := cmd.Output()
	if got, want := string(out), "halt_on_error=1 atexit_sleep_ms=0"; err != nil || got != want {
		t.Errorf("the binary started with GORACE=halt_on_error=1 ran with GORACE=%q (%v), want %q", got, err, want)
	}
}
