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
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/alecthomas/kong"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ops"
)

// Globals are the flags every command takes.
type Globals struct {
	JSON    bool             `help:"Machine output on stdout; errors as a JSON object on stderr." name:"json"`
	Dir     string           `short:"C" help:"Run as if git-atlas was started in <path>." placeholder:"PATH" type:"path" empty:"ok"`
	Yes     bool             `help:"Assume yes: never prompt (headless policy)."`
	Version kong.VersionFlag `help:"Print the version and exit."`
	// Remote makes every ledger write go through a git remote (docs/contract.md §10.1); nil: the
	// flag was not given (atlas.remote decides), "": local only.
	Remote  *string `help:"Write through this git remote: each ledger write is made on the remote's tip and pushed (atomic, leased) before it is reported done; reads fetch the run first. Default: git config atlas.remote; --remote= writes locally only." placeholder:"REMOTE" empty:"ok"`
	NoFetch bool    `name:"no-fetch" help:"With --remote or atlas.remote: reads use this repository's ledger as it is (writes still fetch)."`
}

// CLI is the command tree.
type CLI struct {
	Globals

	Start      StartCmd      `cmd:"" help:"Start a run: pin its baseline and freeze its header."`
	List       ListCmd       `cmd:"" help:"List runs (default: not finished)."`
	Show       ShowCmd       `cmd:"" help:"Show a run's header and state."`
	Log        LogCmd        `cmd:"" help:"Show a run's events, oldest first."`
	Transition TransitionCmd `cmd:"" help:"Move a stage to a new status (docs/contract.md §5.2)."`
	Event      EventCmd      `cmd:"" help:"Append an event to a run."`
	Finish     FinishCmd     `cmd:"" help:"Finish a run: completed, stopped or failed."`
	Heartbeat  HeartbeatCmd  `cmd:"" help:"Renew the driver lease and a stage attempt's heartbeat, in one write."`
	Job        JobCmd        `cmd:"" help:"Graph runs: add, claim, renew, finish and list jobs."`
	Reap       ReapCmd       `cmd:"" help:"Graph runs: expired job leases take the timeout transition."`
	Worktree   WorktreeCmd   `cmd:"" help:"Managed worktrees: add, list, remove."`
	Path       PathCmd       `cmd:"" help:"Print the path of a run's worktree to work in (exit 4 when there is none)."`
	Union      UnionCmd      `cmd:"" help:"(Re)build a run's union of its nodes' branches, in its own worktree."`
	Land       LandCmd       `cmd:"" help:"Move a branch to a graph run's verified union: fast-forward, or --merge; a person's step."`
	Resume     ResumeCmd     `cmd:"" help:"Resume an interrupted run: detect, plan, reset, verify first, report."`
	Recover    RecoverCmd    `cmd:"" help:"Preserve and replay a stage: snapshot its worktree, branch at its baseline."`
	Recovery   RecoveryGroup `cmd:"" help:"Recovery snapshots: list, show, restore."`
	Audit      AuditCmd      `cmd:"" help:"Classify every worktree and atlas branch and ref; exit 10 when something needs attention."`
	Du         DuCmd         `cmd:"" help:"Disk usage per run: managed worktrees (and their unshared bytes) and recovery snapshots (objects no other ref holds)."`
	Gc         GcCmd         `cmd:"" name:"gc" help:"Clean up what finished runs left: a plan by default, done with --apply."`
	Trust      TrustCmd      `cmd:"" help:"Trust the commands a run carries (its verify commands) to run here; --revoke, --list."`
	Push       PushCmd       `cmd:"" help:"Push the ledger (refs/atlas/*, atlas/ branches) to a remote: atomic, leased, fast-forward only."`
	Pull       PullCmd       `cmd:"" help:"Pull the ledger from a remote: fast-forward runs, create missing refs, report diverged runs."`
	Hooks      HooksCmd      `cmd:"" help:"The post-checkout hook: install, uninstall, status."`
	Hook       HookCmd       `cmd:"" hidden:"" help:"Run by the installed hook (internal)."`
	Agent      AgentCmd      `cmd:"" help:"Coding agents: install or remove the session-start hook and the protocol text; the hook itself."`
	Mcp        McpCmd        `cmd:"" name:"mcp" help:"The MCP server on stdio: one tool per operation, for MCP clients (coding agents)."`
	Graph      GraphCmd      `cmd:"" help:"Draw a run: a graph run's DAG with each job's state, or a single run's stages."`
	Web        WebCmd        `cmd:"" help:"Serve a read-only dashboard of the runs on 127.0.0.1 (pages, live updates, the --json documents under /api/)."`
	Undo       UndoCmd       `cmd:"" help:"Go back to the state after an event, as one new event: epoch raised, nothing refunded."`
	Import     ImportCmd     `cmd:"" help:"Import runs from kimi-atlas or AgenTeam (read-only on the source)."`
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
	// Remote and NoFetch are the global --remote and --no-fetch.
	Remote  *string
	NoFetch bool
	// askedRemote is --remote as the asker gave it (a command may set Remote to read
	// locally): the steps printed for them carry it (spelling).
	askedRemote *string

	repo        *ops.Ops // opened, without its remote (Ops adds it)
	pre         *preopen
	stdinReader *bufio.Reader
	ops         *ops.Ops
	kong        *kong.Kong
	sys         System
	// signalEnds: an interrupt is how the command ends (web), not a failure.
	signalEnds bool
}

