package git

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CommitDates reads the committer times (Unix seconds) of commits, in one git call.
func (r *Repository) CommitDates(ctx context.Context, shas []string) (map[string]int64, error) {
	out, err := r.git(ctx, append([]string{"rev-list", "--no-walk=unsorted", "--format=%ct"}, shas...)...)
	if err != nil {
		return nil, fmt.Errorf("read commit dates: %w", err)
	}
	dates := map[string]int64{}
	var cur string
	for _, line := range strings.Split(string(out), "\n") {
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

// CountCommits counts the commits reachable from head and not from exclude.
func (r *Repository) CountCommits(ctx context.Context, head, exclude string) (int, error) {
	out, err := r.git(ctx, "rev-list", "--count", head, "^"+exclude, "--")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// DiskUsage is the bytes on disk of every object reachable from rev
// (`git rev-list --objects --disk-usage`).
func (r *Repository) DiskUsage(ctx context.Context, rev string) (int64, error) {
	out, err := r.git(ctx, "rev-list", "--objects", "--disk-usage", rev, "--")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// RefsContainingUnder lists the refs under prefixes whose history contains sha.
func (r *Repository) RefsContainingUnder(ctx context.Context, sha string, prefixes ...string) ([]string, error) {
	out, err := r.git(ctx, append([]string{"for-each-ref", "--format=%(refname)", "--contains", sha}, prefixes...)...)
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
	out, err := r.git(ctx, append([]string{"for-each-ref", "--format=%(refname)%00%(committerdate:unix)%00%(parent)"}, refs...)...)
	if err != nil {
		return nil, err
	}
	var list []RefCommit
	for _, line := range strings.Split(string(out), "\n") {
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
