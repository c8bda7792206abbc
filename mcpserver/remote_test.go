package mcpserver_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is the server's stderr, read once the server has exited.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRemoteWarningsLogged: a write through the remote (git config atlas.remote)
// whose run had diverged gives the run the remote's chain and keeps the local one
// aside; the command line warns of it on stderr, and the MCP server says it too, in
// its log (stderr).
func TestRemoteWarningsLogged(t *testing.T) {
	t.Parallel()
	repo, env := newRepo(t)
	ctx := context.Background()
	remote := filepath.Join(filepath.Dir(repo), "remote.git")
	b := filepath.Join(filepath.Dir(repo), "b")
	atlasGit(t, repo, env, "init", "-q", "--bare", "-b", "main", remote)
	atlasGit(t, repo, env, "remote", "add", "origin", remote)
	atlasGit(t, repo, env, "push", "-q", "origin", "main")
	atlas(t, repo, env, "", "--remote", "origin", "start", "--id", "g", "--stages", "a")
	atlasGit(t, repo, env, "clone", "-q", remote, b)
	atlasGit(t, b, env, "config", "atlas.remote", "origin")
	atlas(t, b, env, "", "show", "g") // B reads the run through the remote
	atlas(t, b, env, "", "--remote=", "event", "g", "b-offline")
	atlas(t, repo, env, "", "--remote", "origin", "event", "g", "a-online")

	var stderr lockedBuffer
	c, err := connectTo(ctx, b, env, &stderr, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.must(t, ctx, "event", map[string]any{"run": "g", "type": "b-online"})
	c.close(t) // the server has exited: its stderr is whole
	want := "run g had diverged from origin"
	if log := stderr.String(); !strings.Contains(log, want) || !strings.Contains(log, "kept as refs/atlas/diverged/g/1") || !strings.Contains(log, "tool=event") {
		t.Errorf("the server's log does not say the run diverged:\n%s", log)
	}
}
