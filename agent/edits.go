package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// edit is one thing install writes into one file, and how to take it out again.
type edit interface {
	file() string // path relative to the scope's root
	what() string // "hook" or "instructions"
	// install returns the file's new content (old itself when already installed).
	install(old []byte, exists bool) ([]byte, error)
	// uninstall returns the content without what install added; remove is true when
	// install created the file and nothing else is in it.
	uninstall(old []byte) (content []byte, remove bool, err error)
	// state says whether the file holds what install writes: "installed",
	// "outdated" (an older git-atlas's text) or "absent".
	state(data []byte) (string, error)
}

// jsonHooks is the hooks envelope Claude Code and Codex share: "hooks" -> event ->
// matcher groups -> handlers (Claude Code: code.claude.com/docs/en/hooks; Codex:
// developers.openai.com/codex/hooks and the schemas in openai/codex
// codex-rs/hooks/schema/generated).
type jsonHooks struct {
	path    string
	events  []hookEvent
	command string
	timeout int
	kind    string // what() when not "hook" (the guard's)
}

type hookEvent struct {
	name    string
	matcher string // "" for events that take none
}

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

type group struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []handler `json:"hooks"`
}

func (j *jsonHooks) file() string { return j.path }
func (j *jsonHooks) what() string {
	if j.kind != "" {
		return j.kind
	}
	return "hook"
}

func (j *jsonHooks) group(ev hookEvent) group {
	return group{Matcher: ev.matcher, Hooks: []handler{{Type: "command", Command: j.command, Timeout: j.timeout}}}
}

// parse checks the shape install relies on: an object, whose "hooks" is an object,
// whose event members are arrays of objects.
func (j *jsonHooks) parse(data []byte) (*jnode, error) {
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	bad := func(n *jnode, what string) error {
		return &SyntaxError{Line: lineAt(data, n.start), Msg: what}
	}
	if root.kind != '{' {
		return nil, bad(root, "the file is not a JSON object")
	}
	// Every object on the path the edits take holds each key once.
	if err := unique(data, root, "hooks", "the file's object"); err != nil {
		return nil, err
	}
	h := root.member("hooks")
	if h == nil {
		return root, nil
	}
	if h.val.kind != '{' {
		return nil, bad(h.val, `"hooks" is not an object`)
	}
	for _, ev := range j.events {
		if err := unique(data, h.val, ev.name, `"hooks"`); err != nil {
			return nil, err
		}
		m := h.val.member(ev.name)
		if m == nil {
			continue
		}
		if m.val.kind != '[' {
			return nil, bad(m.val, fmt.Sprintf(`"hooks.%s" is not an array`, ev.name))
		}
		for _, g := range m.val.elems {
			if g.kind != '{' {
				continue
			}
			if err := unique(data, g, "hooks", fmt.Sprintf(`a group of "hooks.%s"`, ev.name)); err != nil {
				return nil, err
			}
		}
	}
	return root, nil
}

// ours finds the matcher group of ev that runs the command: its index in the event's
// array, and whether it is exactly the group install writes.
func (j *jsonHooks) ours(data []byte, arr *jnode, ev hookEvent) (int, bool) {
	for i, e := range arr.elems {
		var g group
		if e.kind != '{' || json.Unmarshal(data[e.start:e.end], &g) != nil {
			continue
		}
		for _, h := range g.Hooks {
			if h.Command == j.command {
				want, _ := json.Marshal(j.group(ev))
				got, _ := json.Marshal(g)
				return i, bytes.Equal(want, got)
			}
		}
	}
	return -1, false
}

func (j *jsonHooks) install(old []byte, exists bool) ([]byte, error) {
	data := old
	if !exists {
		data = []byte("{\n}\n")
	}
	root, err := j.parse(data)
	if err != nil {
		return nil, err
	}
	unit := indentUnit(data, root)
	for _, ev := range j.events {
		if h := root.member("hooks"); h != nil {
			if arr := h.val.member(ev.name); arr != nil {
				if i, _ := j.ours(data, arr.val, ev); i >= 0 {
					continue // present (an edited group is the person's to keep)
				}
			}
		}
		// Create what is missing, one level at a time, re-reading the spans after each
		// splice.
		if root.member("hooks") == nil {
			ind := lineIndent(data, root.start) + unit
			data = appendMember(data, root, "hooks", "{\n"+ind+"}", ind)
			root, _ = j.parse(data)
		}
		h := root.member("hooks").val
		if h.member(ev.name) == nil {
			ind := lineIndent(data, h.start) + unit
			data = appendMember(data, h, ev.name, "[\n"+ind+"]", ind)
			root, _ = j.parse(data)
			h = root.member("hooks").val
		}
		arr := h.member(ev.name).val
		ind := lineIndent(data, arr.start) + unit
		data = appendElem(data, arr, render(j.group(ev), ind, unit), ind)
		root, err = j.parse(data)
		if err != nil {
			return nil, fmt.Errorf("internal error: the edit made invalid JSON: %w", err)
		}
	}
	return data, nil
}

