// Package cli is git-atlas's command line: the kong command tree, human and JSON
// output, and the mapping of errors to exit codes. Only this package prints or exits.
package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
)

// Version is set at build time with -ldflags "-X ...cli.Version=...".
var Version = "0.1.0-dev"

// Globals are the flags every command takes.
type Globals struct {
	JSON    bool             `help:"Machine output on stdout; errors as a JSON object on stderr." name:"json"`
	Dir     string           `short:"C" help:"Run as if git-atlas was started in <path>." placeholder:"PATH" type:"path"`
	Yes     bool             `help:"Assume yes: never prompt (headless policy)."`
	Version kong.VersionFlag `help:"Print the version and exit."`
}

// CLI is the command tree.
type CLI struct {
	Globals

	Start      StartCmd      `cmd:"" help:"Start a run: pin its baseline and freeze its header."`
	List       ListCmd       `cmd:"" help:"List runs (default: not finished)."`
	Show       ShowCmd       `cmd:"" help:"Show a run's header and state."`
	Log        LogCmd        `cmd:"" help:"Show a run's events, oldest first."`
	Transition TransitionCmd `cmd:"" help:"Move a stage to a new status (SPEC §5.2)."`
	Event      EventCmd      `cmd:"" help:"Append an event to a run."`
	Finish     FinishCmd     `cmd:"" help:"Finish a run: completed, stopped or failed."`
	Job        JobCmd        `cmd:"" help:"Graph runs: add, claim, renew, finish and list jobs."`
	Reap       ReapCmd       `cmd:"" help:"Graph runs: expired job leases take the timeout transition."`
	Worktree   WorktreeCmd   `cmd:"" help:"Managed worktrees: add, list, remove."`
	Union      UnionCmd      `cmd:"" help:"(Re)build a run's union of its nodes' branches, in its own worktree."`
	Resume     ResumeCmd     `cmd:"" help:"Resume an interrupted run: detect, plan, reset, verify first, report."`
	Recover    RecoverCmd    `cmd:"" help:"Preserve and replay a stage: snapshot its worktree, branch at its baseline."`
	Recovery   RecoveryGroup `cmd:"" help:"Recovery snapshots: list, show, restore."`
	Audit      AuditCmd      `cmd:"" help:"Classify every worktree and atlas branch and ref; exit 10 when something needs attention."`
	Gc         GcCmd         `cmd:"" name:"gc" help:"Clean up what finished runs left: a plan by default, done with --apply."`
	Push       PushCmd       `cmd:"" help:"Push the ledger (refs/atlas/*, atlas/ branches) to a remote: atomic, leased, fast-forward only."`
	Pull       PullCmd       `cmd:"" help:"Pull the ledger from a remote: fast-forward runs, create missing refs, report diverged runs."`
	Hooks      HooksCmd      `cmd:"" help:"The post-checkout hook: install, uninstall, status."`
	Hook       HookCmd       `cmd:"" hidden:"" help:"Run by the installed hook (internal)."`
	Agent      AgentCmd      `cmd:"" help:"Coding agents: install or remove the session-start hook and the protocol text; the hook itself."`
	Graph      GraphCmd      `cmd:"" help:"Draw a run: a graph run's DAG with each job's state, or a single run's stages."`
	Undo       UndoCmd       `cmd:"" help:"Go back to the state after an event, as one new event: epoch raised, nothing refunded."`
	Demo       DemoCmd       `cmd:"" help:"Play an interrupted graph run and its resume in a throwaway repository."`
	Completion CompletionCmd `cmd:"" help:"Print the shell completion script: bash, zsh or fish."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"List completions of a command line (what the completion scripts call)."`
	Help       HelpCmd       `cmd:"" help:"Show help for a command."`
}

// Env is what every command's Run gets: the streams, the global flags, and the
// repository, opened once on first use.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	JSON   bool
	Yes    bool
	Dir    string

	repo        *git.Repository
	pre         *preopen
	stdinReader *bufio.Reader
	store       *gitstate.Store
	kong        *kong.Kong
}

// Repo opens the repository of -C (or the working directory) once.
func (e *Env) Repo() (*git.Repository, error) {
	if e.repo == nil {
		r, err := e.pre.take(e.Dir)
		if r == nil && err == nil {
			r, err = git.Open(e.Ctx, e.Dir)
		}
		if err != nil {
			if errors.Is(err, git.ErrNotRepository) {
				return nil, &fault.Error{Kind: fault.ErrUsage, Msg: err.Error(), Hint: "run git atlas inside a git repository, or pass -C <path>"}
			}
			return nil, err
		}
		e.repo = r
	}
	return e.repo, nil
}

