package ledger

import (
	"bytes"
	"errors"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/gitid"
)

// The decoders at the ledger's boundary (issue 29: a ledger is untrusted input),
// fuzzed natively; the seeds in testdata/fuzz/<target> run with every `go test`.

// FuzzRunDocuments: any run.json and state.json bytes decode or fail without a panic;
// documents CheckDocuments accepts hold only valid names and full object ids, and
// encode to bytes that decode to the same documents, still accepted.
func FuzzRunDocuments(f *testing.F) {
	f.Add([]byte(futureRun), []byte(futureState))
	f.Fuzz(func(t *testing.T, runJSON, stateJSON []byte) {
		var h Header
		var st State
		if DecodeDoc(runJSON, &h) != nil || DecodeDoc(stateJSON, &st) != nil {
			return
		}
		if CheckDocuments(&h, &st) != nil {
			return
		}
		if ValidName("run", h.RunID) != nil || ValidName("run", st.RunID) != nil {
			t.Fatalf("accepted run ids %q, %q", h.RunID, st.RunID)
		}
		if b := h.Baseline.String(); b != "" && !gitid.IsObjectID(b) {
			t.Fatalf("accepted baseline %q", h.Baseline)
		}
		for _, j := range st.Jobs {
			if ValidName("job", j.ID) != nil {
				t.Fatalf("accepted job %q", j.ID)
			}
		}
		for _, w := range st.Worktrees {
			if ValidName("node", w.Node) != nil {
				t.Fatalf("accepted node %q", w.Node)
			}
		}
		for _, doc := range []any{&h, &st} {
			out, err := EncodeDoc(doc)
			if err != nil {
				return // a value encoding/json cannot write back (e.g. invalid UTF-8 kept raw)
			}
			var again any = &Header{}
			if _, ok := doc.(*State); ok {
				again = &State{}
			}
			if err := DecodeDoc(out, again); err != nil {
				t.Fatalf("re-decode: %v\n%s", err, out)
			}
			if out2, _ := EncodeDoc(again); !bytes.Equal(out, out2) {
				t.Fatalf("not stable:\n%s\n%s", out, out2)
			}
		}
		var h2 Header
		var st2 State
		b1, _ := EncodeDoc(&h)
		b2, _ := EncodeDoc(&st)
		if DecodeDoc(b1, &h2) == nil && DecodeDoc(b2, &st2) == nil && CheckDocuments(&h2, &st2) != nil {
			t.Fatalf("re-encoded documents are refused: %v", CheckDocuments(&h2, &st2))
		}
	})
}

// FuzzEventDocument: any event.json decodes or fails without a panic; one checkEvent
// accepts names a valid stage and job, and encodes stably.
func FuzzEventDocument(f *testing.F) {
	f.Add([]byte(futureEvent))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev Event
		if DecodeDoc(data, &ev) != nil || checkEvent(&ev) != nil {
			return
		}
		if ev.Job != "" && ValidName("job", ev.Job) != nil || ev.Stage != "" && ValidName("stage", ev.Stage) != nil {
			t.Fatalf("accepted %q / %q", ev.Stage, ev.Job)
		}
		out, err := EncodeDoc(&ev)
		if err != nil {
			return
		}
		var again Event
		if err := DecodeDoc(out, &again); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if out2, _ := EncodeDoc(&again); !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}

// FuzzParsePipeline: any pipeline file parses or is refused as a usage error (exit 2,
// words and a line, never a panic); stages CheckStages accepts have valid names.
func FuzzParsePipeline(f *testing.F) {
	f.Add([]byte("stages:\n  - name: plan\n  - name: code\n    verify: make test\n    rework_to: plan\n"))
	f.Add([]byte(`{"stages":[{"name":"a","max_retries":1,"scope":["src"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		defs, err := ParsePipeline("p.yaml", data)
		if err != nil {
			if !errors.Is(err, fault.ErrUsage) {
				t.Fatalf("not a usage error: %v", err)
			}
			return
		}
		if CheckStages(defs) != nil {
			return
		}
		for _, d := range defs {
			if CheckNodeName("stage", d.Name) != nil {
				t.Fatalf("accepted stage %q", d.Name)
			}
		}
	})
}
