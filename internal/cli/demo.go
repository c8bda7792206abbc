package cli

import (
	"github.com/git-atlas/git-atlas/internal/demo"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// DemoCmd is `git atlas demo`: an interrupted graph run and its resume, in a
// throwaway repository (package demo plays it; the commands it shows run here).
type DemoCmd struct {
	Keep bool   `help:"Keep the throwaway repository and print its path."`
	In   string `name:"in" help:"Make the throwaway repository in this directory (default: a new temporary one)." placeholder:"DIR" type:"path"`
}

// Run plays the demo.
func (c *DemoCmd) Run(env *Env) error {
	if env.JSON {
		return fault.Usage("demo prints a terminal session for people: it has no --json output").WithHint("run `git atlas demo` without --json")
	}
	return demo.Play(env.Ctx, demo.Options{Dir: c.In, Keep: c.Keep, Out: env.Stdout, Atlas: Main})
}
