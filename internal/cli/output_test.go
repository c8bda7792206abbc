package cli

import (
	"github.com/git-atlas/git-atlas/ops"

	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
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
	t.Parallel()
	for _, v := range []any{
		map[string]any{"runs": []ops.ListItem{}},
		map[string]any{"runs": []ops.ListItem{{RunView: ops.RunView{RunID: "a", Kind: "single", Intent: "say \"hi\" \\ {[,:]} <b>&</b>\n\u2028 \U0001F389"}}, {Unreadable: true, Error: "x"}}},
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
	t.Parallel()
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

func TestLedgerText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain text", 0, "plain text"},
		{"a\nb\tc\rd", 0, `a\nb\tc\rd`},
		{"\x1b]0;title\x07", 0, `\x1b]0;title\x07`},
		{"del\x7f nul\x00", 0, `del\x7f nul\x00`},
		{"c1 \u009b31m \u0085", 0, `c1 \u009b31m \u0085`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f \u061c", 0, `bidi \u202eevil\u202c \u2066x\u2069 \u200f \u061c`},
		{"sep \u2028 \u2029", 0, `sep \u2028 \u2029`},
		{"bad \xff\xfe utf8", 0, `bad \xff\xfe utf8`},
		{"naïve 🎉 日本", 0, "naïve 🎉 日本"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"ab\x1bcd", 4, "ab…"}, // an escape is never cut in half
		{"ab\x1b", 6, `ab\x1b`},
		{"", 3, ""},
	} {
		if got := ledgerText(tc.in, tc.max); got != tc.want {
			t.Errorf("ledgerText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if got, want := terminalSafe("line one\n\tline \x1b[2J two\u202e\n"), "line one\n\tline \\x1b[2J two\\u202e\n"; got != want {
		t.Errorf("terminalSafe = %q, want %q", got, want)
	}
}

// Every table cell is one line of at most cellMax characters.
func TestTableCellsAreOneLine(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	tb := newTable(&b, "A", "B")
	tb.row("x\ny", strings.Repeat("z", 1000))
	tb.flush()
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], `x\ny  `) || utf8.RuneCountInString(lines[1]) > 6+cellMax {
		t.Fatalf("table:\n%s", b.String())
	}
}
