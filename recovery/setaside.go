package recovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// SourceSetAside is a directory set aside whole because git could not read it as a
// checkout (worktrees.SetAsideUnreadable): a `worktree add` killed before git wrote
// HEAD, a .git file deleted by hand.
const SourceSetAside = "set-aside"

// SnapshotSetAside snapshots a directory set aside whole (t.Path), so that what an
// agent wrote into a checkout git could not read is in a verified snapshot as well as
// on disk. There is no index and no HEAD to start from: every regular file and
// symlink is hashed from its raw bytes, the baseline stands in for HEAD and index, and
// the tree is checked against the directory like any snapshot's before it is pinned
// and recorded. The directory stays where it is. The top-level .git (git's pointer to
// the checkout's administrative files) is not among the files; a nested repository
// becomes a gitlink at its HEAD, listed as embedded.
func SnapshotSetAside(ctx context.Context, store *gitstate.Store, t Target, opt Options) (*Result, error) {
	repo := store.Repo
	t.Source = SourceSetAside
	if t.Baseline.IsZero() {
		return nil, fmt.Errorf("snapshot %s: no baseline", t.Path)
	}
	base, err := repo.Commit(ctx, t.Baseline)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: baseline %s: %w", t.Path, t.Baseline, err)
	}
	var c *captured
	for range 3 {
		c, err = captureDir(ctx, repo, t, base.Tree, opt)
		if !errors.Is(err, ErrChanged) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", t.Path, err)
	}
	return persist(ctx, store, t, opt, c)
}

// SnapshotStray snapshots, as SnapshotSetAside does, a directory under the managed
// root that git no longer knows and whose run no longer exists (docs/contract.md §15):
// with no ledger to record it, the snapshot is kept by its recovery ref alone,
// refs/atlas/recovery/<run>/<node>-<id>, made durable before this returns, so that the
// caller may then remove the directory. t.Baseline stands in for HEAD and index.
func SnapshotStray(ctx context.Context, store *gitstate.Store, t Target, opt Options) (*Result, error) {
	if err := ledger.ValidName("run", t.Run); err != nil {
		return nil, err
	}
	if err := ledger.ValidName("node", t.Node); err != nil {
		return nil, err
	}
	opt.unrecorded = true
	return SnapshotSetAside(ctx, store, t, opt)
}

// captureDir builds the tree of the files under t.Path from their bytes and checks it
// against the directory. Ignored files (by the repository's rules, the baseline's
// files tracked) are listed, not kept, unless opt.IncludeIgnored, as in any snapshot:
// they may hold secrets, and snapshots are pushed; the directory stays where it is.
func captureDir(ctx context.Context, repo *git.Repository, t Target, tracked git.OID, opt Options) (*captured, error) {
	m := Manifest{Schema: 1, Source: t.Source, Run: t.Run, Node: t.Node, Stage: t.Stage,
		Head: t.Baseline, Baseline: t.Baseline}
	m.IndexTree = tracked
	ignored, err := repo.IgnoredIn(ctx, t.Path, tracked)
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	if opt.IgnoredCap <= 0 {
		opt.IgnoredCap = DefaultIgnoredCap
	}
	var include []string
	if m.Ignored, include, err = sizeIgnored(t.Path, ignored, opt); err != nil {
		return nil, err
	}
	if opt.IncludeIgnored {
		m.IgnoredCap = opt.IgnoredCap
	} else {
		include = nil
	}
	skip := &verifier{}
	for _, e := range m.Ignored {
		skip.addIgnored(e.String(), e.Dir)
	}
	included := toSet(include)
	var out []git.IndexEntry
	var files []*fileCheck
	var modes []string
	err = filepath.WalkDir(t.Path, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if abs == t.Path {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(abs, t.Path+string(filepath.Separator)))
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && skip.ignoredDirs[rel] && !opt.IncludeIgnored {
			return filepath.SkipDir // listed in the manifest, not kept
		}
		if !d.IsDir() && skip.ignored(rel) && !included[rel] {
			return nil // listed in the manifest, not kept
		}
		switch {
		case d.IsDir():
			if _, err := os.Lstat(filepath.Join(abs, ".git")); err != nil {
				return nil
			}
			head := repo.NestedHead(ctx, abs)
			if head == "" {
				return fmt.Errorf("%q is a repository without a commit checked out: its files cannot be snapshotted", rel)
			}
			out = append(out, git.IndexEntry{Mode: "160000", ID: head, Path: rel})
			m.Embedded = append(m.Embedded, NameOf(rel))
			return filepath.SkipDir
		case d.Type()&fs.ModeSymlink != 0:
			files = append(files, &fileCheck{rel: rel, abs: abs, link: true, exec: -1})
			modes = append(modes, "120000")
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := "100644"
			if info.Mode()&0o100 != 0 {
				mode = "100755"
			}
			files = append(files, &fileCheck{rel: rel, abs: abs, exec: -1})
			modes = append(modes, mode)
		}
		// fifos, sockets, devices: git keeps none.
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.Tree, err = treeOfFiles(ctx, repo, t.Path, files, modes, out); err != nil {
		return nil, err
	}
	v := &verifier{repo: repo, root: t.Path}
	for _, e := range m.Ignored {
		v.addIgnored(e.String(), e.Dir)
	}
	if _, err := v.check(ctx, m.Tree.String()); err != nil {
		return nil, err
	}
	return &captured{manifest: m}, nil
}