// Repo opens the repository of -C (or the working directory) once: the operations on
// it, without the remote (Ops adds it).
func (e *Env) Repo() (*ops.Ops, error) {
	if e.repo == nil {
		o, err := e.pre.take(e.Dir)
		if o == nil && err == nil {
			o, err = ops.Open(e.Ctx, e.Dir)
		}
		if err != nil {
			if errors.Is(err, ops.ErrNoDirectory) {
				return nil, &fault.Error{Kind: fault.ErrUsage, Msg: err.Error(), Hint: "-C takes an existing directory"}
			}
			if errors.Is(err, ops.ErrNotRepository) {
				return nil, &fault.Error{Kind: fault.ErrUsage, Msg: err.Error(), Hint: "run git atlas inside a git repository, or pass -C <path>"}
			}
			return nil, err
		}
		if p := e.progress(); p != nil {
			o.Progress = p
			o.TellLockWaits(func(lock string, staleAfter time.Duration) { p.Note(lockWaitNote(lock, staleAfter)) })
		}
		o.Clock = e.now
		o.Spelling = e.spelling()
		e.repo = o
	}
	return e.repo, nil
}

// lockWaitNote tells a person at a terminal why the command stopped: a write waits for
// a ref lock (where progress is shown; headless, the wait is silent like any other work).
func lockWaitNote(lock string, staleAfter time.Duration) string {
	what := "a ref lock"
	if lock != "" {
		what = terminalSafe(lock)
	}
	return fmt.Sprintf("git-atlas: waiting for %s: another git process holds it, or a killed one left it (removed once %s old)", what, staleAfter)
}

