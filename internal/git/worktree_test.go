package git

import (
	"os"
	"testing"
	"time"
)

func TestParseWorktrees(t *testing.T) {
	out := "worktree /r\x00HEAD abc\x00branch refs/heads/main\x00\x00" +
		"worktree /r/.git/atlas/worktrees/x/n\x00HEAD def\x00detached\x00locked atlas run x node n\x00\x00" +
		"worktree /gone\x00HEAD 123\x00branch refs/heads/b\x00prunable gitdir file points to non-existent location\x00\x00"
	got := parseWorktrees(out)
	if len(got) != 3 {
		t.Fatalf("got %d records: %+v", len(got), got)
	}
	if got[0].Path != "/r" || got[0].Branch != "refs/heads/main" || got[0].Head != "abc" {
		t.Errorf("first: %+v", got[0])
	}
	if !got[1].Detached || !got[1].Locked || got[1].LockReason != "atlas run x node n" {
		t.Errorf("second: %+v", got[1])
	}
	if !got[2].Prunable || got[2].PrunableReason == "" {
		t.Errorf("third: %+v", got[2])
	}
}

func TestClearStaleLock(t *testing.T) {
	dir := t.TempDir()
	lock := dir + "/refs/atlas/runs/r.lock"
	if err := os.MkdirAll(dir+"/refs/atlas/runs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	msg := "fatal: cannot lock ref 'refs/atlas/runs/r': Unable to create '" + lock + "': File exists.\n"
	if clearStaleLock(msg) {
		t.Fatal("a fresh lock was taken for stale")
	}
	old := time.Now().Add(-2 * StaleLockAge)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	other := dir + "/refs/heads/main.lock"
	if err := os.MkdirAll(dir+"/refs/heads", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(other, old, old)
	if clearStaleLock("Unable to create '" + other + "': File exists.") {
		t.Fatal("a lock outside git-atlas's namespaces was removed")
	}
	if !clearStaleLock(msg) {
		t.Fatal("a stale lock was not removed")
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock still there: %v", err)
	}
}