// path resolves a file argument the way git resolves one after -C: relative to the
// -C directory, not to the directory the process started in.
func (e *Env) path(p string) string {
	if p == "" || filepath.IsAbs(p) || e.Dir == "" {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// Store returns the run ledger of the repository.
func (e *Env) Store() (*gitstate.Store, error) {
	if e.store == nil {
		r, err := e.Repo()
		if err != nil {
			return nil, err
		}
		e.store = gitstate.New(r)
	}
	return e.store, nil
}

// out prints v as JSON with --json, else calls human.
func (e *Env) out(v any, human func(w io.Writer)) error {
	if e.JSON {
		return printJSON(e.Stdout, v)
	}
	human(e.Stdout)
	return nil
}

// warn prints a warning for people on stderr (also under --json: stderr is not parsed
// for success).
func (e *Env) warn(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "warning: "+format+"\n", args...)
}

type exitPanic int

// Main runs git-atlas with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	jsonMode := hasFlag(args, "--json")
	pre := startOpen(ctx, args)
	defer pre.stop()

	var root CLI
	parser, err := kong.New(&root,
		kong.Name("git atlas"),
		kong.Description("The durable ledger of AI-agent runs, kept in the repository under refs/atlas/."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitPanic(c)) }),
		kong.Vars{"version": "git-atlas " + Version},
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpPrinter),
	)
	if err != nil {
		fmt.Fprintln(stderr, "git-atlas: internal error:", err)
		return ExitFailure
	}
	defer func() {
		if p := recover(); p != nil {
			c, ok := p.(exitPanic)
			if !ok {
				panic(p)
			}
			code = int(c)
			if code == 80 { // kong's default for usage errors
				code = ExitUsage
			}
		}
	}()
	if len(args) == 0 {
		args = []string{"--help"}
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		reportError(stderr, jsonMode, fault.Usage("%v", err).WithHint("see `git atlas %s -h`", firstWord(args)))
		return ExitUsage
	}
	env := &Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr, JSON: root.JSON, Yes: root.Yes, Dir: root.Dir, kong: parser, pre: pre}
	if err := kctx.Run(env); err != nil {
		reportError(stderr, env.JSON, err)
		c, _ := exitKind(err)
		return c
	}
	return ExitOK
}

func reportError(w io.Writer, jsonMode bool, err error) {
	code, kind := exitKind(err)
	hint := fault.HintOf(err)
	if jsonMode {
		_ = printJSON(w, map[string]any{"error": map[string]any{"code": code, "kind": kind, "message": err.Error(), "hint": hint}})
		return
	}
	fmt.Fprintf(w, "git-atlas: %v\n", err)
	if hint != "" {
		fmt.Fprintf(w, "hint: %s\n", hint)
	}
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag {
			return true
		}
	}
	return false
}

// preopen is the repository being opened while kong builds its model: `git
// rev-parse` (~2 ms, another process) runs during the ~2 ms kong spends in this one,
// instead of after it. The directory is a guess from the raw arguments; the result is
// used only when the parsed -C names the same directory, so a wrong guess costs a
// wasted rev-parse, never a wrong repository. Opening reads and writes nothing.
type preopen struct {
	abs    string
	cancel context.CancelFunc
	done   chan struct{}
	repo   *git.Repository
	err    error
}

func startOpen(ctx context.Context, args []string) *preopen {
	abs, err := filepath.Abs(dirArg(args))
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &preopen{abs: abs, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.repo, p.err = git.Open(ctx, abs)
	}()
	return p
}

// take returns the repository opened for dir (as -C gives it), or nil and nil when
// the guess was another directory.
func (p *preopen) take(dir string) (*git.Repository, error) {
	if p == nil {
		return nil, nil
	}
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err != nil || abs != p.abs {
		return nil, nil
	}
	<-p.done
	return p.repo, p.err
}

// stop ends the open if nobody took it and waits: nothing outlives Main.
func (p *preopen) stop() {
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// dirArg guesses -C's value from the raw arguments ("." without one).
func dirArg(args []string) string {
	dir := "."
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return dir
		case (a == "-C" || a == "--dir") && i+1 < len(args):
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--dir="):
			dir = strings.TrimPrefix(a, "--dir=")
		case strings.HasPrefix(a, "-C") && len(a) > 2:
			dir = a[2:]
		}
	}
	return dir
}

func firstWord(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// helpPrinter is kong's help with its pointer to `--help` replaced by `-h`: git turns
// `git atlas --help` into `git help atlas`, a man page lookup, so `-h` is the flag that
// reaches this text.
func helpPrinter(options kong.HelpOptions, ctx *kong.Context) error {
	var buf bytes.Buffer
	out := ctx.Stdout
	ctx.Stdout = &buf
	err := kong.DefaultHelpPrinter(options, ctx)
	ctx.Stdout = out
	_, werr := io.WriteString(out, strings.ReplaceAll(buf.String(), ` --help" for more`, ` -h" for more`))
	if err != nil {
		return err
	}
	return werr
}

// HelpCmd is `git atlas help [COMMAND...]`: git turns `git atlas --help` into a man
// page lookup, so `help` and `-h` are how people reach this text.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command to describe."`
}

// Run prints the help of the named command.
func (h *HelpCmd) Run(env *Env) error {
	args := append(append([]string{}, h.Command...), "--help")
	_, err := env.kong.Parse(args)
	return err
}
