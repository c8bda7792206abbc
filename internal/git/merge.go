package git

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/gitid"
)

// MergeTree merges theirs into ours without any worktree or index (`git merge-tree
// --write-tree`). A clean merge gives its tree and nil paths; a conflict gives the
// conflicted paths (never nil).
func (r *Repository) MergeTree(ctx context.Context, ours, theirs OID) (OID, []string, error) {
	start := time.Now()
	out, err := r.git(ctx, "merge-tree", "--write-tree", "--no-messages", "-z", "--end-of-options", ours.String(), theirs.String())
	var ge *Error
	conflict := errors.As(err, &ge) && ge.ExitCode == 1
	if err != nil && !conflict {
		return OID{}, nil, r.objectsWritten(start, err)
	}
	if err := r.syncObjectDirs(start); err != nil {
		return OID{}, nil, err
	}
	tree, paths, perr := parseMergeTree(out)
	if perr != nil {
		return OID{}, nil, perr
	}
	if conflict && paths == nil {
		paths = []string{} // a conflict git reports with no path of its own
	}
	if !conflict {
		paths = nil
	}
	tid, err := gitOID(tree)
	if err != nil {
		return OID{}, nil, err
	}
	return tid, paths, nil
}

// parseMergeTree reads the -z output of `git merge-tree --write-tree`: the tree id
// NUL, then when the merge conflicts one "<mode> <object> <stage>\t<path>" record per
// conflicted stage entry, each NUL-terminated; an empty record ends them (what
// follows, without --no-messages, is informational messages). It returns the tree and
// the conflicted paths, unique and sorted.
func parseMergeTree(out []byte) (string, []string, error) {
	fields := strings.Split(string(out), "\x00")
	tree := fields[0]
	if !isObjectID(tree) {
		return "", nil, fmt.Errorf("merge-tree: unexpected output %q", truncate(string(out)))
	}
	var paths []string
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		if f == "" {
			break
		}
		meta, path, ok := strings.Cut(f, "\t")
		if !ok || len(strings.Fields(meta)) != 3 || path == "" {
			return "", nil, fmt.Errorf("merge-tree: unexpected conflict record %q", truncate(f))
		}
		if !seen[path] {
			seen[path] = true
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	return tree, paths, nil
}

func isObjectID(s string) bool { return gitid.IsObjectID(s) }

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// Signature is who made a commit, and when (Unix seconds, UTC).
type Signature struct {
	Name, Email string
	When        int64
}

// CommitTreeAs writes a commit of tree with parents, authored and committed by sig,
// unsigned whatever commit.gpgSign says: the same inputs give the same commit every
// time.
func (r *Repository) CommitTreeAs(ctx context.Context, tree OID, parents []OID, msg string, sig Signature) (OID, error) {
	stamp := strconv.FormatInt(sig.When, 10) + " +0000"
	env := []string{
		"GIT_AUTHOR_NAME=" + sig.Name, "GIT_AUTHOR_EMAIL=" + sig.Email, "GIT_AUTHOR_DATE=" + stamp,
		"GIT_COMMITTER_NAME=" + sig.Name, "GIT_COMMITTER_EMAIL=" + sig.Email, "GIT_COMMITTER_DATE=" + stamp,
	}
	args := []string{"commit-tree", "--no-gpg-sign", "-m", msg}
	for _, p := range parents {
		args = append(args, "-p", p.String())
	}
	id, err := r.writeObject(func() ([]byte, error) {
		return r.gitEnv(ctx, env, nil, append(args, "--end-of-options", tree.String())...)
	})
	if err != nil {
		return OID{}, err
	}
	return gitOID(id)
}

// MergeCommand is the command a person runs in the worktree at dir to bring its
// checked-out branch to rev: `git -C DIR merge --ff-only REV`, or a merge of it when
// the branch has commits rev lacks (ffOnly false). git's own flags stay here.
func MergeCommand(dir string, rev OID, ffOnly bool) []string {
	if ffOnly {
		return []string{"git", "-C", dir, "merge", "--ff-only", rev.String()}
	}
	return []string{"git", "-C", dir, "merge", rev.String()}
}