// path resolves a file argument the way git resolves one after -C: relative to the
// -C directory, not to the directory the process started in.
func (e *Env) path(p string) string {
	if p == "" || filepath.IsAbs(p) || e.Dir == "" {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// Ops returns the operations on the repository, with the remote of --remote or
// atlas.remote, once.
func (e *Env) Ops() (*ops.Ops, error) {
	if e.ops == nil {
		o, err := e.Repo()
		if err != nil {
			return nil, err
		}
		remote := ""
		if e.Remote != nil {
			remote = *e.Remote
		} else {
			remote = o.ConfiguredRemote(e.Ctx)
		}
		if remote != "" {
			if err := o.UseRemote(e.Ctx, remote, e.NoFetch); err != nil {
				return nil, err
			}
		}
		e.ops = o
	}
	return e.ops, nil
}

// out prints v as JSON with --json, else calls human. Human output is written with
// control characters escaped (terminalSafe), whatever a command forgot to pass through
// ledgerText: nothing from the ledger reaches the terminal as a control sequence.
func (e *Env) out(v any, human func(w io.Writer)) error {
	if e.JSON {
		return printJSON(e.Stdout, v)
	}
	var buf bytes.Buffer
	human(&buf)
	_, err := io.WriteString(e.Stdout, terminalSafe(buf.String()))
	return err
}

// warn prints a warning for people on stderr (also under --json: stderr is not parsed
// for success).
func (e *Env) warn(format string, args ...any) {
	fmt.Fprintln(e.Stderr, "warning: "+ledgerText(fmt.Sprintf(format, args...), 0))
}

type exitPanic int

// Main runs git-atlas with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "--version" {
		// What kong's version flag prints, without building kong's model (issue 34:
		// start-up): the command that runs before any other, to see what is installed.
		if _, err := io.WriteString(stdout, "git-atlas "+version()+"\n"); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	ctx, caught, stop := interruptible()
	defer stop()
	code, _ := execute(ctx, caught, OSSystem(), args, stdin, stdout, stderr)
	return code
}

// execute is one command: Main's body without the process's signal handling (caught
// says which signal, if any, cancelled ctx; nil when the caller handles signals). It
// returns the exit code and, when the command failed, the error object it reported
// (what --json prints on stderr). It touches no process-wide state (no working
// directory, no environment, no signal handlers), so several may run at once: see Call.
func execute(ctx context.Context, caught func() syscall.Signal, sys System, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, errObj map[string]any) {
	jsonMode := hasFlag(args, "--json")
	for i, a := range args {
		if !utf8.ValidString(a) {
			return ExitUsage, reportError(stderr, jsonMode, fault.Usage("argument %d (%q) is not valid UTF-8", i+1, a).WithHint("git-atlas keeps text as JSON, which is UTF-8"))
		}
	}
	pre := startOpen(ctx, args)
	defer pre.stop()

	parser, globals, err := newParser(args, stdout, stderr, false)
	if err != nil {
		fmt.Fprintln(stderr, "git-atlas: internal error:", err)
		return ExitFailure, errorObject(err, ExitFailure, "failure", Spelling)
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
			if code != ExitOK && errObj == nil {
				errObj = errorObject(errors.New("the command line was refused"), code, "usage", Spelling)
			}
		}
	}()
	if len(args) == 0 {
		args = []string{"--help"}
	}
	kctx, err := parser.Parse(args)
	if err != nil && !globals.full {
		// The model of one command parses exactly what the whole tree would; its
		// errors are said with the whole tree (the commands there are, the help).
		if parser, globals, err = newParser(args, stdout, stderr, true); err == nil {
			kctx, err = parser.Parse(args)
		}
	}
	if err == nil {
		err = checkFlagValues(kctx)
	}
	if err != nil {
		return ExitUsage, reportError(stderr, jsonMode, parseFailure(err, parser))
	}
	env := &Env{Ctx: ctx, sys: sys, Stdin: stdin, Stdout: stdout, Stderr: stderr, JSON: globals.JSON, Yes: globals.Yes, Dir: globals.Dir, Remote: globals.Remote, askedRemote: globals.Remote, NoFetch: globals.NoFetch, kong: parser, pre: pre}
	err = kctx.Run(env)
	if env.repo != nil {
		env.repo.Close()
	}
	env.remoteWarnings()
	if caught != nil && !env.signalEnds {
		if sig := caught(); sig != 0 {
			// Whatever the command was doing when it was interrupted, the shell's convention
			// (128 + the signal's number) says so; the error is usually the cancellation.
			code := 128 + int(sig)
			return code, reportErrorAs(stderr, env.JSON, fmt.Errorf("interrupted (%v)", sig), code, "interrupted", env.spelling())
		}
	}
	if err != nil {
		code, kind := exitKind(err)
		return code, reportErrorAs(stderr, env.JSON, err, code, kind, env.spelling())
	}
	return ExitOK, nil
}

// parsed is where the global flags land, and whether the model was the whole tree.
type parsed struct {
	*Globals
	full bool
}

// newParser builds kong's model. Building the whole tree (every command's struct tags
// parsed, every help string interpolated) was a third of a `git atlas` process's
// CPU before any work; a command line that names one command gets a model of the
// global flags and that command alone, which parses exactly as the whole tree does.
// Help, completion, a word that names no command, and (by the caller) every parse
// error get the whole tree, whose output the transcripts pin.
func newParser(args []string, stdout, stderr io.Writer, full bool) (*kong.Kong, parsed, error) {
	opts := []kong.Option{
		kong.Name("git atlas"),
		kong.Description("The durable ledger of AI-agent runs, kept in the repository under refs/atlas/."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitPanic(c)) }),
		kong.Vars{"version": "git-atlas " + version()},
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpPrinter),
	}
	if !full {
		if f, ok := leafCommand(args); ok {
			var root struct{ Globals }
			if f.Type != nil { // nil: --version alone, which needs no command
				cmd := reflect.New(f.Type)
				opts = append(opts, kong.DynamicCommand(commandName(f), f.Tag.Get("help"), "", cmd.Interface(), string(f.Tag)))
			}
			k, err := kong.New(&root, append(opts, noHelp())...)
			return k, parsed{Globals: &root.Globals}, err
		}
	}
	var root CLI
	k, err := kong.New(&root, append(opts, fieldHelpIn())...)
	return k, parsed{Globals: &root.Globals, full: true}, err
}

