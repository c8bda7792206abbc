// Package agent plugs git-atlas into coding agents (Claude Code, Codex, Kimi Code):
// it writes and removes each agent's session-start hook and the protocol text where
// that agent reads instructions, merging into existing configuration byte for byte,
// and it shapes the hook's output the way each agent reads it (docs/contract.md §12).
package agent

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/git"
)

// Protocol is the text every installer writes: how an agent drives a run.
//
//go:embed protocol.md
var Protocol string

// Agents are the agents git-atlas knows, in the order status lists them.
var Agents = []string{"claude", "codex", "kimi"}

// Scopes: "project" writes under the repository's working tree root, "user" under
// the home directory.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// HookCommand is what an installed hook runs.
func HookCommand(agent string) string { return "git atlas agent hook " + agent }

// hookTimeout (seconds) bounds the hook in the agent; the hook itself takes
// milliseconds.
const hookTimeout = 10

// skillMarker is in every SKILL.md git-atlas writes: a file with it is git-atlas's.
const skillMarker = "<!-- written by `git atlas agent install"

// plan lists what install writes for agent at scope, relative to the scope's root.
// Which document each follows:
//   - Claude Code: hooks in .claude/settings.json (project) or ~/.claude/settings.json,
//     SessionStart matcher "startup|resume|clear|compact"
//     (code.claude.com/docs/en/hooks); the protocol as the skill
//     .claude/skills/git-atlas/SKILL.md (code.claude.com/docs/en/skills).
//   - Codex: .codex/hooks.json or ~/.codex/hooks.json, SessionStart with matcher
//     "startup|resume|clear" and PostCompact, which has no matcher: compaction is its
//     own event (developers.openai.com/codex/hooks; openai/codex
//     codex-rs/hooks/schema/generated); the protocol as a marked section of AGENTS.md
//     (the repository root's, or ~/.codex/AGENTS.md), the file Codex always reads.
//   - Kimi Code: hooks only in ~/.kimi-code/config.toml as [[hooks]] tables, events
//     SessionStart and PostCompact (moonshotai.github.io/kimi-code/en/customization/hooks);
//     so a project install writes no hook. The protocol as a marked section of
//     .kimi-code/AGENTS.md in the project (read with the root AGENTS.md, per
//     null0xxx/kimi-atlas references/kimi-runtime.md), or as the user skill
//     ~/.kimi/skills/git-atlas/SKILL.md (moonshotai.github.io/kimi-code/en/customization/skills).
func plan(agent, scope string) ([]edit, error) {
	cmd := HookCommand(agent)
	switch agent {
	case "claude":
		return []edit{
			&jsonHooks{path: ".claude/settings.json", command: cmd, timeout: hookTimeout,
				events: []hookEvent{{name: "SessionStart", matcher: "startup|resume|clear|compact"}}},
			&wholeFile{path: ".claude/skills/git-atlas/SKILL.md", content: skill(agent, ""), marker: skillMarker},
		}, nil
	case "codex":
		md := "AGENTS.md"
		if scope == ScopeUser {
			md = ".codex/AGENTS.md"
		}
		return []edit{
			&jsonHooks{path: ".codex/hooks.json", command: cmd, timeout: hookTimeout,
				events: []hookEvent{{name: "SessionStart", matcher: "startup|resume|clear"}, {name: "PostCompact"}}},
			section(md, agent),
		}, nil
	case "kimi":
		if scope == ScopeProject {
			return []edit{section(".kimi-code/AGENTS.md", agent)}, nil
		}
		return []edit{
			&block{path: ".kimi-code/config.toml", kind: "hook",
				begin: "# >>> git-atlas: written by `git atlas agent install kimi`; `git atlas agent uninstall kimi` removes it",
				end:   "# <<< git-atlas", validate: validTOML,
				body: fmt.Sprintf("[[hooks]]\nevent = \"SessionStart\"\ncommand = %q\ntimeout = %d\n\n[[hooks]]\nevent = \"PostCompact\"\ncommand = %q\ntimeout = %d\n",
					cmd, hookTimeout, cmd, hookTimeout)},
			&wholeFile{path: ".kimi/skills/git-atlas/SKILL.md", content: skill(agent, "Your session id is ${KIMI_SESSION_ID}: pass it as `--session`.\n\n"), marker: skillMarker},
		}, nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown agent %q (known: %s)", agent, strings.Join(Agents, ", "))}
}

// NoProjectHook reports agents whose hooks can only be installed for the user.
func NoProjectHook(agent string) bool { return agent == "kimi" }

func skill(agent, extra string) string {
	return "---\nname: git-atlas\ndescription: Use when driving, resuming or recovering a git-atlas run (git atlas start, transition, job, resume, recover), or when a session starts with a git-atlas note about an interrupted run.\n---\n\n" +
		skillMarker + " " + agent + "`; `git atlas agent uninstall " + agent + "` removes it -->\n\n" + extra + Protocol
}

func section(path, agent string) edit {
	return &block{path: path, kind: "instructions",
		begin: "<!-- git-atlas:begin (written by `git atlas agent install " + agent + "`; `git atlas agent uninstall " + agent + "` removes it) -->",
		end:   "<!-- git-atlas:end -->",
		body:  Protocol}
}

// kept is a file uninstall leaves as it is, and why.
type kept struct{ why string }

func (k *kept) Error() string { return k.why }

// UsageError is a bad agent or scope.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// FileError is a configuration file git-atlas refuses to change: malformed (Syntax),
// or not its own to overwrite or remove (Foreign).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string {
	if se, ok := errors.AsType[*SyntaxError](e.Err); ok {
		return fmt.Sprintf("%s:%d: %s", e.Path, se.Line, se.Msg)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Change is what install or uninstall does, or would do, to one file.
type Change struct {
	Path   string `json:"path"`
	What   string `json:"what"`             // "hook" or "instructions"
	Action string `json:"action"`           // "create", "update", "remove", "unchanged", "kept"
	Reason string `json:"reason,omitempty"` // why a file was kept
	Old    []byte `json:"-"`
	New    []byte `json:"-"`
	mode   fs.FileMode
	root   string
	// confined: Path was resolved inside root (the project scope) and must still be
	// there, with no symbolic link at its place, when it is written.
	confined bool
}

// Install computes what installing agent at scope under root (the working tree's
// root, or the home directory) changes; nothing is written until Apply. A malformed
// file or one that is not git-atlas's to overwrite fails the whole install.
func Install(agent, scope, root string) ([]Change, error) {
	return compute(agent, scope, root, false, func(e edit, old []byte, exists bool) ([]byte, bool, error) {
		data, err := e.install(old, exists)
		return data, false, err
	})
}

// InstallGuard is Install with the guard (install --guard, docs/contract.md §15): a
// PreToolUse hook running `git atlas agent guard AGENT` beside the session-start hook.
// An agent whose hooks cannot guard file edits is refused (GuardSupported).
func InstallGuard(agent, scope, root string) ([]Change, error) {
	g, err := guardEdit(agent)
	if err != nil {
		return nil, err
	}
	if scope != ScopeProject && scope != ScopeUser {
		return nil, &UsageError{Msg: fmt.Sprintf("unknown scope %q (project or user)", scope)}
	}
	edits, err := plan(agent, scope)
	if err != nil {
		return nil, err
	}
	return computeEdits(append(edits, g), scope, root, func(e edit, old []byte, exists bool) ([]byte, bool, error) {
		data, err := e.install(old, exists)
		return data, false, err
	})
}

// Uninstall computes what removing agent's files at scope under root changes: each
// file back to what it was before install, a file install created removed. The MCP
// server registration (install --mcp) goes too, when it is there.
func Uninstall(agent, scope, root string) ([]Change, error) {
	return compute(agent, scope, root, true, func(e edit, old []byte, exists bool) ([]byte, bool, error) {
		if !exists {
			return nil, false, nil
		}
		data, remove, err := e.uninstall(old)
		if fe, ok := errors.AsType[*ForeignError](err); ok {
			return old, false, &kept{fe.Msg}
		}
		return data, remove, err
	})
}

func compute(agent, scope, root string, uninstalling bool, do func(edit, []byte, bool) ([]byte, bool, error)) ([]Change, error) {
	if scope != ScopeProject && scope != ScopeUser {
		return nil, &UsageError{Msg: fmt.Sprintf("unknown scope %q (project or user)", scope)}
	}
	edits, err := plan(agent, scope)
	if err != nil {
		return nil, err
	}
	if uninstalling {
		m, err := mcpEdit(agent, scope)
		if err != nil {
			return nil, err
		}
		edits = append(edits, m)
		if g, err := guardEdit(agent); err == nil { // the guard goes with the rest
			edits = append(edits, g)
		}
		changes, err := computeEdits(edits, scope, root, do)
		// An MCP file with no registration in it (the agent's own, or install ran
		// without --mcp) is not part of what uninstall reports.
		return slices.DeleteFunc(changes, func(c Change) bool { return c.What == "mcp" && c.Action == "unchanged" }), err
	}
	return computeEdits(edits, scope, root, do)
}

// locate is where the file rel of scope lives under root, and the root that a
// removal's emptied directories are removed up to. The project scope's files are
// resolved (symbolic links included) and must lie inside the working tree, and the
// file itself must not be a link that is left dangling: the tree is the repository's
// content, which anyone with push access writes, so a link such as AGENTS.md ->
// ../outside/notes.md or .claude -> ../outside is refused, never followed (docs:
// "Shared data is hostile"). The user scope's files are the person's own: a link
// there (dotfiles kept in a repository) is followed, and the link kept.
func locate(scope, root, rel string) (path, base string, err error) {
	if scope != ScopeProject {
		return filepath.Join(root, filepath.FromSlash(rel)), root, nil
	}
	r, err := confine.New(root)
	if err != nil {
		return "", "", err
	}
	if path, err = r.Join(rel); err != nil {
		return "", "", err
	}
	if err := confine.NoSymlink(path); err != nil {
		return "", "", err
	}
	return path, r.Dir(), nil
}

func computeEdits(edits []edit, scope, root string, do func(edit, []byte, bool) ([]byte, bool, error)) ([]Change, error) {
	var out []Change
	// Two edits of one file (the session-start hook and the guard) make one change:
	// the second starts from the first's result.
	type pending struct {
		at     int // its change in out, -1 when none yet
		cur    []byte
		exists bool // cur is there (on disk, or from the edit before)
	}
	seen := map[string]*pending{}
	for _, e := range edits {
		path, base, err := locate(scope, root, e.file())
		if err != nil {
			return nil, &FileError{Path: filepath.Join(root, filepath.FromSlash(e.file())), Err: err}
		}
		old, exists, mode, err := read(path)
		if err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		p := seen[path]
		if p == nil {
			p = &pending{at: -1, cur: old, exists: exists}
			seen[path] = p
		}
		data, remove, err := do(e, p.cur, p.exists)
		c := Change{Path: path, What: e.what(), Old: old, New: data, mode: mode, root: base, confined: scope == ScopeProject}
		if p.at >= 0 {
			c.What = out[p.at].What
		}
		if k, ok := errors.AsType[*kept](err); ok {
			c.Action, c.Reason = "kept", k.why
			out = append(out, c)
			continue
		}
		if err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		switch {
		case !p.exists && data == nil:
			continue // nothing there, nothing to remove
		case remove:
			c.Action, c.New = "remove", nil
		case !exists:
			c.Action = "create"
		case string(old) == string(data):
			c.Action = "unchanged"
		default:
			c.Action = "update"
		}
		p.cur, p.exists = c.New, c.Action != "remove"
		if p.at >= 0 {
			out[p.at] = c
			continue
		}
		p.at = len(out)
		out = append(out, c)
	}
	return out, nil
}

func read(path string) ([]byte, bool, fs.FileMode, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0o644, nil
	}
	if err != nil {
		return nil, false, 0, err
	}
	if !st.Mode().IsRegular() {
		if st.Mode()&fs.ModeSymlink != 0 {
			// Edit the file the link points to, and keep the link.
			st, err = os.Stat(path)
			if err != nil || !st.Mode().IsRegular() {
				return nil, false, 0, errors.New("it is a link to something that is not a regular file")
			}
		} else {
			return nil, false, 0, errors.New("it is not a regular file")
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, 0, err
	}
	return data, true, st.Mode().Perm(), nil
}

// Apply writes the changes: each file through a temporary file renamed into place
// (a crash leaves the old content or the new), directories made as needed; a removed
// file's directories that are left empty go too, up to the scope's root.
func Apply(changes []Change) error {
	for _, c := range changes {
		if c.confined && (c.Action == "create" || c.Action == "update" || c.Action == "remove") {
			// A link may have appeared since the change was computed.
			r, err := confine.New(c.root)
			if err != nil {
				return err
			}
			if p, err := r.Below(c.Path); err != nil {
				return err
			} else if p != c.Path {
				return &FileError{Path: c.Path, Err: fmt.Errorf("it now resolves to %s; nothing more was written", p)}
			}
			if err := confine.NoSymlink(c.Path); err != nil {
				return err
			}
		}
		switch c.Action {
		case "create", "update":
			if err := write(c.Path, c.New, c.mode); err != nil {
				return err
			}
		case "remove":
			if err := git.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			for dir := filepath.Dir(c.Path); dir != c.root && strings.HasPrefix(dir, c.root+string(filepath.Separator)); dir = filepath.Dir(dir) {
				if os.Remove(dir) != nil { // not empty (or not ours to judge): stop
					break
				}
			}
		}
	}
	return nil
}

func write(path string, data []byte, mode fs.FileMode) error {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	// Durable (flushed, renamed into place, its directory flushed): an agent's
	// config that install reported written survives a power cut.
	return git.WriteFile(target, data, mode)
}

// Status is what is installed for one agent at one scope.
type Status struct {
	Agent string       `json:"agent"`
	Scope string       `json:"scope"`
	Files []FileStatus `json:"files"`
	// Installed: every file holds git-atlas's part as install writes it (the MCP
	// registration counts only when it is there: it is optional).
	Installed bool `json:"installed"`
	// MCP: the MCP server is registered as install --mcp writes it.
	MCP bool `json:"mcp"`
	// Guard: the guard's hook is there as install --guard writes it (claude only).
	Guard bool `json:"guard,omitempty"`
	// Note says what else the agent needs (Codex: hooks are trusted by the user;
	// Kimi: hooks only at user scope).
	Notes []string `json:"notes,omitempty"`
}

// FileStatus is one file's part.
type FileStatus struct {
	Path  string `json:"path"`
	What  string `json:"what"`
	State string `json:"state"` // installed, outdated, edited, absent, foreign, malformed, outside
	Error string `json:"error,omitempty"`
}

// Inspect reads what is installed for agent at scope under root. A malformed file is
// reported, never an error: status must describe a broken setup, not fail on it.
func Inspect(agent, scope, root string) (Status, error) {
	edits, err := plan(agent, scope)
	if err != nil {
		return Status{}, err
	}
	st := Status{Agent: agent, Scope: scope, Installed: true}
	m, err := mcpEdit(agent, scope)
	if err != nil {
		return Status{}, err
	}
	edits = append(edits, m)
	if g, err := guardEdit(agent); err == nil {
		edits = append(edits, g)
	}
	for _, e := range edits {
		path, _, lerr := locate(scope, root, e.file())
		if lerr != nil {
			path = filepath.Join(root, filepath.FromSlash(e.file()))
		}
		fs := FileStatus{Path: path, What: e.what(), State: "absent"}
		data, exists, _, err := read(path)
		switch {
		case lerr != nil:
			fs.State, fs.Error = "outside", lerr.Error()
		case err != nil:
			fs.State, fs.Error = "malformed", err.Error()
		case exists:
			s, err := e.state(data)
			if err != nil {
				s, fs.Error = "malformed", (&FileError{Path: path, Err: err}).Error()
			}
			fs.State = s
		}
		if e.what() == "mcp" || e.what() == "guard" { // optional parts
			if e.what() == "mcp" {
				st.MCP = fs.State == "installed"
			} else {
				st.Guard = fs.State == "installed"
			}
			if fs.State == "absent" {
				if e.what() == "mcp" { // the guard is listed only when there
					st.Files = append(st.Files, fs)
				}
				continue
			}
		}
		if fs.State != "installed" {
			st.Installed = false
		}
		st.Files = append(st.Files, fs)
	}
	return st, nil
}

// ContinueArgs is the agent's own command line that continues its conversation
// thread (docs/contract.md §15), run from the directory the conversation worked in;
// nil when the agent documents no such command (Kimi Code has none by id).
//   - Claude Code: `claude --resume <session-id>`, sessions kept per project
//     directory (code.claude.com/docs/en/cli-reference);
//   - Codex: `codex resume <SESSION_ID>` (developers.openai.com/codex/cli/reference).
func ContinueArgs(name, thread string) []string {
	switch name {
	case "claude":
		return []string{"claude", "--resume", thread}
	case "codex":
		return []string{"codex", "resume", thread}
	}
	return nil
}
