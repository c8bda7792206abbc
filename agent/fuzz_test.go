package agent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
)

// emptyContainer is an empty object or array written the way git-atlas writes one it
// creates ("{\n<indent>}"): uninstall takes such a container for its own and removes
// it (jsonedit.go), the one case where its round trip is not byte for byte.
var emptyContainer = regexp.MustCompile(`[\[{]\r?\n[ \t]*[\]}]`)

// FuzzJSONHooks: whatever a hooks file holds, install either refuses it or writes
// valid JSON that holds the hooks, keeps every other member of the root as it was,
// installs again to the same bytes, and uninstalls to a file without them, byte for
// byte the original when the hooks were absent.
func FuzzJSONHooks(f *testing.F) {
	for _, s := range []string{
		"{}", "{\n}\n", "{\n  \"model\": \"opus\"\n}\n", "\xef\xbb\xbf{\"a\": 1}",
		"{\"hooks\": {\"SessionStart\": [{\"matcher\": \"startup\", \"hooks\": []}]}}",
		"{\r\n\t\"hooks\": {}\r\n}\r\n", "{\"hooks\": {}, \"hooks\": {}}", "[]", "{\"hooks\": 1}",
	} {
		f.Add([]byte(s))
	}
	edits := []*jsonHooks{}
	for _, a := range []string{"claude", "codex"} {
		plan, _ := plan(a, ScopeProject)
		edits = append(edits, plan[0].(*jsonHooks))
	}
	f.Fuzz(func(t *testing.T, old []byte) {
		for _, e := range edits {
			before, err := e.state(old)
			data, ierr := e.install(old, true)
			if ierr != nil {
				continue
			}
			if err != nil {
				t.Fatalf("install took a file state refuses: %v\n%.300q", err, old)
			}
			if _, err := parseJSON(data); err != nil {
				t.Fatalf("install wrote invalid JSON: %v\n%.300q", err, data)
			}
			after, err := e.state(data)
			if err != nil || (after != "installed" && after != "edited") || (before == "absent" && after != "installed") {
				t.Fatalf("state %q -> %q (%v) after install of\n%.300q", before, after, err, old)
			}
			keepsMembers(t, old, data, "hooks")
			again, err := e.install(data, true)
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("a second install changed the file (%v):\n%.300q\n%.300q", err, data, again)
			}
			back, _, err := e.uninstall(data)
			if err != nil {
				t.Fatalf("uninstall: %v\n%.300q", err, data)
			}
			if st, err := e.state(back); err != nil || st != "absent" {
				t.Fatalf("state after uninstall: %q %v\n%.300q", st, err, back)
			}
			if before == "absent" && !emptyContainer.Match(old) && !bytes.Equal(back, old) {
				t.Fatalf("uninstall did not give the file back:\n%.300q\n%.300q", old, back)
			}
		}
	})
}

// FuzzJSONMember: the same for an MCP server registration.
func FuzzJSONMember(f *testing.F) {
	for _, s := range []string{"{}", "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}", "\xef\xbb\xbf{}", "{\"mcpServers\": []}"} {
		f.Add([]byte(s))
	}
	var edits []*jsonMember
	for _, a := range []string{"claude", "kimi"} {
		e, _ := mcpEdit(a, ScopeProject)
		edits = append(edits, e.(*jsonMember))
	}
	f.Fuzz(func(t *testing.T, old []byte) {
		for _, e := range edits {
			before, err := e.state(old)
			data, ierr := e.install(old, true)
			if ierr != nil {
				continue
			}
			if err != nil {
				t.Fatalf("install took a file state refuses: %v\n%.300q", err, old)
			}
			if after, err := e.state(data); err != nil || (before == "absent" && after != "installed") {
				t.Fatalf("state %q -> %q (%v) after install of\n%.300q", before, after, err, old)
			}
			keepsMembers(t, old, data, e.parent)
			if before != "absent" {
				continue
			}
			back, _, err := e.uninstall(data)
			if err != nil {
				t.Fatalf("uninstall: %v\n%.300q", err, data)
			}
			if !emptyContainer.Match(old) && !bytes.Equal(back, old) {
				t.Fatalf("uninstall did not give the file back:\n%.300q\n%.300q", old, back)
			}
		}
	})
}

// FuzzBlock: a marked section (AGENTS.md's, a TOML file's) is added to and taken
// from any text so that the text comes back byte for byte.
func FuzzBlock(f *testing.F) {
	for _, s := range []string{"", "# Agents\n", "no newline", "a\r\nb\r\n", "\xef\xbb\xbf# x\n", "model = \"k2\"\n", "[a]\nb = 1"} {
		f.Add([]byte(s))
	}
	md := section("AGENTS.md", "codex").(*block)
	userPlan, _ := plan("kimi", ScopeUser)
	toml := userPlan[0].(*block)
	f.Fuzz(func(t *testing.T, old []byte) {
		for _, b := range []*block{md, toml} {
			before, err := b.state(old)
			data, ierr := b.install(old, true)
			if ierr != nil {
				continue
			}
			if err != nil {
				t.Fatalf("install took a file state refuses: %v\n%.300q", err, old)
			}
			if after, err := b.state(data); err != nil || after != "installed" {
				t.Fatalf("state %q -> %q (%v) after install of\n%.300q", before, after, err, old)
			}
			again, err := b.install(data, true)
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("a second install changed the file (%v):\n%.300q\n%.300q", err, data, again)
			}
			if before != "absent" {
				continue
			}
			back, _, err := b.uninstall(data)
			if err != nil || !bytes.Equal(back, old) {
				t.Fatalf("uninstall did not give the file back (%v):\n%.300q\n%.300q", err, old, back)
			}
		}
	})
}

// keepsMembers checks that every member of old's root object but key is in data's
// with the same value.
func keepsMembers(t *testing.T, old, data []byte, key string) {
	t.Helper()
	var a, b map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(old, []byte(bom)), &a) != nil {
		return // the file was created ("{\n}\n" stands for it)
	}
	if err := json.Unmarshal(bytes.TrimPrefix(data, []byte(bom)), &b); err != nil {
		t.Fatalf("the result is not an object: %v", err)
	}
	for k, v := range a {
		if k == key {
			continue
		}
		var x, y any
		_ = json.Unmarshal(v, &x)
		_ = json.Unmarshal(b[k], &y)
		xs, _ := json.Marshal(x)
		ys, _ := json.Marshal(y)
		if !bytes.Equal(xs, ys) {
			t.Fatalf("member %q changed: %s -> %s", k, v, b[k])
		}
	}
}
