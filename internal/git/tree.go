package git

import (
	"context"
	"fmt"
	"strings"
)

// TreeFiles lists every file path of a commit's tree, recursively, with
// `git ls-tree -r -z --name-only` (NUL-separated, so any file name survives).
func (r *Repository) TreeFiles(ctx context.Context, commit OID) ([]string, error) {
	out, err := r.git(ctx, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "--end-of-options", commit.String())
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", commit, err)
	}
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}
