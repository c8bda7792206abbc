package mcpserver

import (
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ops"
)

// TestSharedFieldsDescribedAsTheCommandLineHelps: the driver, worker and snapshot
// fields of every tool are described by the text the command line's help shows for
// the same flags (ops.FieldHelp), with the fields it names spelled as MCP spells
// them: one source, not a second wording in a jsonschema tag.
func TestSharedFieldsDescribedAsTheCommandLineHelps(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{ // tool -> field -> help key
		"transition":      {"holder": "driver_holder", "session": "driver_session", "take_over": "driver_take_over", "ttl": "driver_ttl"},
		"job_claim":       {"holder": "worker_holder", "ttl": "worker_ttl"},
		"worktree_remove": {"include_ignored": "snapshot_include_ignored", "ignored_cap": "snapshot_ignored_cap"},
	}
	seen := 0
	for _, tl := range tools() {
		fields := want[tl.name]
		if fields == nil {
			continue
		}
		seen++
		s, err := inputSchema(tl.in)
		if err != nil {
			t.Fatal(err)
		}
		for field, key := range fields {
			text := ops.FieldHelp(key, func(f string) string { return f })
			if text == "" || s.Properties[field] == nil || s.Properties[field].Description != text {
				t.Errorf("%s.%s: description %q, want the command line's help %q", tl.name, field, s.Properties[field].Description, text)
			}
			if strings.Contains(text, "--") {
				t.Errorf("%s.%s: %q names a flag", tl.name, field, text)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d tools", seen, len(want))
	}
	if got := ops.FieldHelp("snapshot_ignored_cap", func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }); !strings.Contains(got, "--include-ignored copies") {
		t.Errorf("the command line's spelling of the ignored cap's help: %q", got)
	}
}
