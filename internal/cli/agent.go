package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ops"
)

// AgentCmd is `git atlas agent` (docs/contract.md §12).
type AgentCmd struct {
	Install   AgentInstallCmd   `cmd:"" help:"Write an agent's session-start hook and the protocol text where it reads instructions, merged into its configuration."`
	Uninstall AgentUninstallCmd `cmd:"" help:"Remove exactly what install added: edited files byte for byte as before, created files removed."`
	Status    AgentStatusCmd    `cmd:"" help:"Say, per agent and scope, what is installed."`
	Hook      AgentHookCmd      `cmd:"" help:"What the installed hook runs: reads the agent's event on stdin, prints resume --brief in that agent's shape; always exits 0."`
	Guard     AgentGuardCmd     `cmd:"" help:"What the installed guard runs (install --guard): denies a file edit into your checkout while the session drives a run with a worktree; always exits 0."`
	Protocol  AgentProtocolCmd  `cmd:"" help:"Print the protocol text the installers write: how an agent drives a run."`
}

// Help is the group's long help.
func (c *AgentCmd) Help() string {
	return `Coding agents die and are compacted; the ledger does not. install gives an agent
(claude: Claude Code, codex: Codex, kimi: Kimi Code) a session-start hook, run on
startup, resume, clear and after compaction, that tells the new session which run it
was driving (git atlas resume --brief for its session), and the protocol text
(git atlas agent protocol) where that agent reads instructions:

  claude  .claude/settings.json (SessionStart hook), .claude/skills/git-atlas/SKILL.md
  codex   .codex/hooks.json (SessionStart and PostCompact hooks), a marked section of
          AGENTS.md (~/.codex/AGENTS.md with --scope user)
  kimi    --scope user: ~/.kimi-code/config.toml ([[hooks]] SessionStart and
          PostCompact), ~/.kimi/skills/git-atlas/SKILL.md; --scope project: a marked
          section of .kimi-code/AGENTS.md (Kimi Code reads hooks only from the user's
          config)

--scope project (the default) writes under the repository's working tree root: the one
command that writes there, and only these files. --scope user writes under $HOME.
With --mcp, install also registers the MCP server (git atlas mcp) where that agent
reads MCP servers; uninstall removes it with the rest:

  claude  .mcp.json (--scope user: ~/.claude.json), "mcpServers"
  codex   .codex/config.toml (--scope user: ~/.codex/config.toml), [mcp_servers.git-atlas]
  kimi    .kimi-code/mcp.json (--scope user: ~/.kimi-code/mcp.json), "mcpServers"

With --guard (claude and codex), install also adds a PreToolUse hook running git atlas
agent guard AGENT: while the session drives a run whose current stage or running job
has a worktree, a file edit into your checkout (Claude Code: Edit, Write, MultiEdit,
NotebookEdit; Codex: apply_patch) is denied, naming the worktree to use. Shell
commands are not guarded. Kimi Code is refused: its hook documentation names no
file-writing tools to match.`
}

// agentScope is the flags install, uninstall and status share.
type agentScope struct {
	Scope  string `enum:"project,user" default:"project" help:"project: the repository's working tree; user: your home directory."`
	DryRun bool   `name:"dry-run" help:"Print the change; write nothing."`
}

// root is the directory a scope writes under.
func (env *Env) agentRoot(scope string) (string, error) {
	if scope == ops.AgentScopeUser {
		home := env.getenv("HOME")
		if home == "" {
			return "", fault.Usage("HOME is not set: --scope user needs a home directory")
		}
		return home, nil
	}
	repo, err := env.Repo()
	if err != nil {
		return "", err
	}
	if repo.TopLevel() == "" {
		return "", fault.Usage("a bare repository has no working tree for --scope project").WithHint("pass --scope user")
	}
	return repo.TopLevel(), nil
}

// AgentInstallCmd is `git atlas agent install AGENT`.
type AgentInstallCmd struct {
	Agent string `arg:"" enum:"claude,codex,kimi" help:"claude, codex or kimi."`
	agentScope
	MCP   bool `name:"mcp" help:"Also register the MCP server (git atlas mcp) in the agent's MCP configuration."`
	Guard bool `name:"guard" help:"Also add the guard (claude, codex): a PreToolUse hook that denies a file edit into your checkout while the session drives a run whose stage or job has a worktree. Shell commands are not guarded."`
}

