package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// docs/contract.md §5.3: finish's report on a person's screen says the verdict it
// finished with, unverified included (issue 31.7: "the final report shows unverified").
func TestFinishSaysTheVerdict(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "g", "--graph", "--criterion", "works", "--holder", "d")
	atlas(t, repo, "job", "add", "g", "a", "--criterion", "works", "--holder", "d")
	var claim struct{ Lease string }
	if err := json.Unmarshal([]byte(atlas(t, repo, "--json", "job", "claim", "g", "--job", "a", "--holder", "w")), &claim); err != nil || claim.Lease == "" {
		t.Fatalf("claim: %+v, %v", claim, err)
	}
	atlas(t, repo, "job", "done", "g", "a", "--lease", claim.Lease, "--status", "ok", "--holder", "w")
	out := atlas(t, repo, "finish", "g", "--status", "completed", "--holder", "d")
	if !strings.Contains(out, "verdict   unverified") || !strings.Contains(out, "unverified  works") {
		t.Fatalf("finish said:\n%s\nwant the verdict unverified, with its criterion", out)
	}
}
