package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCheckLine: each kind of bad line gets its JSON-RPC error (with the request's id
// when it has a usable one); good requests, notifications and responses pass to the
// SDK.
func TestCheckLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		code int    // 0: passed on
		id   string // the answer's id
	}{
		{`not json`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc": "2.0", "id": 1, "method": "ping"`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc": "1.0", "id": 2, "method": "tools/list"}`, jsonrpc.CodeInvalidRequest, "2"},
		{`{"id": 2, "method": "tools/list"}`, jsonrpc.CodeInvalidRequest, "2"},
		{`[]`, jsonrpc.CodeInvalidRequest, "null"},
		{`[{"jsonrpc": "2.0", "id": 9, "method": "ping"}]`, jsonrpc.CodeInvalidRequest, "null"},
		{`"a string"`, jsonrpc.CodeInvalidRequest, "null"},
		{`42`, jsonrpc.CodeInvalidRequest, "null"},
		{`null`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc": "2.0", "id": 3}`, jsonrpc.CodeInvalidRequest, "3"},
		{`{"jsonrpc": "2.0"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc": "2.0", "id": "x", "result": {}, "error": {"code": 1, "message": "m"}}`, jsonrpc.CodeInvalidRequest, `"x"`},
		{`{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc": "2.0", "id": true, "method": "ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc": "2.0", "id": 4, "method": 7}`, jsonrpc.CodeInvalidRequest, "4"},
		{`{"jsonrpc": "2.0", "id": 4, "method": ""}`, jsonrpc.CodeInvalidRequest, "4"},
		{`{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": [1]}`, jsonrpc.CodeInvalidRequest, "5"},
		{`{"jsonrpc": 2.0, "id": 6, "method": "ping"}`, jsonrpc.CodeInvalidRequest, "6"},
		{`{"JSONRPC": "2.0", "id": 6, "method": "ping"}`, jsonrpc.CodeInvalidRequest, "6"},
		{`{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": ` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}`, jsonrpc.CodeInvalidRequest, "7"},
		{`{"jsonrpc": "2.0", "id": 1, "method": "ping"}`, 0, ""},
		{`{"jsonrpc": "2.0", "id": "s", "method": "tools/list", "params": {}}`, 0, ""},
		{`{"jsonrpc": "2.0", "method": "notifications/initialized"}`, 0, ""},
		{`{"jsonrpc": "2.0", "id": 8, "result": {}}`, 0, ""},
		{`{"jsonrpc": "2.0", "id": 8, "error": {"code": -1, "message": "no"}}`, 0, ""},
	} {
		msg, answer := checkLine([]byte(tc.line))
		if tc.code == 0 {
			if msg == nil || answer != nil {
				t.Errorf("%.60s: got message %v, answer %s; want it passed on", tc.line, msg, answer)
			}
			continue
		}
		if msg != nil {
			t.Errorf("%.60s: passed on to the SDK, want error %d", tc.line, tc.code)
			continue
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(answer, &resp); err != nil || !bytes.HasSuffix(answer, []byte("\n")) || bytes.Count(answer, []byte("\n")) != 1 {
			t.Errorf("%.60s: answer %q is not one line of JSON", tc.line, answer)
			continue
		}
		if resp.JSONRPC != "2.0" || resp.Error.Code != tc.code || string(resp.ID) != tc.id || resp.Error.Message == "" {
			t.Errorf("%.60s: answer %s, want code %d and id %s", tc.line, answer, tc.code, tc.id)
		}
	}
	if msg, answer := checkLine([]byte("  \t")); msg != nil || answer != nil {
		t.Errorf("a blank line: %v %s, want it skipped", msg, answer)
	}
}

// TestReadLineTooLong: a line over the bound is dropped whole and the next one read.
func TestReadLineTooLong(t *testing.T) {
	t.Parallel()
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 200)+"\nnext\r\nlast"), 16)
	line, tooLong, err := readLine(r, 50)
	if !tooLong || line != nil || err != nil {
		t.Fatalf("long line: %q %v %v", line, tooLong, err)
	}
	line, tooLong, err = readLine(r, 50)
	if string(line) != "next" || tooLong || err != nil {
		t.Fatalf("next line: %q %v %v", line, tooLong, err)
	}
	line, tooLong, err = readLine(r, 50)
	if string(line) != "last" || tooLong || !errors.Is(err, io.EOF) {
		t.Fatalf("last line: %q %v %v", line, tooLong, err)
	}
}

// FuzzCheckLine: whatever a line holds, it is either passed on as a message the SDK
// can encode again, or answered with one line of a JSON-RPC error (-32700 or -32600);
// never both, and only a blank line is neither.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`,
		`{"jsonrpc": "2.0", "method": "notifications/initialized"}`,
		`{"jsonrpc": "2.0", "id": 8, "result": {}}`,
		`{"jsonrpc": "1.0", "id": 2, "method": "tools/list"}`,
		`[]`, `not json`, `{"jsonrpc": "2.0", "id": 3}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, answer := checkLine(line)
		switch {
		case msg != nil && answer != nil:
			t.Fatalf("both a message and an answer")
		case msg != nil:
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("passed on a message the SDK cannot encode: %v", err)
			}
		case answer != nil:
			var resp struct {
				JSONRPC string `json:"jsonrpc"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			var members map[string]json.RawMessage
			_ = json.Unmarshal(answer, &members)
			if err := json.Unmarshal(answer, &resp); err != nil || resp.JSONRPC != "2.0" || members["id"] == nil || resp.Error == nil ||
				(resp.Error.Code != jsonrpc.CodeParseError && resp.Error.Code != jsonrpc.CodeInvalidRequest) {
				t.Fatalf("answer %q is not a JSON-RPC parse or invalid-request error", answer)
			}
			if bytes.IndexByte(answer, '\n') != len(answer)-1 {
				t.Fatalf("answer %q is not one line", answer)
			}
		default:
			if len(bytes.TrimSpace(line)) != 0 {
				t.Fatalf("%q is neither passed on nor answered", line)
			}
		}
	})
}

