package git

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
)

// WorktreeIncludeFile is the file at a checkout's top that names, in gitignore
// syntax, the ignored files each new worktree gets a copy of (as Claude Code reads
// it; docs/contract.md §15).
const WorktreeIncludeFile = ".worktreeinclude"

// WorktreeIncluded lists the files of the checkout at dir (its top) that its
// .worktreeinclude matches and that git ignores there, slash-separated and relative
// to dir: both conditions, so that a tracked or merely untracked file is never
// copied. No .worktreeinclude (or one that is not a regular file) lists nothing.
func (r *Repository) WorktreeIncluded(ctx context.Context, dir string) ([]string, error) {
	file := filepath.Join(dir, WorktreeIncludeFile)
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	// The untracked files the patterns match (the patterns alone, as excludes)...
	out, err := cmd{dir: dir, args: []string{"ls-files", "-z", "--others", "--ignored", "--exclude-from=" + file}}.run(ctx)
	if err != nil {
		return nil, err
	}
	cands := nulSplit(out)
	if len(cands) == 0 {
		return nil, nil
	}
	// ...that the repository's own rules ignore.
	return r.CheckIgnored(ctx, dir, cands)
}

// CheckIgnored returns those of paths (relative, slash-separated) that the rules of the
// working tree at dir ignore, in one `git check-ignore`.
func (r *Repository) CheckIgnored(ctx context.Context, dir string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out, err := cmd{dir: dir, args: []string{"check-ignore", "-z", "--stdin"}, stdin: in.Bytes()}.run(ctx)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return nil, nil // none is ignored
	}
	if err != nil {
		return nil, err
	}
	return nulSplit(out), nil
}
