package par

import (
	"os"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testknob"
)

func TestMain(m *testing.M) {
	testknob.NoRaceExitSleep()
	os.Exit(m.Run())
}