// fieldHelpIn puts the help of the requests' fields, as the operations word it
// (ops.FieldHelp, the text MCP's input schemas show too, each field it names spelled
// as a flag), into the whole tree's help where a tag names one: ${driver_ttl}. It runs
// before kong's own interpolation, which then has no variable of ours to do: kong
// interpolates every variable it is given into every value it visits, whether the
// value names it or not, one regexp pass each (BenchmarkFullParser).
func fieldHelpIn() kong.Option {
	return kong.PostBuild(func(k *kong.Kong) error {
		known := map[string]bool{}
		for _, key := range ops.FieldHelpKeys() {
			known[key] = true
		}
		expandFieldHelp(k.Model.Node, known, map[string]string{})
		return nil
	})
}

// expandFieldHelp replaces ${key} by the field help of key, for each key known, in
// the help of n and of what kong.Visit would visit under it; texts is the cache of
// the help already spelled. A ${name} that is not a field's is left to kong.
func expandFieldHelp(n *kong.Node, known map[string]bool, texts map[string]string) {
	expand := func(s string) string {
		if !strings.Contains(s, "${") {
			return s
		}
		var b strings.Builder
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				break
			}
			j := strings.IndexByte(s[i+2:], '}')
			if j < 0 {
				break
			}
			key := s[i+2 : i+2+j]
			b.WriteString(s[:i])
			if known[key] {
				text, ok := texts[key]
				if !ok {
					text = ops.FieldHelp(key, flagSpelling)
					texts[key] = text
				}
				b.WriteString(text)
			} else {
				b.WriteString(s[i : i+3+j])
			}
			s = s[i+3+j:]
		}
		b.WriteString(s)
		return b.String()
	}
	n.Help = expand(n.Help)
	if n.Argument != nil {
		n.Argument.Help = expand(n.Argument.Help)
	}
	for _, f := range n.Flags {
		f.Help = expand(f.Help)
	}
	for _, p := range n.Positional {
		p.Help = expand(p.Help)
	}
	for _, c := range n.Children {
		expandFieldHelp(c, known, texts)
	}
}

// noHelp clears a leaf model's help text before kong interpolates it (kong runs its
// variable regexp over every help string): a leaf model never prints help, since help
// and every parse error are said with the whole tree. That interpolation was 40% of
// building the model of `resume` (BenchmarkLeafParser: 480 -> 270 µs).
func noHelp() kong.Option {
	return kong.PostBuild(func(k *kong.Kong) error {
		clearHelp(k.Model.Node)
		return nil
	})
}

// clearHelp clears the help of n and of what kong.Visit would visit under it, walked
// directly, allocating nothing: kong.Visit makes closures for every node and value it
// passes (TestClearHelp).
func clearHelp(n *kong.Node) {
	n.Help, n.Detail = "", ""
	if n.Argument != nil {
		n.Argument.Help = ""
	}
	for _, f := range n.Flags {
		f.Help = ""
	}
	for _, p := range n.Positional {
		p.Help = ""
	}
	for _, c := range n.Children {
		clearHelp(c)
	}
}

// leafCommand is the field of CLI that the first command word of args names, when a
// model of that command alone can parse them: not for help (-h, --help, `help`, no
// command) nor for the commands that walk the whole tree (completion). --version with
// no command gives a field with no type: the global flags alone.
func leafCommand(args []string) (reflect.StructField, bool) {
	word, version := "", false
	for i := 0; i < len(args) && word == ""; i++ {
		switch a := args[i]; {
		case a == "--":
			return reflect.StructField{}, false
		case a == "-C" || a == "--dir":
			i++
		case a == "--version":
			version = true
		case !strings.HasPrefix(a, "-"):
			word = a
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" {
			return reflect.StructField{}, false
		}
	}
	switch word {
	case "":
		return reflect.StructField{}, version
	case "help", "__complete", "completion":
		return reflect.StructField{}, false
	}
	t := reflect.TypeFor[CLI]()
	for f := range t.Fields() {
		if hasTag(f.Tag, "cmd") {
			if commandName(f) == word {
				return f, true
			}
		}
	}
	return reflect.StructField{}, false
}

// hasTag: the struct tag has key (with any value, "" included).
func hasTag(tag reflect.StructTag, key string) bool {
	_, ok := tag.Lookup(key)
	return ok
}

// commandName is kong's name of a command field: its name tag, else the field's name
// in lower case (every command field of CLI is one word).
func commandName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	return strings.ToLower(f.Name)
}