func (j *jsonHooks) uninstall(old []byte) ([]byte, bool, error) {
	data := old
	root, err := j.parse(data)
	if err != nil {
		return nil, false, err
	}
	removed := false
	for _, ev := range slices.Backward(j.events) { // the reverse of install's order
		h := root.member("hooks")
		if h == nil {
			break
		}
		arr := h.val.member(ev.name)
		if arr == nil {
			continue
		}
		i, exact := j.ours(data, arr.val, ev)
		if i < 0 {
			continue
		}
		if !exact {
			// A person changed the group (another handler beside ours, another
			// matcher): take out only git-atlas's handler and leave the rest.
			data = j.removeHandler(data, arr.val.elems[i])
			root, _ = j.parse(data)
			removed = true
			continue
		}
		data = removeElem(data, arr.val, i)
		removed = true
		root, _ = j.parse(data)
		h = root.member("hooks")
		arr = h.val.member(ev.name)
		if emptyCreated(data, arr.val) {
			data = removeMember(data, h.val, memberIndex(h.val, ev.name))
			root, _ = j.parse(data)
			h = root.member("hooks")
		}
		if emptyCreated(data, h.val) {
			data = removeMember(data, root, memberIndex(root, "hooks"))
			root, _ = j.parse(data)
		}
	}
	// A file install created is "{\n}\n" once its hooks are out (so is one a person
	// wrote exactly that way, the one case not told apart).
	return data, removed && string(data) == "{\n}\n", nil
}

// removeHandler deletes the handlers that run the command from group g.
func (j *jsonHooks) removeHandler(data []byte, g *jnode) []byte {
	hs := g.member("hooks")
	if hs == nil || hs.val.kind != '[' {
		return data
	}
	for k, e := range slices.Backward(hs.val.elems) {
		var h handler
		if e.kind == '{' && json.Unmarshal(data[e.start:e.end], &h) == nil && h.Command == j.command {
			return removeElem(data, hs.val, k)
		}
	}
	return data
}

