package gitstate

import "testing"

// Only the branch shapes git-atlas makes are a run's; a person's own branch under
// atlas/ is nobody's run.
func TestBranchRun(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]string{
		"refs/heads/atlas/r1/node/a":         "r1",
		"refs/heads/atlas/r1/union":          "r1",
		"refs/heads/atlas/r1/replay/code/2":  "r1",
		"refs/heads/atlas/wip":               "",
		"refs/heads/atlas/done/other":        "",
		"refs/heads/atlas/r1/node/a/b":       "",
		"refs/heads/atlas/r1/node":           "",
		"refs/heads/atlas/r1/replay/code/x":  "",
		"refs/heads/atlas/r1/union/x":        "",
		"refs/heads/atlas/../node/a":         "",
		"refs/heads/atlas/-r/node/a":         "",
		"refs/heads/main":                    "",
		"refs/atlas/runs/r1":                 "",
		"refs/heads/atlas/r1/node/a.lock":    "",
		"refs/heads/atlas/r1/replay/code/-1": "",
	} {
		run, ok := BranchRun(ref)
		if run != want || ok != (want != "") {
			t.Errorf("BranchRun(%q) = %q, %v; want %q", ref, run, ok, want)
		}
	}
}