type agentChangeView struct {
	Path   string `json:"path"`
	What   string `json:"what"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

type agentChangesView struct {
	Agent   string            `json:"agent"`
	Scope   string            `json:"scope"`
	DryRun  bool              `json:"dry_run"`
	Changes []agentChangeView `json:"changes"`
	Notes   []string          `json:"notes"`
}

// Run installs.
func (c *AgentInstallCmd) Run(env *Env) error {
	root, err := env.agentRoot(c.Scope)
	if err != nil {
		return err
	}
	// Computed before anything is written: a malformed file stops every change.
	changes, err := ops.AgentInstall(ops.AgentFilesRequest{Agent: c.Agent, Scope: c.Scope, Root: root, Guard: c.Guard, MCP: c.MCP})
	if err != nil {
		return err
	}
	notes := installNotes(env, c.Agent, c.Scope, root)
	if c.Guard {
		notes = append(notes, "the guard judges file-editing tools only (Claude Code: Edit, Write, MultiEdit, NotebookEdit; Codex: apply_patch): shell commands are not guarded")
		if c.Agent == "codex" {
			notes = append(notes, "trust `git atlas agent guard codex` in /hooks too: Codex skips an untrusted hook silently")
		}
	}
	if c.MCP {
		notes = append(notes, mcpNotes(c.Agent, c.Scope)...)
	}
	return env.applyAgent(c.Agent, c.Scope, root, c.DryRun, changes, notes)
}

func installNotes(env *Env, name, scope, root string) []string {
	var notes []string
	switch name {
	case "codex":
		notes = append(notes, "Codex runs a hook only after you trust it: open /hooks in Codex and trust `git atlas agent hook codex` (rewriting the hook asks again)")
		if scope == ops.AgentScopeProject {
			if ok, _ := ops.CodexTrusted(env.getenv("HOME"), root); !ok {
				notes = append(notes, fmt.Sprintf("Codex loads .codex/hooks.json only in a trusted project: trust %s when Codex asks, or run `codex exec --trust` there once", root))
			}
		}
	case "kimi":
		if scope == ops.AgentScopeProject {
			notes = append(notes, "Kimi Code reads hooks only from ~/.kimi-code/config.toml: `git atlas agent install kimi --scope user` adds the session-start hook")
		}
	}
	return notes
}

// mcpNotes say what the agent needs before it starts a registered MCP server.
func mcpNotes(name, scope string) []string {
	switch {
	case name == "claude" && scope == ops.AgentScopeProject:
		return []string{"Claude Code asks once before it starts a server from the project's .mcp.json: approve git-atlas (or see /mcp)"}
	case name == "codex" && scope == ops.AgentScopeProject:
		return []string{"Codex reads the project's .codex/config.toml only in a trusted project"}
	}
	return nil
}

// AgentUninstallCmd is `git atlas agent uninstall AGENT`.
type AgentUninstallCmd struct {
	Agent string `arg:"" enum:"claude,codex,kimi" help:"claude, codex or kimi."`
	agentScope
}

// Run uninstalls.
func (c *AgentUninstallCmd) Run(env *Env) error {
	root, err := env.agentRoot(c.Scope)
	if err != nil {
		return err
	}
	changes, err := ops.AgentUninstall(ops.AgentFilesRequest{Agent: c.Agent, Scope: c.Scope, Root: root})
	if err != nil {
		return err
	}
	return env.applyAgent(c.Agent, c.Scope, root, c.DryRun, changes, nil)
}

// applyAgent writes the changes (unless dryRun) and reports them; a dry run prints
// each file's change as removed (-) and added (+) lines.
func (env *Env) applyAgent(name, scope, root string, dryRun bool, changes []ops.AgentChange, notes []string) error {
	if !dryRun {
		if err := ops.AgentApply(name, changes); err != nil {
			return err
		}
	}
	view := agentChangesView{Agent: name, Scope: scope, DryRun: dryRun, Changes: []agentChangeView{}, Notes: notes}
	if view.Notes == nil {
		view.Notes = []string{}
	}
	for _, ch := range changes {
		view.Changes = append(view.Changes, agentChangeView{Path: ch.Path, What: ch.What, Action: ch.Action, Reason: ch.Reason})
	}
	return env.out(view, func(w io.Writer) {
		done := map[string]string{"create": "created", "update": "updated", "remove": "removed", "unchanged": "unchanged", "kept": "kept"}
		changed := false
		for _, ch := range changes {
			verb := done[ch.Action]
			if dryRun && ch.Action != "unchanged" && ch.Action != "kept" {
				verb = "would " + ch.Action
			}
			line := fmt.Sprintf("%s %s (%s)", verb, ch.Path, ch.What)
			if ch.Reason != "" {
				line += ": " + ch.Reason
			}
			fmt.Fprintln(w, line)
			if ch.Action != "unchanged" && ch.Action != "kept" {
				changed = true
				if dryRun {
					printDiff(w, ch.Old, ch.New)
				}
			}
		}
		if !changed {
			fmt.Fprintf(w, "nothing to change for %s (%s scope)\n", name, scope)
		}
		for _, n := range notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	})
}

// printDiff prints the lines that differ between old and new, between their common
// first and last lines: "-" removed, "+" added.
func printDiff(w io.Writer, old, new []byte) {
	a, b := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre > 0 || suf > 0 {
		fmt.Fprintf(w, "  @@ line %d @@\n", pre+1)
	}
	for _, l := range a[pre : len(a)-suf] {
		fmt.Fprintf(w, "  -%s\n", l)
	}
	for _, l := range b[pre : len(b)-suf] {
		fmt.Fprintf(w, "  +%s\n", l)
	}
}

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(data), "\n")
	return strings.Split(s, "\n")
}

// AgentStatusCmd is `git atlas agent status`.
type AgentStatusCmd struct {
	Agent []string `arg:"" optional:"" enum:"claude,codex,kimi" help:"Only these agents (default: all)."`
	Scope string   `enum:",project,user" default:"" help:"Only this scope (default: both; project only inside a repository)."`
}

// Run reports what is installed.
func (c *AgentStatusCmd) Run(env *Env) error {
	names := c.Agent
	if len(names) == 0 {
		names = ops.AgentNames()
	}
	scopes := []string{ops.AgentScopeProject, ops.AgentScopeUser}
	if c.Scope != "" {
		scopes = []string{c.Scope}
	}
	var all []ops.AgentStatus
	for _, scope := range scopes {
		root, err := env.agentRoot(scope)
		if err != nil {
			if c.Scope != "" {
				return err
			}
			continue // outside a repository: the user scope alone
		}
		for _, name := range names {
			st, err := ops.AgentInspect(name, scope, root)
			if err != nil {
				return err
			}
			st.Notes = statusNotes(env, name, scope, root, st)
			all = append(all, st)
		}
	}
	return env.out(map[string]any{"agents": all}, func(w io.Writer) {
		for _, st := range all {
			state := "not installed"
			if st.Installed {
				state = "installed"
			} else {
				for _, f := range st.Files {
					if f.State != "absent" {
						state = "partly installed"
					}
				}
			}
			fmt.Fprintf(w, "%s (%s scope): %s\n", st.Agent, st.Scope, state)
			for _, f := range st.Files {
				line := fmt.Sprintf("  %-12s %-10s %s", f.What, f.State, f.Path)
				if f.Error != "" {
					line += " (" + f.Error + ")"
				}
				fmt.Fprintln(w, line)
			}
			for _, n := range st.Notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
		}
	})
}

func statusNotes(env *Env, name, scope, root string, st ops.AgentStatus) []string {
	hooked := false
	for _, f := range st.Files {
		if f.What == "hook" && f.State != "absent" {
			hooked = true
		}
	}
	switch {
	case name == "codex" && hooked:
		notes := []string{"Codex runs the hook only once you trust it in /hooks (not visible from here)"}
		if scope == ops.AgentScopeProject {
			if ok, err := ops.CodexTrusted(env.getenv("HOME"), root); err != nil {
				notes = append(notes, "cannot read ~/.codex/config.toml to see whether the project is trusted: "+err.Error())
			} else if !ok {
				notes = append(notes, "the project is not trusted in ~/.codex/config.toml: Codex skips .codex/hooks.json until it is (`codex exec --trust`)")
			} else {
				notes = append(notes, "the project is trusted in ~/.codex/config.toml")
			}
		}
		return notes
	case name == "kimi" && scope == ops.AgentScopeProject:
		return []string{"Kimi Code reads hooks only from ~/.kimi-code/config.toml (--scope user)"}
	}
	return nil
}

// AgentHookCmd is `git atlas agent hook AGENT`, what the installed hooks run.
type AgentHookCmd struct {
	Agent string `arg:"" help:"claude, codex or kimi: the output shape."`
}

// Help is the command's long help.
func (c *AgentHookCmd) Help() string {
	return `Reads the agent's hook event (JSON on stdin: session_id, source, cwd,
hook_event_name), finds the repository of its cwd, and prints resume --brief for that
session (the session's own runs first) in the shape the agent reads: Claude Code and
Codex {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
...}} (Codex PostCompact: {"systemMessage": ...}), Kimi Code plain text. With nothing to
resume, or on any problem (input that is not JSON, no repository, an unknown agent),
it prints the empty valid output, says why in one line on stderr, and exits 0: a
session start must never break because of git-atlas.`
}

// Run prints the hook's output and always succeeds.
func (c *AgentHookCmd) Run(env *Env) (err error) {
	var ev ops.AgentEvent
	emit := func(context string) { _, _ = env.Stdout.Write(ops.AgentHookOutput(c.Agent, ev, context)) }
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(env.Stderr, "git-atlas: agent hook: internal error: %v\n", p)
			emit("")
			err = nil
		}
	}()
	known := false
	for _, a := range ops.AgentNames() {
		known = known || a == c.Agent
	}
	if !known {
		fmt.Fprintf(env.Stderr, "git-atlas: agent hook: unknown agent %q (known: %s)\n", c.Agent, strings.Join(ops.AgentNames(), ", "))
		return nil
	}
	if env.isTerminal(env.Stdin) { // run by hand: no event will come
		fmt.Fprintln(env.Stderr, "git-atlas: agent hook: reads the agent's event on stdin; nothing to report")
		emit("")
		return nil
	}
	data, rerr := io.ReadAll(io.LimitReader(env.Stdin, 1<<20))
	ev, perr := ops.ParseAgentEvent(data)
	if rerr != nil || perr != nil {
		fmt.Fprintln(env.Stderr, "git-atlas: agent hook: the input is not a JSON event; nothing to report")
		emit("")
		return nil
	}
	dir := env.Dir
	if ev.Cwd != "" {
		dir = ev.Cwd
	}
	ctx, cancel := context.WithTimeout(env.Ctx, 5*time.Second)
	defer cancel()
	var buf bytes.Buffer
	// The hook reads this clone's ledger as it is: a session start never waits on the
	// network (atlas.remote is for commands that write or that ask to fetch).
	local := ""
	sys := env.sys
	sys.Via = ops.ViaHook // nothing a hook runs takes a person's step
	sub := &Env{Ctx: ctx, sys: sys, Stdin: strings.NewReader(""), Stdout: &buf, Stderr: io.Discard, Dir: dir, pre: env.pre, Remote: &local}
	if _, err := sub.Repo(); err != nil {
		where := dir
		if where == "" {
			where = "the working directory"
		}
		fmt.Fprintf(env.Stderr, "git-atlas: agent hook: %s is not in a git repository; nothing to report\n", where)
		emit("")
		return nil
	}
	// The same code as `resume --brief --session S`, in this process.
	(&ResumeCmd{Brief: true, Session: ev.SessionID}).brief(sub)
	if buf.Len() > 0 && ev.SessionID != "" {
		// The agent may not know its own session id; the ledger keys runs by it.
		fmt.Fprintf(&buf, "git-atlas: your session id is %s: pass --holder NAME and --session %s as `git atlas agent protocol` says\n", ev.SessionID, ev.SessionID)
	}
	emit(buf.String())
	return nil
}

// AgentGuardCmd is `git atlas agent guard AGENT`, what the installed guard runs.
type AgentGuardCmd struct {
	Agent string `arg:"" help:"claude or codex: the agent whose PreToolUse event comes on stdin."`
}

// Help is the command's long help.
func (c *AgentGuardCmd) Help() string {
	return `Reads the agent's PreToolUse event (JSON on stdin: session_id, cwd, tool_name,
