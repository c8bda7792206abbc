package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/confine"
)

// Each condition the in-process attach is not certain of leaves it to git, which
// attaches the worktree all the same: HEAD names the branch, and git was asked. Not
// parallel: it counts processes and sets environment variables.
func TestAttachBranchFallsBackToGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	head := g("", "rev-parse", "HEAD")
	base := confine.RealPath(t.TempDir())
	cases := []struct {
		name, branch, msg string
		set, reset        func()
		attachedFirst     bool // HEAD names an unborn branch
		unborn            bool // the branch does not exist (git writes no reflog line)
	}{
		{name: "a message git normalises", msg: "git-atlas:  attach  x "},
		{name: "a message with a newline", msg: "git-atlas: attach\nx"},
		{name: "git -c in the environment", msg: "git-atlas: attach",
			set: func() { t.Setenv("GIT_CONFIG_PARAMETERS", "'core.x=1'") }, reset: func() { t.Setenv("GIT_CONFIG_PARAMETERS", "") }},
		{name: "a HEAD on a branch that does not exist", msg: "git-atlas: attach", attachedFirst: true},
		{name: "an unborn branch", msg: "git-atlas: attach", unborn: true},
	}
	for i, c := range cases {
		path := filepath.Join(base, "n"+string(rune('a'+i)))
		if err := r.AddWorktree(ctx, path, mustOID(t, head), "git-atlas run r node n", nil); err != nil {
			t.Fatal(err)
		}
		branch := "refs/heads/atlas/r/node/" + filepath.Base(path)
		if !c.unborn {
			g("", "update-ref", branch, head)
		}
		if c.attachedFirst {
			mustGit(t, path, nil, "", "symbolic-ref", "HEAD", branch+"-unborn")
		}
		m, err := r.Managed(path, []confine.Root{mustRoot(t, base)}, "")
		if err != nil {
			t.Fatal(err)
		}
		if c.set != nil {
			c.set()
		}
		before, attaches := Started(), localAttaches.Load()
		err = m.AttachBranch(ctx, branch, c.msg)
		if c.reset != nil {
			c.reset()
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if localAttaches.Load() != attaches {
			t.Errorf("%s: attached in process", c.name)
		}
		if Started() == before {
			t.Errorf("%s: git was not asked", c.name)
		}
		if got := strings.TrimSpace(mustGit(t, path, nil, "", "symbolic-ref", "HEAD")); got != branch {
			t.Errorf("%s: HEAD is %q, want %q", c.name, got, branch)
		}
		if _, err := os.Stat(filepath.Join(m.admin, "HEAD.lock")); !os.IsNotExist(err) {
			t.Errorf("%s: HEAD.lock left: %v", c.name, err)
		}
	}
}
