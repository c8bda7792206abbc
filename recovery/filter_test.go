package recovery_test

import (
	"path/filepath"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// upperFilterName is the upper filter's program (recovery/internal/upperfilter),
// built by runTests into templatesDir.
const upperFilterName = "upper-filter"

// upperFilterPath is the program's path, set by runTests.
var upperFilterPath string

// buildUpperFilter builds the filter's program into dir.
func buildUpperFilter(dir string) (string, error) {
	p := filepath.Join(dir, upperFilterName)
	return p, testenv.BuildProgram("recovery/internal/upperfilter", p)
}

// upperFilter is a clean/smudge pair that changes every lower-case letter: a
// snapshot that went through it could not give the original text back. Clean makes
// ASCII letters upper case, smudge lower case, as `tr a-z A-Z` and `tr A-Z a-z` would,
// through one filter process for each git command.
func upperFilter(t testing.TB, dir string) {
	t.Helper()
	gitConfig(t, dir, "filter.upper.process", upperFilterPath, "filter.upper.required", "true")
}