// interruptible is the context commands run under: SIGINT and SIGTERM cancel it, and
// caught reports which one did (0 when none).
func interruptible() (ctx context.Context, caught func() syscall.Signal, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var got atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-sigs:
			if n, ok := s.(syscall.Signal); ok {
				got.Store(int32(n))
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }, func() {
		signal.Stop(sigs)
		cancel()
		<-done
	}
}

// checkFlagValues refuses values kong accepts but git-atlas has no meaning for: a flag
// given on the command line with an empty value (unless its tag says `empty:"ok"`;
// leaving the flag out is how to ask for its default), and a number or duration that
// is zero or negative where the tag says `positive:""`.
func checkFlagValues(kctx *kong.Context) error {
	for _, p := range kctx.Path {
		f := p.Flag
		if f == nil {
			continue
		}
		name := flagName(f)
		switch v := kctx.FlagValue(f).(type) {
		case string:
			if v == "" && !f.Tag.Has("empty") {
				return fault.Usage("%s was given an empty value", name).WithHint("leave %s out for its default", name)
			}
		case []string:
			if len(v) == 0 || slicesContains(v, "") {
				return fault.Usage("%s was given an empty value", name).WithHint("leave %s out for its default", name)
			}
		case int:
			if v <= 0 && f.Tag.Has("positive") {
				return fault.Usage("%s must be a positive number (got %d)", name, v)
			}
		case time.Duration:
			if v <= 0 && f.Tag.Has("positive") {
				return fault.Usage("%s must be a positive duration (got %s)", name, v)
			}
		}
	}
	return nil
}

func slicesContains(list []string, s string) bool {
	return slices.Contains(list, s)
}

// flagName is how a user writes the flag: its short form when it has one (-C).
func flagName(f *kong.Flag) string {
	if f.Short != 0 {
		return "-" + string(f.Short)
	}
	return "--" + f.Name
}

