package testknob

import (
	"flag"
	"runtime"
	"strconv"
)

// ProcessBoundParallel, in the TestMain of a suite whose tests mostly wait for the
// processes they start (git, git-atlas), makes -test.parallel default to twice
// GOMAXPROCS instead of GOMAXPROCS: with one test per CPU, the CPUs idle whenever a
// test waits for its child to start, exit or flush (bench/results/2026-12-07.md has
// what it changed). An explicit -parallel is kept. It parses the command line, as a
// TestMain that reads the testing flags must.
func ProcessBoundParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && flag.Lookup("test.parallel") != nil {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}
