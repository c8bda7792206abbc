// Command git-atlas is the durable ledger of AI-agent runs, run by git as `git atlas`.
package main

import (
	"os"
	"runtime/debug"

	"github.com/git-atlas/git-atlas/internal/cli"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A command lives for milliseconds and holds little: collecting when the heap
		// has grown 4x (not 2x) skips collections that were a measurable share of `list`
		// over 1,000 runs (bench/results/2026-12-05.md). GOGC, when set, still decides.
		debug.SetGCPercent(400)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