// TestObjectsOnly: however a schema with no keyword arises (an interface field that
// jsonschema.For infers, an empty schema inside anyOf or items, {"not": {}}), the
// schema served marshals with no boolean subschema.
func TestObjectsOnly(t *testing.T) {
	t.Parallel()
	type inner struct {
		Any  any            `json:"any"`
		List []any          `json:"list"`
		Map  map[string]any `json:"map"`
	}
	inferred, err := jsonschema.For[struct {
		X     any    `json:"x"`
		Inner inner  `json:"inner"`
		Ptr   *inner `json:"ptr,omitempty"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*jsonschema.Schema{
		"inferred": inferred,
		"hand-made": {Type: "object", Properties: map[string]*jsonschema.Schema{
			"a": {AnyOf: []*jsonschema.Schema{{Type: "array", Items: &jsonschema.Schema{}}, {Type: "null"}}},
			"b": {Not: &jsonschema.Schema{}}, "c": {AnyOf: []*jsonschema.Schema{{}, {Type: "null"}}}}},
	} {
		b, err := json.Marshal(objectsOnly(s))
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if where := boolIn(doc, "$"); where != "" {
			t.Errorf("%s: a boolean schema at %s: %s", name, where, b)
		}
	}
}

// boolIn is the path of the first boolean value in a schema document ("" if none).
func boolIn(v any, at string) string {
	switch v := v.(type) {
	case bool:
		return at
	case map[string]any:
		for k, c := range v {
			if w := boolIn(c, at+"."+k); w != "" {
				return w
			}
		}
	case []any:
		for i, c := range v {
			if w := boolIn(c, fmt.Sprintf("%s[%d]", at, i)); w != "" {
				return w
			}
		}
	}
	return ""
}

// hexID stands for an object id: a struct in Go, a string in the document.
type hexID struct{ hex string }

func (h hexID) MarshalText() ([]byte, error) { return []byte(h.hex), nil }

// TestOutputSchemaSpellsTextTypesAsStrings: a result member whose type encodes itself
// as text (an object id) is a string in the schema, wherever it sits, so the result
// the operation returns validates against the schema served for it.
func TestOutputSchemaSpellsTextTypesAsStrings(t *testing.T) {
	t.Parallel()
	type attempt struct {
		Baseline hexID `json:"baseline"`
	}
	type result struct {
		Head     hexID            `json:"head"`
		Attempt  *attempt         `json:"attempt"`
		Heads    []hexID          `json:"heads"`
		ByBranch map[string]hexID `json:"by_branch"`
	}
	s, err := outputSchema(reflect.TypeFor[result]())
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	id := hexID{"930d3e62e0c542dd663f39314ed4a7ea17d3ecdd"}
	b, err := json.Marshal(result{Head: id, Attempt: &attempt{Baseline: id}, Heads: []hexID{id}, ByBranch: map[string]hexID{"main": id}})
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(doc); err != nil {
		t.Fatalf("%s does not validate against its own schema: %v", b, err)
	}
}