func memberIndex(n *jnode, key string) int {
	for i := range n.members {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

func (j *jsonHooks) state(data []byte) (string, error) {
	root, err := j.parse(data)
	if err != nil {
		return "", err
	}
	st := "installed"
	for _, ev := range j.events {
		h := root.member("hooks")
		if h == nil {
			return "absent", nil
		}
		arr := h.val.member(ev.name)
		if arr == nil {
			return "absent", nil
		}
		i, exact := j.ours(data, arr.val, ev)
		if i < 0 {
			return "absent", nil
		}
		if !exact {
			st = "edited"
		}
	}
	return st, nil
}

// block is a marked section of a text file (an AGENTS.md section, a run of TOML
// tables): from the begin marker's line to the end marker's line. Appended to a file
// that exists as "\n" + block (ending the last line, or leaving a blank line), written
// alone into a file it creates: so removing it gives back the file byte for byte, and
// a file that is only the block was created by install.
type block struct {
	path     string
	kind     string
	begin    string // the begin marker line, without its newline
	end      string
	body     string // between the markers, ending in a newline
	validate func([]byte) error
}

func (b *block) file() string { return b.path }
func (b *block) what() string { return b.kind }

// text is the block with the file's line ending.
func (b *block) text(nl string) string {
	return strings.ReplaceAll(b.begin+"\n"+b.body+b.end+"\n", "\n", nl)
}

// span finds the block: from the start of the begin marker's line to the end of the
// end marker's line.
func (b *block) span(data []byte) (int, int, bool) {
	s := lineIndex(data, b.begin)
	if s < 0 {
		return 0, 0, false
	}
	rest := data[s:]
	e := lineIndex(rest, b.end)
	if e < 0 {
		return 0, 0, false
	}
	e += s + len(b.end)
	if e < len(data) && data[e] == '\r' {
		e++
	}
	if e < len(data) && data[e] == '\n' {
		e++
	}
	return s, e, true
}

// lineIndex is the offset of the first line that is exactly line (-1 when none).
func lineIndex(data []byte, line string) int {
	off := 0
	for off <= len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		cur := data[off:]
		if nl >= 0 {
			cur = data[off : off+nl]
		}
		if string(bytes.TrimRight(cur, "\r")) == line {
			return off
		}
		if nl < 0 {
			return -1
		}
		off += nl + 1
	}
	return -1
}

func (b *block) check(data []byte) error {
	// Two sections of git-atlas's: install would rewrite the first, uninstall leave
	// the second, and the agent read both.
	if first := lineIndex(data, b.begin); first >= 0 {
		rest := first + len(b.begin)
		if second := lineIndex(data[rest:], b.begin); second >= 0 {
			return &SyntaxError{Line: lineAt(data, rest+second), Msg: fmt.Sprintf("git-atlas's section appears twice (lines %d and %d): remove one, then run the command again",
				lineAt(data, first), lineAt(data, rest+second))}
		}
	}
	if b.validate == nil {
		return nil
	}
	return b.validate(data)
}

func (b *block) install(old []byte, exists bool) ([]byte, error) {
	if exists {
		if err := b.check(old); err != nil {
			return nil, err
		}
	}
	var data []byte
	nl := newline(old)
	switch s, e, ok := b.span(old); {
	case ok: // rewritten with its own line ending
		data = splice(old, s, e, b.text(b.newlineAt(old, s)))
	case !exists:
		data = []byte(b.text(nl))
	default:
		data = append(append(append([]byte{}, old...), nl...), b.text(nl)...)
	}
	if err := b.check(data); err != nil {
		// Not wrapped: the file as it was is valid, and a caller must not report this as
		// the file's own syntax error (SyntaxError).
		return nil, fmt.Errorf("adding git-atlas's section would make the file invalid (%s): add it by hand, or fix the file", err.Error())
	}
	return data, nil
}

func (b *block) uninstall(old []byte) ([]byte, bool, error) {
	if err := b.check(old); err != nil {
		return nil, false, err
	}
	s, e, ok := b.span(old)
	if !ok {
		return old, false, nil
	}
	if s == 0 {
		rest := old[e:]
		return rest, len(rest) == 0, nil
	}
	// Install put the block's own line ending before it: take exactly that out (a
	// file that ends in a lone "\r" keeps it).
	nl := b.newlineAt(old, s)
	if bytes.HasSuffix(old[:s], []byte(nl)) {
		s -= len(nl)
	} else if old[s-1] == '\n' {
		s--
	}
	return splice(old, s, e, ""), false, nil
}

// newlineAt is the line ending of the block that starts at s: its begin marker's.
func (b *block) newlineAt(data []byte, s int) string {
	if end := s + len(b.begin); end < len(data) && data[end] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func (b *block) state(data []byte) (string, error) {
	if err := b.check(data); err != nil {
		return "", err
	}
	s, e, ok := b.span(data)
	var want string
	if ok {
		want = b.text(b.newlineAt(data, s))
	}
	switch {
	case !ok:
		return "absent", nil
	case string(data[s:e]) == want || strings.TrimRight(string(data[s:e]), "\r\n") == strings.TrimRight(want, "\r\n"):
		return "installed", nil
	default:
		return "outdated", nil
	}
}

// validTOML reports a TOML syntax error with its line.
func validTOML(data []byte) error {
	var v map[string]any
	if _, err := toml.Decode(string(data), &v); err != nil {
		if pe, ok := errors.AsType[toml.ParseError](err); ok {
			// The line of the offending byte: the parser's own line number is the next
			// one when that byte is a newline.
			line := pe.Position.Line
			if pe.Position.Start >= 0 && pe.Position.Start <= len(data) {
				line = lineAt(data, pe.Position.Start)
			}
			return &SyntaxError{Line: line, Msg: pe.Message}
		}
		return &SyntaxError{Line: 1, Msg: err.Error()}
	}
	return nil
}

// wholeFile is a file that is git-atlas's alone (a skill's SKILL.md). One that exists
// without the marker is someone else's and is never overwritten; one with the marker
// that differs from what install writes was edited, and uninstall leaves it.
type wholeFile struct {
	path    string
	content string
	marker  string
}

func (w *wholeFile) file() string { return w.path }
func (w *wholeFile) what() string { return "instructions" }

func (w *wholeFile) install(old []byte, exists bool) ([]byte, error) {
	if exists && string(old) != w.content && !strings.Contains(string(old), w.marker) {
		return nil, &ForeignError{Msg: "it exists and was not written by git-atlas"}
	}
	return []byte(w.content), nil
}

func (w *wholeFile) uninstall(old []byte) ([]byte, bool, error) {
	if string(old) == w.content {
		return nil, true, nil
	}
	if strings.Contains(string(old), w.marker) {
		return nil, false, &ForeignError{Msg: "it was edited since git-atlas wrote it: remove it yourself if the edits can go"}
	}
	return old, false, nil
}

func (w *wholeFile) state(data []byte) (string, error) {
	switch {
	case string(data) == w.content:
		return "installed", nil
	case strings.Contains(string(data), w.marker):
		return "outdated", nil
	default:
		return "foreign", nil
	}
}

// ForeignError is a file git-atlas will not overwrite or remove.
type ForeignError struct{ Msg string }

func (e *ForeignError) Error() string { return e.Msg }
