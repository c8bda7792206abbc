package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// listDocument is what `list --json` prints for n runs, compact, as printJSON's
// Encoder writes it before indenting.
func listDocument(b *testing.B, n int) []byte {
	b.Helper()
	runs := make([]map[string]any, n)
	for i := range runs {
		runs[i] = map[string]any{"run_id": fmt.Sprintf("run-%04d", i), "kind": "single", "status": "running",
			"current_stage": "code", "baseline": "3978e51a79291a16453acc1b331b17ab27334109", "intent": "fix the bug <in> a & b",
			"epoch": 1, "events": 12, "live": false, "created_at": "2026-12-01T21:46:50.695679051Z",
			"updated_at": "2026-12-01T21:46:50.714550254Z", "tip": "a8a7f43c6b4e1733e2e7b530de710635713437a1",
			"stages": []map[string]any{{"name": "plan", "status": "completed"}, {"name": "code", "status": "dispatched"}}}
	}
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"runs": runs}); err != nil {
		b.Fatal(err)
	}
	return compact.Bytes()
}

// BenchmarkIndent: the indenting pass of printJSON (indentJSON) against
// encoding/json's json.Indent on `list --json` of 1,000 runs (bench/results/2026-12-05.md). json.Indent
// alone would also not unescape the \u003c, \u003e, \u0026 of ledger documents, which
// printJSON prints as themselves (TestPrintJSONUnescapesHTML).
func BenchmarkIndent(b *testing.B) {
	src := listDocument(b, 1000)
	b.Run("indentJSON", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		dst := make([]byte, 0, len(src)*2)
		for b.Loop() {
			dst = indentJSON(dst[:0], src)
		}
	})
	b.Run("json.Indent", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		var dst bytes.Buffer
		dst.Grow(len(src) * 2)
		for b.Loop() {
			dst.Reset()
			if err := json.Indent(&dst, src, "", "  "); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encoder.SetIndent", func(b *testing.B) {
		var v any
		if err := json.Unmarshal(src, &v); err != nil {
			b.Fatal(err)
		}
		var dst bytes.Buffer
		for b.Loop() {
			dst.Reset()
			enc := json.NewEncoder(&dst)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
