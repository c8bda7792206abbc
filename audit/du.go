package audit

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/worktrees"
)

// DuWorktree is one managed worktree's disk usage.
type DuWorktree struct {
	Node string `json:"node"`
	Path string `json:"path"`
	// Bytes is the size of every regular file under the worktree.
	Bytes int64 `json:"bytes"`
	// Unshared is the part of Bytes in files whose every hard link lies in this
	// worktree: what removing it frees (a file hard-linked from another worktree or
	// a package store stays on disk).
	Unshared int64 `json:"unshared_bytes"`
	Missing  bool  `json:"missing,omitempty"`
}

// DuSnapshot is one recovery snapshot's disk usage: the bytes of the objects
// reachable from it and from no other ref.
type DuSnapshot struct {
	ID    string `json:"id"`
	Ref   string `json:"ref"`
	Bytes int64  `json:"bytes"`
}

// DuRun is one run's disk usage.
type DuRun struct {
	RunID         string       `json:"run_id"`
	Status        string       `json:"status,omitempty"`
	Worktrees     []DuWorktree `json:"worktrees"`
	Snapshots     []DuSnapshot `json:"snapshots"`
	WorktreeBytes int64        `json:"worktree_bytes"`
	UnsharedBytes int64        `json:"unshared_bytes"`
	// SnapshotBytes are the bytes of the objects only this run's snapshots reach
	// (together: objects two of them share count once).
	SnapshotBytes int64 `json:"snapshot_bytes"`
}

// DuTotals add up the runs.
type DuTotals struct {
	WorktreeBytes int64 `json:"worktree_bytes"`
	UnsharedBytes int64 `json:"unshared_bytes"`
	SnapshotBytes int64 `json:"snapshot_bytes"`
}

// DuReport is `du`.
type DuReport struct {
	Runs   []DuRun  `json:"runs"`
	Totals DuTotals `json:"totals"`
}

// Du measures the disk usage of run's managed worktrees and recovery snapshots (every
// run's when run is ""), docs/contract.md §15. It changes nothing. Worktrees a ledger record
// names that git-atlas does not manage (worktrees.Own) are not measured.
func Du(ctx context.Context, store *gitstate.Store, run string) (*DuReport, error) {
	var entries []gitstate.Entry
	if run != "" {
		r, err := store.Load(ctx, run)
		if err != nil {
			return nil, err
		}
		entries = []gitstate.Entry{{ID: run, Run: r}}
	} else {
		var err error
		if entries, err = store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull}); err != nil {
			return nil, err
		}
	}
	prefix := ledger.RecoveryPrefix
	if run != "" {
		prefix += run + "/"
	}
	snaps, err := store.Repo.ListRefs(ctx, strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	gate, gateErr := worktrees.NewGate(ctx, store.Repo)
	rep := &DuReport{Runs: []DuRun{}}
	byRun := map[string]int{}
	// add gives the index of run id's row, made when new (an index: rows move as
	// the slice grows).
	add := func(id string) int {
		if i, ok := byRun[id]; ok {
			return i
		}
		byRun[id] = len(rep.Runs)
		rep.Runs = append(rep.Runs, DuRun{RunID: id, Worktrees: []DuWorktree{}, Snapshots: []DuSnapshot{}})
		return len(rep.Runs) - 1
	}
	for _, e := range entries {
		d := &rep.Runs[add(e.ID)]
		if e.Run == nil {
			continue
		}
		d.Status = e.Run.State.Status
		for _, w := range e.Run.State.Worktrees {
			if gateErr != nil || gate.Foreign(e.ID, w) != nil {
				continue
			}
			dw := measureWorktree(w.Node, w.Path)
			d.Worktrees = append(d.Worktrees, dw)
			d.WorktreeBytes += dw.Bytes
			d.UnsharedBytes += dw.Unshared
		}
	}
	tips := make([]git.OID, 0, len(snaps))
	var names []string
	var owners []int // the run row of each tip
	for _, s := range snaps {
		rest := strings.TrimPrefix(s.Name, ledger.RecoveryPrefix)
		id, snap, ok := strings.Cut(rest, "/")
		oid, err := git.ParseOID(s.ID)
		if !ok || err != nil {
			continue
		}
		tips, names = append(tips, oid), append(names, s.Name)
		k := add(id)
		rep.Runs[k].Snapshots = append(rep.Runs[k].Snapshots, DuSnapshot{ID: snap, Ref: s.Name})
		owners = append(owners, k)
	}
	each, groups, err := store.Repo.UniqueBytes(ctx, tips, names, owners)
	if err != nil {
		return nil, err
	}
	for i, k := range owners {
		d := &rep.Runs[k]
		d.Snapshots[indexOfSnap(d.Snapshots, names[i])].Bytes = each[i]
	}
	for g, n := range groups {
		rep.Runs[g].SnapshotBytes = n
	}
	sort.SliceStable(rep.Runs, func(a, b int) bool { return rep.Runs[a].RunID < rep.Runs[b].RunID })
	for _, d := range rep.Runs {
		rep.Totals.WorktreeBytes += d.WorktreeBytes
		rep.Totals.UnsharedBytes += d.UnsharedBytes
		rep.Totals.SnapshotBytes += d.SnapshotBytes
	}
	return rep, nil
}

func indexOfSnap(l []DuSnapshot, ref string) int {
	for i := range l {
		if l[i].Ref == ref {
			return i
		}
	}
	return 0
}

// measureWorktree adds up the regular files under path, and those whose every hard
// link is under it. It follows no symbolic link.
func measureWorktree(node, path string) DuWorktree {
	dw := DuWorktree{Node: node, Path: path}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		dw.Missing = true
		return dw
	}
	type linked struct {
		size        int64
		seen, links uint64
	}
	multi := map[[2]uint64]*linked{}
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		id, links, ok := fileLinks(fi)
		if !ok || links <= 1 {
			dw.Bytes += fi.Size()
			dw.Unshared += fi.Size()
			return nil
		}
		l := multi[id]
		if l == nil {
			l = &linked{size: fi.Size(), links: links}
			multi[id] = l
			dw.Bytes += fi.Size() // a file linked twice inside is on disk once
		}
		l.seen++
		return nil
	})
	for _, l := range multi {
		if l.seen >= l.links {
			dw.Unshared += l.size
		}
	}
	return dw
}
