package cli

import (
	"io"
	"path/filepath"

	"github.com/git-atlas/git-atlas/mcpserver"
	"github.com/git-atlas/git-atlas/ops"
)

// McpCmd is `git atlas mcp`: the Model Context Protocol server on stdio (docs/contract.md §12).
type McpCmd struct {
	Repo string `type:"path" help:"The repository the tools work on (default: -C or the working directory)." placeholder:"PATH"`
}

// Help is the command's long help.
func (c *McpCmd) Help() string {
	return `Speaks MCP (newline-delimited JSON-RPC) on stdin and stdout; logs go to stderr only.
One tool per operation: start, list, show, log, transition, event, finish, job_add,
job_claim, job_renew, job_done, job_list, reap, worktree_add, worktree_list,
worktree_remove, union, resume_detect, resume_plan, resume, recover, recovery_list,
recovery_show, recovery_restore, audit. Each has an input and an output JSON schema; a
tool calls the operation of the command of the same name in this process and returns
the document the command prints with --json; it never prompts. A failed operation is
a tool error carrying {"error": {"code", "kind", "message", "hint"}}, as --json prints
it, naming the tool's fields (ttl where the command line says --ttl). Register it with
` + "`git atlas agent install claude|codex|kimi --mcp`" + `.`
}

// Run serves until the client closes stdin.
func (c *McpCmd) Run(env *Env) error {
	dir := c.Repo
	if dir == "" {
		dir = env.Dir
	}
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	env.Dir = abs
	if _, err := env.Repo(); err != nil { // refuse to serve outside a repository
		return err
	}
	base, err := env.Ops() // the repository, its remote and clock
	if err != nil {
		return err
	}
	return mcpserver.Serve(env.Ctx, mcpserver.Options{
		Dir: abs,
		// The server lives as long as the agent's session, and the worktrees and the
		// configuration change between its calls: each call reads them afresh, as a
		// command would.
		Ops:     func() (*ops.Ops, error) { return base.Fresh(), nil },
		Session: env.getenv("ATLAS_SESSION"),
		Version: version(),
		In:      io.NopCloser(env.Stdin),
		Out:     nopWriteCloser{env.Stdout},
		Log:     env.Stderr,
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
