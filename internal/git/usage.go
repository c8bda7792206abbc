package git

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// UniqueBytes measures, for each of tips, the bytes on disk of the objects reachable
// from it and from no other ref: the other tips, and every ref but those named in
// refs (the tips' own refs). It also measures, for each group (group[i] is tip i's),
// the objects only that group's tips reach (what deleting the group's refs would
// leave unreachable, objects its tips share counted once). One walk
// finds those objects (`rev-list --objects`), one `cat-file --batch-check` sizes them
// and one `cat-file --batch` reads their commits and trees, which are then walked in
// process to tell whose each object is: three git processes for any number of tips.
func (r *Repository) UniqueBytes(ctx context.Context, tips []OID, refs []string, group []int) (each []int64, groups map[int]int64, err error) {
	each, groups = make([]int64, len(tips)), map[int]int64{}
	if len(tips) == 0 {
		return each, groups, nil
	}
	args := []string{"rev-list", "--objects", "--no-object-names", "--not"}
	for _, name := range refs {
		if err := CheckRefFormat(name); err != nil {
			return nil, nil, err
		}
		args = append(args, "--exclude="+name)
	}
	heads, err := r.worktreeHeads(ctx)
	if err != nil {
		return nil, nil, err
	}
	args = append(append(args, "--exclude=worktrees/*", "--all", "--not", "--end-of-options"), oidStrings(tips)...)
	out, err := r.git(ctx, append(append(args, heads...), "--")...)
	if err != nil {
		return nil, nil, fmt.Errorf("list objects of %d snapshots: %w", len(tips), err)
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return each, groups, nil
	}
	sizes, types, err := r.objectSizes(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	var walkable []string
	for _, id := range ids {
		if t := types[id]; t == "commit" || t == "tree" {
			walkable = append(walkable, id)
		}
	}
	children := map[string][]string{}
	err = catFile(ctx, r, walkable, func(i int, o batchObject) {
		children[walkable[i]] = objectChildren(o, len(walkable[i])/2)
	})
	if err != nil {
		return nil, nil, err
	}
	// Who reaches each object: the index of the one tip, or -1 for several; and the
	// one group, or -1.
	owner, ownerGroup := map[string]int{}, map[string]int{}
	for i, tip := range tips {
		seen := map[string]bool{}
		stack := []string{tip.String()}
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, only := sizes[id]; !only || seen[id] {
				continue // another ref reaches it, and so all it reaches
			}
			seen[id] = true
			if o, ok := owner[id]; ok && o != i {
				owner[id] = -1
			} else {
				owner[id] = i
			}
			if g, ok := ownerGroup[id]; ok && g != group[i] {
				ownerGroup[id] = -1
			} else {
				ownerGroup[id] = group[i]
			}
			stack = append(stack, children[id]...)
		}
	}
	for id, o := range owner {
		if o >= 0 {
			each[o] += sizes[id]
		}
		if g := ownerGroup[id]; g >= 0 {
			groups[g] += sizes[id]
		}
	}
	return each, groups, nil
}

// UnreachableBytes is the bytes on disk of the objects reachable from tips and from
// no ref but those named in refs: what deleting refs (whose values tips are) leaves
// to git's pruning.
func (r *Repository) UnreachableBytes(ctx context.Context, tips []OID, refs []string) (int64, error) {
	if len(tips) == 0 {
		return 0, nil
	}
	args := []string{"rev-list", "--objects", "--disk-usage", "--not"}
	for _, name := range refs {
		if err := CheckRefFormat(name); err != nil {
			return 0, err
		}
		args = append(args, "--exclude="+name)
	}
	heads, err := r.worktreeHeads(ctx)
	if err != nil {
		return 0, err
	}
	args = append(append(args, "--exclude=worktrees/*", "--all", "--not", "--end-of-options"), oidStrings(tips)...)
	out, err := r.git(ctx, append(append(args, heads...), "--")...)
	if err != nil {
		return 0, fmt.Errorf("measure unreachable objects: %w", err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// worktreeHeads returns, as negative revisions (`^<id>`), the detached HEADs of the
// linked worktrees that name an object here. `--all` would add every worktree's HEAD
// itself, and fails outright on one that names no object (a worktree killed while git
// made it); the walks above exclude those pseudo-refs (`--exclude=worktrees/*`) and
// take the sound ones from here. A worktree on a branch is kept alive by its branch.
func (r *Repository) worktreeHeads(ctx context.Context) ([]string, error) {
	list, err := r.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i, w := range list {
		if i > 0 && w.Detached && w.Head != "" {
			if _, err := ParseOID(w.Head); err == nil {
				ids = append(ids, w.Head)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	sizes, _, err := r.objectSizes(ctx, ids)
	if err != nil {
		return nil, err
	}
	var heads []string
	for _, id := range ids {
		if _, ok := sizes[id]; ok {
			heads = append(heads, "^"+id)
		}
	}
	return heads, nil
}

// objectSizes asks one `git cat-file --batch-check` for the disk size and type of
// each object.
func (r *Repository) objectSizes(ctx context.Context, ids []string) (map[string]int64, map[string]string, error) {
	var in bytes.Buffer
	for _, id := range ids {
		in.WriteString(id)
		in.WriteByte('\n')
	}
	out, err := r.gitInput(ctx, in.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize:disk)", "--buffer")
	if err != nil {
		return nil, nil, fmt.Errorf("size objects: %w", err)
	}
	sizes, types := map[string]int64{}, map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue // "<id> missing": a promisor's, not on this disk
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("size objects: %q", line)
		}
		sizes[f[0]], types[f[0]] = n, f[1]
	}
	return sizes, types, nil
}

// objectChildren are the ids a commit (its tree and parents) or a tree (its entries,
// but submodules' commits) names; idLen is the object id's length in bytes.
func objectChildren(o batchObject, idLen int) []string {
	var ids []string
	switch o.typ {
	case "commit":
		for line := range strings.SplitSeq(string(o.data), "\n") {
			if line == "" {
				break // the message follows
			}
			if k, v, ok := strings.Cut(line, " "); ok && (k == "tree" || k == "parent") {
				ids = append(ids, v)
			}
		}
	case "tree":
		data := o.data
		for len(data) > 0 {
			sp := bytes.IndexByte(data, ' ')
			nul := bytes.IndexByte(data, 0)
			if sp < 0 || nul < sp || len(data) < nul+1+idLen {
				break
			}
			if mode := string(data[:sp]); mode != "160000" {
				ids = append(ids, fmt.Sprintf("%x", data[nul+1:nul+1+idLen]))
			}
			data = data[nul+1+idLen:]
		}
	}
	return ids
}
