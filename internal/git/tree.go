package git

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
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

// LsTrees is LsTree of each of trees, their objects read together: each tree object
// the listings share (a subtree no change touched) is read once.
func (r *Repository) LsTrees(ctx context.Context, trees ...OID) ([][]TreeItem, error) {
	ids := make([]string, len(trees))
	for i, t := range trees {
		ids[i] = t.String()
	}
	if _, goGit := r.objects.(*goGitStore); goGit {
		if lists, ok := r.lsTreesRead(ctx, ids); ok {
			return lists, nil
		}
	}
	lists := make([][]TreeItem, len(trees))
	for i, t := range trees {
		out, err := r.git(ctx, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", t.String())
		if err != nil {
			return nil, err
		}
		if lists[i], err = parseLsTree(string(out)); err != nil {
			return nil, err
		}
	}
	return lists, nil
}

// lsTreesRead is `ls-tree -r --full-tree` of trees (or commits' trees) read object by
// object: the roots asked at once, then every subtree of a level at once, through
// catFile (loose trees in process, the others from one cat-file request a level, the
// command's long-lived one when it is free), then each walked in tree order as
// ls-tree walks it. It replaces an `ls-tree -r` process a tree, whose 20,000 lines
// were formatted and parsed again, and a loose-only walk that gave up, its reads
// wasted, at the first packed subtree. ok is false, and git must list the trees,
// whenever anything is not as this reader expects: a replace ref that could stand in
// for an object, an object missing or of another type, a tree that does not parse, a
// mode git would canonicalise.
func (r *Repository) lsTreesRead(ctx context.Context, ids []string) ([][]TreeItem, bool) {
	if r.mayReplace() {
		return nil, false
	}
	hashLen := objectIDLen(r.ObjectFormat == "sha256")
	trees := map[string][]byte{}
	// read reads the trees of level (distinct, none read yet); ok is false when one
	// is missing or not a tree.
	read := func(level []string) bool {
		ok := true
		err := catFile(ctx, r, level, func(i int, o batchObject) {
			if o.missing || o.typ != "tree" {
				ok = false
				return
			}
			trees[level[i]] = o.data
		})
		return err == nil && ok
	}
	// The roots: trees, or commits whose trees are the roots.
	roots := make([]string, len(ids))
	ok := true
	err := catFile(ctx, r, ids, func(i int, o batchObject) {
		switch {
		case o.missing:
			ok = false
		case o.typ == "tree":
			roots[i] = ids[i]
			trees[ids[i]] = o.data
		case o.typ == "commit":
			info, err := parseCommit(ids[i], o.data)
			if err != nil {
				ok = false
				return
			}
			roots[i] = info.Tree.String()
		default:
			ok = false
		}
	})
	if err != nil || !ok {
		return nil, false
	}
	var level []string
	for _, t := range roots {
		if _, have := trees[t]; !have && !slices.Contains(level, t) {
			level = append(level, t)
		}
	}
	if len(level) > 0 && !read(level) {
		return nil, false
	}
	for next := slices.Compact(slices.Sorted(slices.Values(roots))); len(next) > 0; {
		// The subtrees of this level's trees not read yet, each once.
		var sub []string
		queued := map[string]bool{}
		for _, t := range next {
			ok := eachTreeEntry(trees[t], hashLen, func(mode, _, rawID []byte) bool {
				if string(mode) != "40000" {
					return true
				}
				id := hex.EncodeToString(rawID)
				if _, have := trees[id]; !have && !queued[id] {
					queued[id] = true
					sub = append(sub, id)
				}
				return true
			})
			if !ok {
				return nil, false
			}
		}
		if len(sub) > 0 && !read(sub) {
			return nil, false
		}
		next = sub
	}
	lists := make([][]TreeItem, len(roots))
	for i, root := range roots {
		if lists[i], ok = listRead(trees, root, hashLen); !ok {
			return nil, false
		}
	}
	return lists, true
}

// listRead walks the tree root, its subtrees read into trees, as `ls-tree -r` lists
// it. Every id and path is a substring of one string (a string each was most of the
// listing's time at 20,000 files), sized by a first walk that only counts.
func listRead(trees map[string][]byte, root string, hashLen int) ([]TreeItem, bool) {
	// walk calls leaf with each file of tree (mode canonical), prefix its directory.
	var walk func(prefix []byte, tree []byte, leaf func(mode, prefix, name, rawID []byte)) bool
	walk = func(prefix []byte, tree []byte, leaf func(mode, prefix, name, rawID []byte)) bool {
		return eachTreeEntry(tree, hashLen, func(mode, name, rawID []byte) bool {
			switch string(mode) {
			case "100644", "100755", "120000", "160000":
				leaf(mode, prefix, name, rawID)
				return true
			case "40000":
				sub, ok := trees[hex.EncodeToString(rawID)]
				return ok && walk(append(append(slices.Clip(prefix), name...), '/'), sub, leaf)
			}
			return false
		})
	}
	n, size := 0, 0
	if !walk(nil, trees[root], func(_, prefix, name, _ []byte) { n, size = n+1, size+2*hashLen+len(prefix)+len(name) }) {
		return nil, false
	}
	buf := make([]byte, 0, size)
	walk(nil, trees[root], func(_, prefix, name, rawID []byte) {
		buf = hex.AppendEncode(buf, rawID)
		buf = append(append(buf, prefix...), name...)
	})
	all := string(buf)
	list := make([]TreeItem, n)
	at := 0
	walk(nil, trees[root], func(mode, prefix, name, _ []byte) {
		i := len(list) - n
		n--
		it := &list[i]
		switch string(mode) {
		case "100644", "100755", "120000":
			it.Mode, it.Type = modeString[string(mode)], "blob"
		default:
			it.Mode, it.Type = "160000", "commit"
		}
		it.ID = all[at : at+2*hashLen]
		at += 2 * hashLen
		it.Path = all[at : at+len(prefix)+len(name)]
		at += len(prefix) + len(name)
	})
	return list, true
}

// modeString are the modes of files as ls-tree prints them, one string each.
var modeString = map[string]string{"100644": "100644", "100755": "100755", "120000": "120000"}

// eachTreeEntry calls fn with every entry of a tree's content ("<mode> <name>\0<raw
// id>" each), in order, until fn returns false; ok is false when the content does not
// parse or fn stopped. The slices fn gets are the content's own.
func eachTreeEntry(tree []byte, hashLen int, fn func(mode, name, rawID []byte) bool) bool {
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp <= 0 || nul < sp+2 || len(tree) < nul+1+hashLen {
			return false
		}
		if !fn(tree[:sp], tree[sp+1:nul], tree[nul+1:nul+1+hashLen]) {
			return false
		}
		tree = tree[nul+1+hashLen:]
	}
	return true
}
