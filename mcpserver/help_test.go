package mcpserver

import (
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/ops"
)

// oneSource are the tools every argument of which is described by the text the
// command line's help shows for the same field (ops.FieldHelp).
var oneSource = []string{"start", "list", "show", "log", "transition", "heartbeat", "event", "finish",
	"job_add", "job_claim", "job_renew", "job_done", "job_list", "reap", "resume", "resume_plan", "resume_detect",
	"worktree_add", "worktree_list", "worktree_remove", "union", "recover", "recovery_list", "recovery_show",
	"recovery_restore", "audit"}

// TestArgumentsDescribedAsTheCommandLineHelps: every argument of those tools, and the
// driver, worker and snapshot arguments of every tool, is described by the text the
// command line's help shows for the same flag (ops.FieldHelp, a help:"${key}" tag on
// the request's field), with the fields it names spelled as MCP spells them: one
// source, not a second wording.
func TestArgumentsDescribedAsTheCommandLineHelps(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, tl := range tools() {
		fields, err := wireFields(tl.in)
		if err != nil {
			t.Fatal(err)
		}
		s, err := inputSchema(tl.in)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Contains(" "+strings.Join(oneSource, " ")+" ", " "+tl.name+" ")
		if all {
			seen++
		}
		for _, f := range fields {
			key, keyed := strings.CutPrefix(f.help, "${")
			if !keyed {
				if all || len(f.index) > 1 { // a shared part's field (Driver, Worker, Snapshot)
					t.Errorf("%s.%s: described by its own words %q, not the command line's help", tl.name, f.name, f.help)
				}
				continue
			}
			text := ops.FieldHelp(strings.TrimSuffix(key, "}"), func(f string) string { return f })
			if got := s.Properties[f.name].Description; text == "" || got != text {
				t.Errorf("%s.%s: description %q, want the command line's help %q", tl.name, f.name, got, text)
			}
			if strings.Contains(text, "--") {
				t.Errorf("%s.%s: %q names a flag", tl.name, f.name, text)
			}
		}
	}
	if seen != len(oneSource) {
		t.Fatalf("found %d of the %d tools", seen, len(oneSource))
	}
	if got := ops.FieldHelp("snapshot_ignored_cap", func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }); !strings.Contains(got, "--include-ignored copies") {
		t.Errorf("the command line's spelling of the ignored cap's help: %q", got)
	}
}
