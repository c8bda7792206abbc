package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MCPServerName is the name git-atlas's MCP server is registered under.
const MCPServerName = "git-atlas"

// MCPCommand is what the registration runs: `git atlas mcp`, in the directory the
// agent starts its servers in (the project).
var MCPCommand = []string{"git", "atlas", "mcp"}

// mcpEdit is the MCP server registration of agent at scope (install --mcp), which
// uninstall always takes out. Which document each follows:
//   - Claude Code: project scope .mcp.json at the repository root, user scope
//     ~/.claude.json, both {"mcpServers": {"<name>": {"type": "stdio", "command",
//     "args"}}} (code.claude.com/docs/en/mcp, "MCP installation scopes").
//   - Codex: a [mcp_servers.<name>] table with command and args in config.toml,
//     .codex/config.toml in a trusted project or ~/.codex/config.toml
//     (developers.openai.com/codex/mcp, developers.openai.com/codex/config-reference).
//   - Kimi Code: mcp.json, .kimi-code/mcp.json in the project or
//     ~/.kimi-code/mcp.json, {"mcpServers": {"<name>": {"command", "args"}}} (an entry
//     with command is a stdio server; moonshotai.github.io/kimi-code/en/customization/mcp).
func mcpEdit(agent, scope string) (edit, error) {
	switch agent {
	case "claude":
		path := ".mcp.json"
		if scope == ScopeUser {
			path = ".claude.json"
		}
		return &jsonMember{path: path, parent: "mcpServers", key: MCPServerName,
			value: mcpServer{Type: "stdio", Command: MCPCommand[0], Args: MCPCommand[1:]}}, nil
	case "codex":
		args, _ := json.Marshal(MCPCommand[1:]) // a JSON array of strings is a TOML array
		return &block{path: ".codex/config.toml", kind: "mcp",
			begin: "# >>> git-atlas: written by `git atlas agent install codex --mcp`; `git atlas agent uninstall codex` removes it",
			end:   "# <<< git-atlas", validate: validTOML,
			body: fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nargs = %s\n", MCPServerName, MCPCommand[0], bytes.ReplaceAll(args, []byte(","), []byte(", ")))}, nil
	case "kimi":
		return &jsonMember{path: ".kimi-code/mcp.json", parent: "mcpServers", key: MCPServerName,
			value: mcpServer{Command: MCPCommand[0], Args: MCPCommand[1:]}}, nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown agent %q", agent)}
}

// mcpServer is a stdio server's entry, in the order the agents' own tools write it.
type mcpServer struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// InstallMCP computes what registering the MCP server for agent at scope under root
// changes (install --mcp); nothing is written until Apply.
func InstallMCP(agent, scope, root string) ([]Change, error) {
	e, err := mcpEdit(agent, scope)
	if err != nil {
		return nil, err
	}
	return computeEdits([]edit{e}, scope, root, func(e edit, old []byte, exists bool) ([]byte, bool, error) {
		data, err := e.install(old, exists)
		return data, false, err
	})
}

// jsonMember is one member of an object member of a JSON file's root object:
// "mcpServers": {"git-atlas": {...}}. Spliced in and out like the hook groups
// (jsonedit.go), so every other byte stays as it was.
type jsonMember struct {
	path   string
	parent string
	key    string
	value  any
}

func (j *jsonMember) file() string { return j.path }
func (j *jsonMember) what() string { return "mcp" }

// parse checks the shape: an object whose parent member, if any, is an object.
func (j *jsonMember) parse(data []byte) (*jnode, error) {
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' {
		return nil, &SyntaxError{Line: lineAt(data, root.start), Msg: "the file is not a JSON object"}
	}
	// Every object on the path the edit takes holds each key once.
	if err := unique(data, root, j.parent, "the file's object"); err != nil {
		return nil, err
	}
	if p := root.member(j.parent); p != nil && p.val.kind != '{' {
		return nil, &SyntaxError{Line: lineAt(data, p.val.start), Msg: fmt.Sprintf("%q is not an object", j.parent)}
	} else if p != nil {
		if err := unique(data, p.val, j.key, fmt.Sprintf("%q", j.parent)); err != nil {
			return nil, err
		}
	}
	return root, nil
}

// find returns the member (nil when absent) and whether it is exactly what install
// writes (compared as JSON values, whatever the formatting).
func (j *jsonMember) find(data []byte, root *jnode) (*jmember, bool) {
	p := root.member(j.parent)
	if p == nil {
		return nil, false
	}
	m := p.val.member(j.key)
	if m == nil {
		return nil, false
	}
	var got any
	if json.Unmarshal(data[m.val.start:m.val.end], &got) != nil {
		return m, false
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(j.value)
	var want any
	_ = json.Unmarshal(b, &want)
	b, _ = json.Marshal(want)
	return m, bytes.Equal(a, b)
}

func (j *jsonMember) install(old []byte, exists bool) ([]byte, error) {
	data := old
	if !exists {
		data = []byte("{\n}\n")
	}
	root, err := j.parse(data)
	if err != nil {
		return nil, err
	}
	if m, _ := j.find(data, root); m != nil {
		return data, nil // present (an edited entry is the person's to keep)
	}
	unit := indentUnit(data, root)
	if root.member(j.parent) == nil {
		ind := lineIndent(data, root.start) + unit
		data = appendMember(data, root, j.parent, "{\n"+ind+"}", ind)
		if root, err = j.parse(data); err != nil {
			return nil, fmt.Errorf("internal error: the edit made invalid JSON: %w", err)
		}
	}
	p := root.member(j.parent).val
	ind := lineIndent(data, p.start) + unit
	data = appendMember(data, p, j.key, render(j.value, ind, unit), ind)
	if _, err := j.parse(data); err != nil {
		return nil, fmt.Errorf("internal error: the edit made invalid JSON: %w", err)
	}
	return data, nil
}

func (j *jsonMember) uninstall(old []byte) ([]byte, bool, error) {
	data := old
	root, err := j.parse(data)
	if err != nil {
		return nil, false, err
	}
	m, exact := j.find(data, root)
	if m == nil {
		return old, false, nil
	}
	if !exact {
		return old, false, &ForeignError{Msg: fmt.Sprintf("its %q server was edited since git-atlas wrote it: remove it yourself if the edits can go", j.key)}
	}
	p := root.member(j.parent).val
	data = removeMember(data, p, memberIndex(p, j.key))
	root, _ = j.parse(data)
	if p := root.member(j.parent); p != nil && emptyCreated(data, p.val) {
		data = removeMember(data, root, memberIndex(root, j.parent))
	}
	// A file install created is "{\n}\n" once the member is out.
	return data, string(data) == "{\n}\n", nil
}

func (j *jsonMember) state(data []byte) (string, error) {
	root, err := j.parse(data)
	if err != nil {
		return "", err
	}
	switch m, exact := j.find(data, root); {
	case m == nil:
		return "absent", nil
	case exact:
		return "installed", nil
	default:
		return "edited", nil
	}
}
