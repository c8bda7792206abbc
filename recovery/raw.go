package recovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-atlas/git-atlas/internal/git"
)

// rawTree builds the worktree's tree from the bytes on disk, as `git add -A` would
// stage it but with no conversion and no filter (see capture): the paths are the
// index's (full, a private copy) and the untracked files that are not ignored (plus
// the ignored files in include); each present file or symlink is hashed from its raw
// bytes, and only the blobs the object store lacks are written. Deleted files drop
// out, modes come from disk (or from the index where git trusts the index:
// core.fileMode=false, core.symlinks=false), nested repositories and checked-out
// submodules become gitlinks at their HEAD, skip-worktree entries stay as they are.
func rawTree(ctx context.Context, wt *git.Worktree, full *git.TempIndex, entries []git.IndexEntry, skipped map[string]bool, include []string) (git.OID, error) {
	repo := wt.Repo
	fileMode := wt.ConfigBool(ctx, "core.fileMode", true)
	symlinks := wt.ConfigBool(ctx, "core.symlinks", true)
	others, err := full.Others(ctx)
	if err != nil {
		return git.OID{}, err
	}

	var out []git.IndexEntry
	var files []*fileCheck
	var modes []string
	consider := func(p string, ref *git.IndexEntry) error {
		nested := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		abs := filepath.Join(wt.Path, filepath.FromSlash(p))
		info, err := os.Lstat(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil // deleted (or a parent became a file): not in the tree
			}
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			files = append(files, &fileCheck{rel: p, abs: abs, link: true, exec: -1})
			modes = append(modes, "120000")
		case info.Mode().IsRegular():
			mode := "100644"
			switch {
			case !symlinks && ref != nil && ref.Mode == "120000":
				mode = "120000" // a link checked out as a file holding its target
			case !fileMode && ref != nil && (ref.Mode == "100644" || ref.Mode == "100755"):
				mode = ref.Mode
			case fileMode && info.Mode()&0o100 != 0:
				mode = "100755"
			}
			files = append(files, &fileCheck{rel: p, abs: abs, exec: -1})
			modes = append(modes, mode)
		case info.IsDir():
			if head := repo.NestedHead(ctx, abs); head != "" {
				out = append(out, git.IndexEntry{Mode: "160000", ID: head, Path: p})
			} else if ref != nil && ref.Mode == "160000" {
				out = append(out, *ref) // a submodule that is not checked out
			} else if nested {
				return fmt.Errorf("%q is a repository without a commit checked out: commit in it, or move it away, before it can be snapshotted", p)
			}
			// A tracked file became a directory: its files are among the others.
		}
		// fifos, sockets, devices: git keeps none.
		return nil
	}

	stage0 := make(map[string]*git.IndexEntry, len(entries))
	for i := range entries {
		if entries[i].Stage == 0 {
			stage0[entries[i].Path] = &entries[i]
		}
	}
	for i, e := range entries {
		if i > 0 && entries[i-1].Path == e.Path {
			continue // the other stages of an unmerged path
		}
		if ref := stage0[e.Path]; ref != nil && skipped[e.Path] {
			out = append(out, *ref)
			continue
		}
		if err := consider(e.Path, stage0[e.Path]); err != nil {
			return git.OID{}, err
		}
	}
	for _, p := range append(others, include...) {
		if err := consider(p, nil); err != nil {
			return git.OID{}, err
		}
	}

	return treeOfFiles(ctx, repo, wt.Path, files, modes, out)
}

// treeOfFiles hashes files (under root) from their raw bytes, writes the blobs the
// object store lacks, and writes the tree of them with modes, beside the entries
// already in out (gitlinks, kept index entries).
func treeOfFiles(ctx context.Context, repo *git.Repository, root string, files []*fileCheck, modes []string, out []git.IndexEntry) (git.OID, error) {
	hashAll(files, repo.ObjectFormat == "sha256")
	ids := make([]string, len(files))
	for i, f := range files {
		if f.err != nil {
			return git.OID{}, fmt.Errorf("%w: hash %q: %w", ErrChanged, f.rel, f.err)
		}
		ids[i] = f.got
	}
	want, err := oids(unique(ids)...)
	if err != nil {
		return git.OID{}, err
	}
	missing, err := repo.MissingObjects(ctx, want)
	if err != nil {
		return git.OID{}, err
	}
	if len(missing) > 0 {
		if err := writeMissing(ctx, repo, root, files, toSet(missing)); err != nil {
			return git.OID{}, err
		}
	}
	for i, f := range files {
		out = append(out, git.IndexEntry{Mode: modes[i], ID: f.got, Path: f.rel})
	}
	ti, err := repo.NewTempIndex()
	if err != nil {
		return git.OID{}, err
	}
	defer ti.Close()
	if err := ti.SetEntries(ctx, out); err != nil {
		return git.OID{}, fmt.Errorf("stage the files' bytes into a temporary index: %w", err)
	}
	tree, err := ti.WriteTree(ctx)
	if err != nil {
		return git.OID{}, fmt.Errorf("write the files' tree: %w", err)
	}
	return tree, nil
}

// writeMissing writes the blobs of the files the object store lacks, each once, as
// raw bytes. A file that changed since it was hashed gives another id: the capture
// is then stale and taken again.
func writeMissing(ctx context.Context, repo *git.Repository, root string, files []*fileCheck, missing map[string]bool) error {
	var paths []string
	var want []string
	done := map[string]bool{}
	for _, f := range files {
		if !missing[f.got] || done[f.got] {
			continue
		}
		done[f.got] = true
		if f.link {
			target, err := os.Readlink(f.abs)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrChanged, err)
			}
			id, err := repo.WriteBlob(ctx, []byte(target))
			if err != nil {
				return err
			}
			if id.String() != f.got {
				return fmt.Errorf("%w: symlink %q changed while it was read", ErrChanged, f.rel)
			}
			continue
		}
		paths = append(paths, f.rel)
		want = append(want, f.got)
	}
	ids, err := repo.WriteRawBlobs(ctx, root, paths)
	if errors.Is(err, git.ErrNoSpace) {
		return err // a full disk, not a race: never retried (docs/contract.md §11.12)
	}
	if err != nil {
		return fmt.Errorf("%w: write the worktree's files as blobs: %w", ErrChanged, err)
	}
	for i := range ids {
		if ids[i] != want[i] {
			return fmt.Errorf("%w: %q changed while it was read", ErrChanged, paths[i])
		}
	}
	return nil
}
