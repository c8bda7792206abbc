// Command git-atlas is the durable ledger of AI-agent runs, run by git as `git atlas`.
package main

import (
	"os"

	"github.com/git-atlas/git-atlas/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
