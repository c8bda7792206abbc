package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMCPSeesChangesBetweenCalls: the server lives as long as the agent's session, and
// the agent and others change the worktrees between its calls. Each call reads them
// afresh: a worktree an agent wrote into after one worktree_list is dirty in the next.
func TestMCPSeesChangesBetweenCalls(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	c, err := connect(ctx, repo, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(t)
	c.must(t, ctx, "start", map[string]any{"id": "f", "stages": "build", "intent": "fresh", "session": "s-f"})
	c.must(t, ctx, "transition", map[string]any{"run": "f", "stage": "build", "status": "dispatched"})
	added := c.must(t, ctx, "worktree_add", map[string]any{"run": "f", "node": "build"})
	path, _ := added["path"].(string)
	dirty := func() any {
		t.Helper()
		list := c.must(t, ctx, "worktree_list", map[string]any{"run": "f"})
		items, _ := list["worktrees"].([]any)
		if len(items) != 1 {
			t.Fatalf("worktree_list: %v", list)
		}
		return items[0].(map[string]any)["dirty"]
	}
	if d := dirty(); d != false {
		t.Fatalf("a new worktree is dirty: %v", d)
	}
	if err := os.WriteFile(filepath.Join(path, "new.txt"), []byte("an agent's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := dirty(); d != true {
		t.Fatalf("after an agent wrote into it, worktree_list says dirty %v", d)
	}
}
