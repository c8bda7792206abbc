package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/ledger"
)

// A snapshot is data: one pulled from a shared remote was written by whoever could
// push there (docs: "Shared data is hostile"). Nothing of it reaches the disk or git
// before it is checked here, entry by entry: checkManifest (in Open) for what the
// manifest names, checkSnap for the trees a restore or a replay writes.

// checkedSnap is a snapshot whose trees and paths were all checked: the only form of
// a snapshot restoreFiles, restoreWorktree and applyTo take.
type checkedSnap struct {
	*Snap
	tree  *git.CheckedTree // the files
	index *git.CheckedTree // the index, without its unmerged paths
}

// checkSnap reads back and checks every tree a restore of s writes (its files, its
// index and its meta tree, whose conflicts/ entries become index entries). A bad
// entry is a refusal (exit 5) that names it; nothing has been written.
func checkSnap(ctx context.Context, repo *git.Repository, s *Snap) (*checkedSnap, error) {
	cs := &checkedSnap{Snap: s}
	for _, t := range []struct {
		what string
		id   git.OID
		dst  **git.CheckedTree
	}{{"files", s.Tree, &cs.tree}, {"index", s.IndexTree, &cs.index}, {"manifest", s.MetaTree, nil}} {
		if t.id.IsZero() && t.dst == nil {
			continue // a capture not yet committed (CopyCheckout) has no meta tree
		}
		if t.id.IsZero() {
			return nil, refuseSnap(s.Commit, t.what, errors.New("no tree"))
		}
		ct, cerr := repo.CheckTree(ctx, t.id)
		if errors.Is(cerr, git.ErrBadTree) {
			return nil, refuseSnap(s.Commit, t.what, cerr)
		} else if cerr != nil {
			return nil, fmt.Errorf("snapshot %s: read its %s: %w", s.Commit, t.what, cerr)
		}
		if t.dst != nil {
			*t.dst = ct
		}
	}
	for _, e := range s.Unmerged {
		if err := checkRel(e.Path); err != nil {
			return nil, refuseSnap(s.Commit, "conflict", err)
		}
	}
	return cs, nil
}

// checkManifest checks what a manifest names before anyone acts on it: the pending
// operation's refs are MERGE_HEAD, CHERRY_PICK_HEAD or REVERT_HEAD at an object id
// (a hand-written "refs/heads/main" would move a branch; the ids themselves were
// parsed by decoding, see Manifest), and every path a restore touches (sparse files
// it removes, index entries it marks) is a relative path of names confine.Name
// accepts.
func checkManifest(commit string, m *Manifest) error {
	if err := checkIdentity(m); err != nil {
		return refuseSnap(commit, "manifest", err)
	}
	for name, id := range m.Pending {
		if !slices.Contains(pendingRefs, name) {
			return refuseSnap(commit, "manifest", fmt.Errorf("it names the pseudo ref %q, not one of %s", name, strings.Join(pendingRefs, ", ")))
		}
		if id.IsZero() {
			return refuseSnap(commit, "manifest", fmt.Errorf("pending.%s is empty, not an object id", name))
		}
	}
	for _, list := range [][]Name{m.Unmerged, m.AssumeUnchanged, m.SkipWorktree, m.Sparse, m.Embedded} {
		for _, n := range list {
			if err := checkRel(n.String()); err != nil {
				return refuseSnap(commit, "manifest", err)
			}
		}
	}
	for _, e := range m.Ignored {
		if err := checkRel(e.String()); err != nil {
			return refuseSnap(commit, "manifest", err)
		}
	}
	return nil
}

// checkIdentity checks the names a manifest gives its snapshot, which listings show
// and agents read: the run, node and stage are names as a ledger's are, the source one
// git-atlas writes, the branch a branch name. The errors name the member, not its
// value: that is the pulled text kept away from an agent's context.
func checkIdentity(m *Manifest) error {
	if ledger.ValidName("run", m.Run) != nil {
		return errors.New("its run_id is not a run name")
	}
	if m.Node != "" && ledger.ValidName("node", m.Node) != nil {
		return errors.New("its node is not a node name")
	}
	if m.Stage != "" && ledger.ValidName("stage", m.Stage) != nil {
		return errors.New("its stage is not a stage name")
	}
	if !slices.Contains([]string{SourceWorktree, SourceCheckout, SourceSetAside}, m.Source) {
		return fmt.Errorf("its source is none of %s, %s, %s", SourceWorktree, SourceCheckout, SourceSetAside)
	}
	if m.Branch != "" && (gitid.CheckRefFormat(m.Branch) != nil || gitid.CheckRefFormat("refs/heads/"+m.Branch) != nil) {
		return errors.New("its branch is not a branch name")
	}
	return nil
}

// checkRel checks a slash-separated path a snapshot names: relative, each component
// a name confine.Name accepts.
func checkRel(p string) error {
	if p == "" || strings.HasPrefix(p, "/") {
		return fmt.Errorf("the path %q is not relative", p)
	}
	for c := range strings.SplitSeq(p, "/") {
		if err := confine.EntryName(c); err != nil {
			return fmt.Errorf("the path %q: %w", p, err)
		}
	}
	return nil
}

// ErrBadSnapshot is the cause of every refusal of a snapshot's content.
var ErrBadSnapshot = errors.New("a snapshot holds what no restore may write")

// refuseSnap is the refusal of a snapshot's content (err says what is wrong, part
// where: files, index, manifest, conflict).
func refuseSnap(commit, part string, err error) error {
	msg := err.Error()
	if fe, ok := errors.AsType[*fault.Error](err); ok {
		msg = fe.Msg
	}
	return &fault.Error{Kind: fault.ErrRefused, Err: ErrBadSnapshot,
		Msg: fmt.Sprintf("snapshot %s is refused: %s (its %s); nothing was written", commit, msg, part)}
}
