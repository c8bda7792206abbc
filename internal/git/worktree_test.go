package git

import "testing"

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