// kongValueError is kong's "a flag's value is missing or looks like a flag" message:
// `--ttl: expected duration value but got "-1s" (short flag); perhaps ...`.
var kongValueError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^--([A-Za-z0-9-]+): expected (\S+) value but got "(.*)" \(([^)]*)\)`)
})

// parseFailure turns kong's parse errors into plain usage errors: an unknown command
// is named and the commands listed; a flag without its value, or with a value that
// looks like a flag (a negative number or duration), says so in words.
func parseFailure(err error, parser *kong.Kong) error {
	if _, ok := errors.AsType[*fault.Error](err); ok {
		return err
	}
	var kctx *kong.Context
	if pe, ok := errors.AsType[*kong.ParseError](err); ok {
		kctx = pe.Context
	}
	node, path := parser.Model.Node, ""
	if kctx != nil {
		if sel := kctx.Selected(); sel != nil {
			node, path = sel, sel.FullPath()
			path = strings.TrimSpace(strings.TrimPrefix(path, parser.Model.Name))
		}
	}
	hint := "see `git atlas -h`"
	if path != "" {
		hint = "see `git atlas " + path + " -h`"
	}
	msg := err.Error()
	if tok, ok := strings.CutPrefix(msg, "unexpected argument "); ok && len(subcommands(node)) > 0 {
		tok, _, _ = strings.Cut(tok, ", did you mean")
		return unknownCommand(strings.TrimSpace(path+" "+tok), node)
	}
	if m := kongValueError().FindStringSubmatch(msg); m != nil {
		name, kind, got, token := "--"+m[1], m[2], m[3], m[4]
		var flag *kong.Flag
		if kctx != nil {
			for _, f := range kctx.Flags() {
				if f.Name == m[1] {
					flag, name = f, flagName(f)
				}
			}
		}
		switch {
		case token == "<EOL>":
			return fault.Usage("%s needs a value: a %s", name, valueWords(kind)).WithHint("%s", hint)
		case flag != nil && flag.Tag.Has("positive") && strings.HasPrefix(got, "-"):
			return fault.Usage("%s must be a positive %s (got %s)", name, valueWords(kind), got).WithHint("%s", hint)
		case strings.HasPrefix(got, "-"):
			what := name + " needs a value"
			if w := valueWords(kind); w != "value" {
				what += " (a " + w + ")"
			}
			return fault.Usage("%s, but %s looks like a flag", what, got).WithHint("write %s=%s if that is the value", name, got)
		}
	}
	return fault.Usage("%s", msg).WithHint("%s", hint)
}

// valueWords says in words what kong's value kinds are.
func valueWords(kind string) string {
	switch kind {
	case "file", "path", "existingdir", "existingfile":
		return "path"
	case "duration":
		return "duration"
	case "int", "uint", "float":
		return "number"
	}
	return "value"
}

// unknownCommand is the error for a command word that names no command under node.
func unknownCommand(name string, node *kong.Node) error {
	return fault.Usage("unknown command %q", name).WithHint("commands: %s", strings.Join(subcommands(node), ", "))
}

// subcommands lists the visible commands under node.
func subcommands(node *kong.Node) []string {
	var names []string
	for _, c := range node.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return names
}

// reportError prints err as the command's error and returns the error object (the
// --json form, printed or not).
func reportError(w io.Writer, jsonMode bool, err error) map[string]any {
	code, kind := exitKind(err)
	return reportErrorAs(w, jsonMode, err, code, kind, Spelling)
}

// reportErrorAs is reportError with the error's code and kind given, its steps
// spelled by sp.
func reportErrorAs(w io.Writer, jsonMode bool, err error, code int, kind string, sp fault.Spelling) map[string]any {
	e := errorObject(err, code, kind, sp)
	if jsonMode {
		_ = printJSON(w, map[string]any{"error": e})
		return e
	}
	// Cut: a message quoting a 100 KB argument (or ledger value) is not read.
	msg, hint := fault.SpelledBy(err, sp)
	fmt.Fprintf(w, "git-atlas: %s\n", text.Escape(msg, errMax, true))
	if hint != "" {
		fmt.Fprintf(w, "hint: %s\n", text.Escape(hint, errMax, true))
	}
	return e
}

// errorObject is the JSON error of docs/contract.md §4.7: {"code","kind","message","hint"}, and
// valid_targets or driver when the error names them.
func errorObject(err error, code int, kind string, sp fault.Spelling) map[string]any {
	msg, hint := fault.SpelledBy(err, sp)
	e := map[string]any{"code": code, "kind": kind, "message": msg, "hint": hint}
	if t := fault.TargetsOf(err); t != nil {
		e["valid_targets"] = t
	}
	for k, v := range fault.FieldsOf(err) { // e.g. a refused driver write's driver
		if _, taken := e[k]; !taken {
			e[k] = v
		}
	}
	return e
}

// flagSpelling is a request's field as the command line writes it: verify_timeout is
// --verify-timeout (docs/contract.md §4.6).
func flagSpelling(field string) string { return "--" + strings.ReplaceAll(field, "_", "-") }

// errMax is the most characters an error message or hint shows people (JSON keeps it
// whole).
const errMax = 2000

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
	repo   *ops.Ops
	err    error
}

func startOpen(ctx context.Context, args []string) *preopen {
	if !needsRepo(args) {
		return nil
	}
	abs, err := filepath.Abs(dirArg(args))
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &preopen{abs: abs, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.repo, p.err = ops.Open(ctx, abs)
	}()
	return p
}

// take returns the repository opened for dir (as -C gives it), or nil and nil when
// the guess was another directory.
func (p *preopen) take(dir string) (*ops.Ops, error) {
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

// needsRepo guesses from the raw arguments whether the command will open the
// repository: not for --version, help (-h, --help, `help`, no command at all) or the
// commands that never read one. A wrong guess costs a rev-parse either way (wasted, or
// run after kong instead of beside it), never a wrong answer. `git-atlas --version`
// is a process start and nothing else: forking git for it tripled its time.
func needsRepo(args []string) bool {
	command := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			i = len(args)
		case a == "--version" || a == "-h" || a == "--help":
			return false
		case a == "-C" || a == "--dir":
			i++
		case command == "" && !strings.HasPrefix(a, "-"):
			command = a
		}
	}
	switch command {
	case "", "help", "completion", "demo":
		return false
	}
	return true
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

// Run prints the help of the named command; an unknown one is a usage error that
// lists the commands there are.
func (h *HelpCmd) Run(env *Env) error {
	node := env.kong.Model.Node
	for i, word := range h.Command {
		var next *kong.Node
		for _, c := range node.Children {
			if c.Type == kong.CommandNode && !c.Hidden && (c.Name == word || slicesContains(c.Aliases, word)) {
				next = c
			}
		}
		if next == nil {
			return unknownCommand(strings.Join(h.Command[:i+1], " "), node)
		}
		node = next
	}
	args := append(append([]string{}, h.Command...), "--help")
	_, err := env.kong.Parse(args)
	return err
}
