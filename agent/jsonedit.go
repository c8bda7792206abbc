package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The JSON editor splices text into a configuration file instead of decoding and
// re-encoding it: every byte outside the member or element git-atlas adds stays where
// it was (order, formatting, numbers as written, escapes), and removing what was added
// gives back the file byte for byte. Insertion and removal are exact inverses:
//
//   - into an object or array with members: ",\n<indent>MEMBER" after the last one;
//     removing the last member deletes from the end of the one before it;
//   - into an empty one: "\n<indent>MEMBER" right after the opening bracket; removing
//     the only member deletes from the bracket to its end, so "{}" and "{ }" come back
//     as they were;
//   - a container git-atlas creates is written "{\n<indent>}" / "[\n<indent>]" before
//     its member goes in, so once that member is removed again it is recognised (by
//     those exact bytes) and removed in turn. One written by a person in another way
//     stays.

// jnode is one JSON value with its byte span in the file.
type jnode struct {
	kind    byte // '{', '[', '"', or 'v' for numbers, true, false, null
	start   int  // first byte of the value
	end     int  // one past its last byte
	members []jmember
	elems   []*jnode
	str     string // the decoded string, for '"'
}

type jmember struct {
	key      string
	keyStart int
	val      *jnode
}

func (n *jnode) member(key string) *jmember {
	for i := range n.members {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// bom is the UTF-8 byte order mark some editors put at the start of a file. A JSON
// file that starts with one is read after it, and every edit leaves it where it is
// (so uninstall gives the file back byte for byte).
const bom = "\xef\xbb\xbf"

// parseJSON parses data into nodes with spans. A syntax error is reported with its
// line, as a *SyntaxError.
func parseJSON(data []byte) (*jnode, error) {
	var v any
	skip := 0
	if bytes.HasPrefix(data, []byte(bom)) {
		skip = len(bom)
	}
	if err := json.Unmarshal(data[skip:], &v); err != nil {
		var se *json.SyntaxError
		off := len(data)
		if errors.As(err, &se) {
			off = skip + int(se.Offset)
		}
		msg := err.Error()
		if se != nil {
			msg = se.Error()
		}
		return nil, &SyntaxError{Line: lineAt(data, off), Msg: msg}
	}
	p := &jparser{data: data}
	p.ws()
	n := p.value()
	return n, nil
}

// unique refuses a key that appears more than once in the object n (where names the
// object for the message): JSON readers keep the last member of a name, and the
// editor would edit the first, so a hook it installs would never run.
func unique(data []byte, n *jnode, key, where string) error {
	var lines []string
	first := 0
	for _, m := range n.members {
		if m.key == key {
			if len(lines) == 0 {
				first = lineAt(data, m.keyStart)
			}
			lines = append(lines, fmt.Sprint(lineAt(data, m.keyStart)))
		}
	}
	if len(lines) < 2 {
		return nil
	}
	return &SyntaxError{Line: first, Msg: fmt.Sprintf("the key %q appears %d times in %s (lines %s): JSON readers keep only the last, so git-atlas will not edit either; merge them into one",
		key, len(lines), where, strings.Join(lines, ", "))}
}

// SyntaxError is a configuration file that cannot be parsed.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func lineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// jparser walks JSON that encoding/json already accepted, so it needs no error paths.
type jparser struct {
	data []byte
	pos  int
}

func (p *jparser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			if p.pos == 0 && bytes.HasPrefix(p.data, []byte("\xef\xbb\xbf")) {
				p.pos += 3
				continue
			}
			return
		}
	}
}

func (p *jparser) value() *jnode {
	n := &jnode{start: p.pos}
	switch c := p.data[p.pos]; c {
	case '{':
		n.kind = '{'
		p.pos++
		p.ws()
		for p.data[p.pos] != '}' {
			ks := p.pos
			k := p.value()
			p.ws()
			p.pos++ // ':'
			p.ws()
			v := p.value()
			n.members = append(n.members, jmember{key: k.str, keyStart: ks, val: v})
			p.ws()
			if p.data[p.pos] == ',' {
				p.pos++
				p.ws()
			}
		}
		p.pos++
	case '[':
		n.kind = '['
		p.pos++
		p.ws()
		for p.data[p.pos] != ']' {
			n.elems = append(n.elems, p.value())
			p.ws()
			if p.data[p.pos] == ',' {
				p.pos++
				p.ws()
			}
		}
		p.pos++
	case '"':
		n.kind = '"'
		p.pos++
		for p.data[p.pos] != '"' {
			if p.data[p.pos] == '\\' {
				p.pos++
			}
			p.pos++
		}
		p.pos++
		_ = json.Unmarshal(p.data[n.start:p.pos], &n.str)
	default:
		n.kind = 'v'
		for p.pos < len(p.data) && !strings.ContainsRune(" \t\r\n,]}", rune(p.data[p.pos])) {
			p.pos++
		}
	}
	n.end = p.pos
	return n
}