tool_input). For Claude Code's Edit, Write, MultiEdit and NotebookEdit, and Codex's
apply_patch (the files its patch adds, updates, deletes or moves to), whose path lies in your checkout
(the main worktree, or a linked worktree git-atlas did not make) while that session
drives a run whose current stage or running job has a worktree, it prints the
deny decision both agents read {"hookSpecificOutput": {"hookEventName": "PreToolUse",
"permissionDecision": "deny", "permissionDecisionReason": ...}} naming the run's
worktree to use instead. A path is judged where a write to it lands (through symbolic
links, one whose target does not exist yet included), by every repository that holds
it, wherever the session's cwd is (the cwd only makes a relative path absolute).
Anything else (another tool, another path, no such run, input that is not JSON, no
repository) prints nothing. It always exits 0. Shell commands are not guarded.`
}

// Run judges one tool call; it always succeeds, and prints only a denial.
func (c *AgentGuardCmd) Run(env *Env) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(env.Stderr, "git-atlas: agent guard: internal error: %v\n", p)
			err = nil
		}
	}()
	if err := ops.AgentGuardSupported(c.Agent); err != nil {
		msg, _ := fault.SpelledBy(err, Spelling)
		fmt.Fprintf(env.Stderr, "git-atlas: agent guard: %s\n", msg)
		return nil
	}
	if env.isTerminal(env.Stdin) { // run by hand: no event will come
		fmt.Fprintln(env.Stderr, "git-atlas: agent guard: reads the agent's PreToolUse event on stdin; nothing to judge")
		return nil
	}
	data, rerr := io.ReadAll(io.LimitReader(env.Stdin, 1<<20))
	call, ok, perr := ops.ParseAgentToolCall(c.Agent, data)
	if rerr != nil || perr != nil {
		fmt.Fprintln(env.Stderr, "git-atlas: agent guard: the input is not a JSON event; nothing to judge")
		return nil
	}
	if !ok {
		return nil // not a file write the guard judges
	}
	ctx, cancel := context.WithTimeout(env.Ctx, 5*time.Second)
	defer cancel()
	// Each path is judged by the repositories that hold it, never by the session's
	// cwd (which only made a relative path absolute): the agent's shell may be anywhere.
	// This clone's ledger as it is: a tool call never waits on the network.
	open := func(dir string) (*ops.Ops, error) {
		o, err := env.pre.take(dir)
		if o == nil && err == nil {
			o, err = ops.Open(ctx, dir)
		}
		if err != nil {
			return nil, err
		}
		o.Clock, o.Spelling = env.now, Spelling
		return o, nil
	}
	res, err := ops.GuardCall(ctx, ops.GuardRequest{Session: call.SessionID, Paths: call.Paths}, open)
	if err != nil {
		fmt.Fprintf(env.Stderr, "git-atlas: agent guard: %v; allowed\n", err)
		return nil
	}
	if !res.Deny {
		return nil
	}
	path := text.Ledger(res.Path, 0)
	if res.Target != "" {
		path += " (a link to " + text.Ledger(res.Target, 0) + ")"
	}
	workIn := "its managed worktrees"
	if len(res.WorkIn) > 0 {
		workIn = text.Ledger(strings.Join(res.WorkIn, ", "), 0)
	}
	why := fmt.Sprintf("git-atlas: this session drives run %s, whose work goes on in %s; %s is in your checkout %s, which git-atlas never lets a run change.",
		text.Ledger(res.RunID, text.CellMax), workIn, path, text.Ledger(res.Checkout, 0))
	if res.InWorktree != "" {
		why += fmt.Sprintf(" Make this change in the run's worktree instead: %s", text.Ledger(res.InWorktree, 0))
	}
	_, _ = env.Stdout.Write(ops.AgentGuardDeny(why))
	return nil
}

// AgentProtocolCmd is `git atlas agent protocol`.
type AgentProtocolCmd struct{}

// Run prints the protocol text.
func (c *AgentProtocolCmd) Run(env *Env) error {
	protocol := ops.AgentProtocol()
	return env.out(map[string]any{"protocol": protocol, "words": len(strings.Fields(protocol))}, func(w io.Writer) {
		fmt.Fprint(w, protocol)
	})
}
