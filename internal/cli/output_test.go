package cli

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encoderIndent is what printJSON must write: encoding/json's own indented output.
func encoderIndent(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func checkPrintJSON(t *testing.T, v any) {
	t.Helper()
	var got bytes.Buffer
	if err := printJSON(&got, v); err != nil {
		t.Fatal(err)
	}
	if want := encoderIndent(t, v); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("printJSON wrote\n%s\nencoding/json writes\n%s", got.Bytes(), want)
	}
}

func TestPrintJSONIsEncoderIndent(t *testing.T) {
	for _, v := range []any{
		map[string]any{"runs": []listItem{}},
		map[string]any{"runs": []listItem{{runView: runView{RunID: "a", Kind: "single", Intent: "say \"hi\" \\ {[,:]} <b>&</b>\n\u2028 \U0001F389"}}, {Unreadable: true, Error: "x"}}},
		map[string]any{"a": map[string]any{}, "b": []any{[]any{}, map[string]any{"c": nil}, 1.5, true, "\\\\"}, "": ""},
		[]int{}, "plain", 42, nil,
	} {
		checkPrintJSON(t, v)
	}
}

// Whatever JSON value a command prints, indentJSON indents it as encoding/json does.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\"]}"}],"d":{}}`, `[[],[[]],{"":{}}]`, `"\\\\"`, `{"x":"\u2028<>&"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return
		}
		checkPrintJSON(t, v)
	})
}

// Documents read from the ledger were encoded by json.Marshal, which escapes <, > and
// &; printed JSON shows them as themselves (and an escaped backslash stays escaped).
func TestPrintJSONUnescapesHTML(t *testing.T) {
	raw := json.RawMessage(`{"verify":"a \u003e b \u0026\u0026 c \u003C d","lit":"\\u003e","q":"\"\u003e"}`)
	var got bytes.Buffer
	if err := printJSON(&got, map[string]any{"header": raw}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"header\": {\n    \"verify\": \"a > b && c < d\",\n    \"lit\": \"\\\\u003e\",\n    \"q\": \"\\\">\"\n  }\n}\n"
	if got.String() != want {
		t.Fatalf("printJSON wrote\n%s\nwant\n%s", got.String(), want)
	}
	var back map[string]map[string]string
	if err := json.Unmarshal(got.Bytes(), &back); err != nil || back["header"]["verify"] != "a > b && c < d" || back["header"]["lit"] != `\u003e` {
		t.Fatalf("not the same data: %v %v", back, err)
	}
}
