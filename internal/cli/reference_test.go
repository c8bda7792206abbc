package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli.md and docs/git-atlas.1 from the command tree")

// TestReferenceUpToDate fails when the committed command reference or man page differs
// from what the command tree generates: a flag added, renamed or reworded without
// `make docs`.
func TestReferenceUpToDate(t *testing.T) {
	for name, write := range map[string]func(io.Writer) error{
		"cli.md":      WriteMarkdownReference,
		"git-atlas.1": WriteManPage,
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "docs", name)
		if *updateDocs {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, b.Bytes()) {
			t.Errorf("docs/%s is not what the command tree generates: run `make docs` (go test ./internal/cli -run TestReferenceUpToDate -update-docs)", name)
		}
	}
}