// indentUnit guesses the file's indentation from the first member of the root
// object that sits on its own line; two spaces otherwise.
func indentUnit(data []byte, root *jnode) string {
	var first int
	switch {
	case root.kind == '{' && len(root.members) > 0:
		first = root.members[0].keyStart
	case root.kind == '[' && len(root.elems) > 0:
		first = root.elems[0].start
	default:
		return "  "
	}
	i := first
	for i > 0 && (data[i-1] == ' ' || data[i-1] == '\t') {
		i--
	}
	if i > 0 && data[i-1] == '\n' && i < first {
		return string(data[i:first])
	}
	return "  "
}

// lineIndent is the whitespace that starts the line holding off.
func lineIndent(data []byte, off int) string {
	i := off
	for i > 0 && data[i-1] != '\n' {
		i--
	}
	j := i
	for j < len(data) && (data[j] == ' ' || data[j] == '\t') {
		j++
	}
	return string(data[i:j])
}

// render marshals v as indented JSON whose continuation lines start at indent.
func render(v any, indent, unit string) string {
	b, err := json.MarshalIndent(v, indent, unit)
	if err != nil {
		panic(err) // only git-atlas's own values are rendered
	}
	return string(b)
}

func splice(data []byte, at, end int, text string) []byte {
	out := make([]byte, 0, len(data)+len(text))
	out = append(out, data[:at]...)
	out = append(out, text...)
	return append(out, data[end:]...)
}

// appendMember adds "key": value (already rendered at the member's indentation) to the
// object n.
func appendMember(data []byte, n *jnode, key, value, indent string) []byte {
	k, _ := json.Marshal(key)
	nl := newline(data)
	text := indent + string(k) + ": " + strings.ReplaceAll(value, "\n", nl)
	if len(n.members) == 0 {
		return splice(data, n.start+1, n.start+1, nl+text)
	}
	at := n.members[len(n.members)-1].val.end
	return splice(data, at, at, ","+nl+text)
}

// newline is the file's line ending: "\r\n" when its first line ends so.
func newline(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// appendElem adds value (already rendered at the element's indentation) to the array n.
func appendElem(data []byte, n *jnode, value, indent string) []byte {
	nl := newline(data)
	value = strings.ReplaceAll(value, "\n", nl)
	if len(n.elems) == 0 {
		return splice(data, n.start+1, n.start+1, nl+indent+value)
	}
	at := n.elems[len(n.elems)-1].end
	return splice(data, at, at, ","+nl+indent+value)
}

// removeMember deletes member i of the object n: the inverse of appendMember when it
// is the last one.
func removeMember(data []byte, n *jnode, i int) []byte {
	m := n.members[i]
	switch {
	case i == len(n.members)-1 && i > 0:
		return splice(data, n.members[i-1].val.end, m.val.end, "")
	case i == len(n.members)-1:
		return splice(data, n.start+1, m.val.end, "")
	default:
		return splice(data, m.keyStart, n.members[i+1].keyStart, "")
	}
}

// removeElem deletes element i of the array n: the inverse of appendElem when it is
// the last one.
func removeElem(data []byte, n *jnode, i int) []byte {
	e := n.elems[i]
	switch {
	case i == len(n.elems)-1 && i > 0:
		return splice(data, n.elems[i-1].end, e.end, "")
	case i == len(n.elems)-1:
		return splice(data, n.start+1, e.end, "")
	default:
		return splice(data, e.start, n.elems[i+1].start, "")
	}
}

// emptyCreated reports whether n is an empty container exactly as git-atlas writes one
// before filling it: the bracket, a newline, the indentation of the line that opens
// it, and the closing bracket.
func emptyCreated(data []byte, n *jnode) bool {
	if (n.kind != '{' || len(n.members) > 0) && (n.kind != '[' || len(n.elems) > 0) {
		return false
	}
	closer := "}"
	if n.kind == '[' {
		closer = "]"
	}
	return string(data[n.start:n.end]) == string(n.kind)+newline(data)+lineIndent(data, n.start)+closer
}
