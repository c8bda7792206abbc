package git

import (
	"context"
	"strings"
)

// Worktree is a working tree git-atlas may run worktree-level git in (status, add,
// checkout). Only the worktrees and recovery packages make them: for a managed
// worktree, or (recovery, read-only) for a snapshot of the user's checkout through a
// temporary index, which never touches that checkout's index or files.
type Worktree struct {
	Repo *Repository
	Path string
}

// Worktree returns the working tree at path (absolute).
func (r *Repository) Worktree(path string) *Worktree { return &Worktree{Repo: r, Path: path} }

// Git runs git inside the worktree with extra environment variables (such as a
// temporary GIT_INDEX_FILE) and optional stdin.
func (w *Worktree) Git(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	return cmd{dir: w.Path, args: args, env: env, stdin: stdin}.run(ctx)
}

// GitEnv runs git in the repository (common dir) with extra environment and stdin.
func (r *Repository) GitEnv(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	return cmd{dir: r.CommonDir, args: args, env: env, stdin: stdin}.run(ctx)
}

// WorktreeInfo is one record of `git worktree list --porcelain -z`.
type WorktreeInfo struct {
	Path           string
	Head           string
	Branch         string // full ref name, "" when detached
	Bare           bool
	Detached       bool
	Locked         bool
	LockReason     string
	Prunable       bool
	PrunableReason string
}

// ListWorktrees parses `git worktree list --porcelain -z` (GIT-NOTES: never the
// human output).
func (r *Repository) ListWorktrees(ctx context.Context) ([]WorktreeInfo, error) {
	out, err := r.Git(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktrees(string(out)), nil
}

func parseWorktrees(out string) []WorktreeInfo {
	var list []WorktreeInfo
	var cur *WorktreeInfo
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			if cur != nil {
				list = append(list, *cur)
				cur = nil
			}
			continue
		}
		key, val, _ := strings.Cut(f, " ")
		if key == "worktree" {
			if cur != nil {
				list = append(list, *cur)
			}
			cur = &WorktreeInfo{Path: val}
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = val
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked, cur.LockReason = true, val
		case "prunable":
			cur.Prunable, cur.PrunableReason = true, val
		}
	}
	if cur != nil {
		list = append(list, *cur)
	}
	return list
}
