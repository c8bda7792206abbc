package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageWalksPastABrokenWorktreeHead: a worktree killed while git made it can leave
// a HEAD that names no object, and `rev-list --all` then fails outright. The usage
// walks leave that HEAD out and still count what a sound detached worktree HEAD keeps
// alive as reachable.
func TestUsageWalksPastABrokenWorktreeHead(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	base := t.TempDir()
	kept, broken := filepath.Join(base, "kept"), filepath.Join(base, "broken")
	g("", "worktree", "add", "-q", "--detach", kept)
	if err := os.WriteFile(filepath.Join(kept, "f"), []byte(strings.Repeat("kept alive by a detached HEAD\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	g("", "-C", kept, "add", "f")
	g("", "-C", kept, "commit", "-q", "-m", "only the worktree's")
	tip := mustOID(t, g("", "-C", kept, "rev-parse", "HEAD"))
	g("", "worktree", "add", "-q", "--detach", broken)
	head := strings.TrimSpace(g("", "-C", broken, "rev-parse", "--git-path", "HEAD"))
	if !filepath.IsAbs(head) {
		head = filepath.Join(broken, head)
	}
	if err := os.WriteFile(head, []byte(strings.Repeat("1", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := r.UnreachableBytes(ctx, []OID{tip}, nil)
	if err != nil || n != 0 {
		t.Errorf("UnreachableBytes of a commit a detached worktree holds = %d, %v; want 0, nil", n, err)
	}
	each, _, err := r.UniqueBytes(ctx, []OID{tip}, nil, []int{0})
	if err != nil || each[0] != 0 {
		t.Errorf("UniqueBytes of a commit a detached worktree holds = %v, %v; want [0], nil", each, err)
	}
	g("", "worktree", "remove", "--force", kept)
	if n, err := r.UnreachableBytes(ctx, []OID{tip}, nil); err != nil || n == 0 {
		t.Errorf("UnreachableBytes once nothing holds the commit = %d, %v; want > 0, nil", n, err)
	}
}
