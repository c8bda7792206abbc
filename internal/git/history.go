package git

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CommitDates reads the committer times (Unix seconds) of commits, in one git call.
func (r *Repository) CommitDates(ctx context.Context, commits []OID) (map[string]int64, error) {
	out, err := r.git(ctx, append([]string{"rev-list", "--no-walk=unsorted", "--format=%ct", "--end-of-options"}, oidStrings(commits)...)...)
	if err != nil {
		return nil, fmt.Errorf("read commit dates: %w", err)
	}
	dates := map[string]int64{}
	var cur string
	for line := range strings.SplitSeq(string(out), "\n") {
		if sha, ok := strings.CutPrefix(line, "commit "); ok {
			cur = sha
			continue
		}
		if cur != "" && line != "" {
			t, err := strconv.ParseInt(line, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("read commit dates: %q", line)
			}
			dates[cur] = t
			cur = ""
		}
	}
	return dates, nil
}

// CountCommits counts the commits reachable from head and not from exclude, as
// `git rev-list --count head ^exclude` does.
func (r *Repository) CountCommits(ctx context.Context, head, exclude OID) (int, error) {
	if n, ok := r.countLocal(head, exclude); ok {
		return n, nil
	}
	out, err := r.git(ctx, "rev-list", "--count", "--end-of-options", head.String(), "^"+exclude.String(), "--")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// countLocal is CountCommits answered from loose commits in process, for the common
// case of a node's few commits on top of its baseline (which may be packed, as in a
// clone): it walks head's history, not past exclude, and is ok only where every commit
// it reads is a whole loose commit (looseHistory), there are at most ancestryWalkMost
// of them, and none is a root.
// Then every path down from them reaches exclude, so none is exclude's ancestor,
// and they are exactly what git counts; a root met on the way might be one, and the
// question goes to git.
func (r *Repository) countLocal(head, exclude OID) (int, bool) {
	l, ok := r.looseHistory(exclude, head)
	if !ok {
		return 0, false
	}
	if head == exclude {
		return 0, true
	}
	n := 0
	_, ok = l.walkLoose(head, exclude, func(parents []OID) (done, ok bool) {
		n++
		return false, len(parents) > 0
	})
	return n, ok
}

// TreeDiskUsage is the bytes on disk of every object reachable from commit's tree
// (`git rev-list --objects --disk-usage`).
func (r *Repository) TreeDiskUsage(ctx context.Context, commit OID) (int64, error) {
	out, err := r.git(ctx, "rev-list", "--objects", "--disk-usage", "--end-of-options", commit.String()+"^{tree}", "--")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// RefsContainingUnder lists the refs under prefixes whose history contains commit.
func (r *Repository) RefsContainingUnder(ctx context.Context, commit OID, prefixes ...string) ([]string, error) {
	out, err := r.git(ctx, append([]string{"for-each-ref", "--format=%(refname)", "--contains=" + commit.String(), "--end-of-options"}, prefixes...)...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// RefCommit is a ref's commit as RefCommits reads it.
type RefCommit struct {
	Ref     string
	When    int64 // committer time, Unix seconds
	Parents []string
}

// RefCommits reads the committer time and parents of the commits refs point to, in
// one git call; a ref that does not exist, or names no commit, is left out.
func (r *Repository) RefCommits(ctx context.Context, refs []string) ([]RefCommit, error) {
	out, err := r.git(ctx, append([]string{"for-each-ref", "--format=%(refname)%00%(committerdate:unix)%00%(parent)", "--end-of-options"}, refs...)...)
	if err != nil {
		return nil, err
	}
	var list []RefCommit
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			continue
		}
		when, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue // not a commit
		}
		list = append(list, RefCommit{Ref: f[0], When: when, Parents: strings.Fields(f[2])})
	}
	return list, nil
}
