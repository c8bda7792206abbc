package git

import (
	"context"
	"fmt"
	"strings"
)

// TreeFiles lists every file path of a commit's tree, recursively, with
// `git ls-tree -r -z --name-only` (NUL-separated, so any file name survives).
func (r *Repository) TreeFiles(ctx context.Context, commit string) ([]string, error) {
	if strings.HasPrefix(commit, "-") {
		return nil, fmt.Errorf("list files of %q: not a revision", commit)
	}
	out, err := r.git(ctx, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", commit, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}
