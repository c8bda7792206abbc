package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
)

// ErrBadTree is the cause of every refusal of CheckTree: a tree holds an entry
// that no checkout may write (docs: "Shared data is hostile").
var ErrBadTree = errors.New("a tree entry no checkout may write")

// maxTreeDepth bounds how deep CheckTree descends (git's own core.maxTreeDepth
// default): a hand-made tree nested deeper is refused, not walked.
const maxTreeDepth = 2048

// treeModes are the modes git writes into a tree object, and their types.
var treeModes = map[string]string{
	"100644": "blob", "100755": "blob", "120000": "blob", "40000": "tree", "160000": "commit",
}

// TreeEntryRaw is one entry of one tree object, as stored.
type TreeEntryRaw struct {
	Mode string // as stored: "40000" for a tree
	Name string
	ID   string // hex
}

// ParseTree reads one tree object's bytes (idLen: 20 for sha1, 32 for sha256) and
// checks every entry before anyone may use it: a name confine.Name accepts (not
// empty, ".", "..", no slash, backslash or NUL, not ".git" in any case), a mode
// from git's set (100644, 100755, 120000, 40000, 160000), no name twice. A refusal
// names the entry.
func ParseTree(data []byte, idLen int) ([]TreeEntryRaw, error) {
	var out []TreeEntryRaw
	seen := map[string]bool{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, badTree("", "an entry without a mode")
		}
		mode := string(data[:sp])
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+idLen {
			return nil, badTree("", "a truncated entry")
		}
		name := string(data[:nul])
		id := fmt.Sprintf("%x", data[nul+1:nul+1+idLen])
		data = data[nul+1+idLen:]
		if err := confine.EntryName(name); err != nil {
			return nil, badTree(name, "a name no checkout may write")
		}
		if _, ok := treeModes[mode]; !ok {
			return nil, badTree(name, "mode "+strconv.Quote(mode)+", which git never writes")
		}
		if seen[name] {
			return nil, badTree(name, "the name twice")
		}
		seen[name] = true
		out = append(out, TreeEntryRaw{Mode: mode, Name: name, ID: id})
	}
	return out, nil
}

func badTree(name, what string) error {
	msg := "a tree entry with " + what
	if name != "" || what == "a name no checkout may write" {
		msg = fmt.Sprintf("the tree entry %q has %s", name, what)
	}
	return &fault.Error{Kind: fault.ErrRefused, Msg: msg, Err: ErrBadTree}
}

// CheckedTree is a tree read back object by object with every entry checked
// (ParseTree): the only form of a tree that WriteTreeFiles, ResetTo and SetIndex
// accept, so nothing read from data reaches a working tree unchecked.
type CheckedTree struct {
	ID OID
	// Items are its blobs and gitlinks, paths joined with "/", in tree order.
	Items []TreeItem
	// Dirs are its directories (trees), parents first.
	Dirs []string
}

// CheckTree reads tree and every tree below it (one `cat-file --batch` per level)
// and checks each entry with ParseTree. A refusal (fault.ErrRefused, ErrBadTree)
// names the entry and its place.
func (r *Repository) CheckTree(ctx context.Context, id OID) (*CheckedTree, error) {
	if id.IsZero() {
		return nil, fmt.Errorf("check tree: no object id")
	}
	tree := id.String()
	idLen := 20
	if r.ObjectFormat == "sha256" {
		idLen = 32
	}
	ct := &CheckedTree{ID: id}
	type level struct{ id, path string }
	cur := []level{{tree, ""}}
	for depth := 0; len(cur) > 0; depth++ {
		if depth > maxTreeDepth {
			return nil, &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf("tree %s nests deeper than %d directories (at %q)", tree, maxTreeDepth, cur[0].path), Err: ErrBadTree}
		}
		specs := make([]string, len(cur))
		for i, l := range cur {
			specs[i] = l.id
		}
		var next []level
		var perr error
		err := catFile(ctx, r, specs, func(i int, o batchObject) {
			if perr != nil {
				return
			}
			l := cur[i]
			if o.missing || o.typ != "tree" {
				perr = fmt.Errorf("tree %s at %q: %w", l.id, l.path, ErrNotFoundObject)
				return
			}
			entries, err := ParseTree(o.data, idLen)
			if err != nil {
				var fe *fault.Error
				if errors.As(err, &fe) && l.path != "" {
					fe.Msg += fmt.Sprintf(" (in %q)", l.path)
				}
				perr = err
				return
			}
			for _, e := range entries {
				p := e.Name
				if l.path != "" {
					p = l.path + "/" + e.Name
				}
				switch typ := treeModes[e.Mode]; typ {
				case "tree":
					ct.Dirs = append(ct.Dirs, p)
					next = append(next, level{e.ID, p})
				default:
					ct.Items = append(ct.Items, TreeItem{Mode: e.Mode, Type: typ, ID: e.ID, Path: p})
				}
			}
		})
		if err != nil {
			return nil, err
		}
		if perr != nil {
			return nil, perr
		}
		cur = next
	}
	return ct, nil
}

// WriteTreeFiles writes every file of tree under root, blob bytes verbatim: no smudge
// filter, no end-of-line or encoding conversion, no ident expansion (checkout-index
// would apply them all, and the blobs of a snapshot already hold the bytes that were
// on disk). Modes and symlinks are kept; a gitlink becomes an empty directory as in
// a checkout. A file already at a file's place is replaced (ResetTo's checkout wrote
// it). Every directory is made one component at a time and confined to root
// (confine.Root.Join); a component that is a symbolic link is refused, so a link
// written earlier (by this call or before it) is never followed.
func (r *Repository) WriteTreeFiles(ctx context.Context, tree *CheckedTree, root confine.Root) error {
	w := &treeWriter{root: root, made: map[string]bool{"": true}}
	for _, d := range tree.Dirs {
		if err := w.dir(d); err != nil {
			return err
		}
	}
	var blobs []TreeItem
	var specs []string
	for _, it := range tree.Items {
		if it.Type != "blob" {
			if err := w.dir(it.Path); err != nil {
				return err
			}
			continue
		}
		blobs = append(blobs, it)
		specs = append(specs, it.ID)
	}
	var werr error
	err := catFile(ctx, r, specs, func(i int, o batchObject) {
		if werr != nil {
			return
		}
		it := blobs[i]
		if o.missing || o.typ != "blob" {
			werr = fmt.Errorf("%s: blob %s: %w", it.Path, it.ID, ErrNotFoundObject)
			return
		}
		werr = w.file(it.Path, it.Mode, o.data)
	})
	if err != nil {
		return err
	}
	return werr
}

// treeWriter writes a checked tree's files under root; made are the directories
// (relative, slash-separated) it has made or checked.
type treeWriter struct {
	root confine.Root
	made map[string]bool
}

// dir makes the directory rel under root, parents first, refusing a component that
// is a symbolic link or not a directory, and one that resolves outside root.
func (w *treeWriter) dir(rel string) error {
	if w.made[rel] {
		return nil
	}
	parent, name := splitPath(rel)
	if err := w.dir(parent); err != nil {
		return err
	}
	if err := confine.EntryName(name); err != nil {
		return err
	}
	p := filepath.Join(w.root.Dir(), filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
	case err != nil:
		return err
	case fi.Mode()&os.ModeSymlink != 0:
		return &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf("%s is a symbolic link: nothing is written through it", p), Err: confine.ErrOutside}
	case !fi.IsDir():
		return &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf("%s is a file where the tree has a directory: nothing is written there", p), Err: confine.ErrOutside}
	}
	if _, err := w.root.Below(p); err != nil {
		return err
	}
	w.made[rel] = true
	return nil
}

// file writes one blob at rel: its directory made by dir, the name itself never
// resolved (a symbolic link there is replaced, not followed; a directory refused).
func (w *treeWriter) file(rel, mode string, data []byte) error {
	parent, name := splitPath(rel)
	if err := w.dir(parent); err != nil {
		return err
	}
	if err := confine.EntryName(name); err != nil {
		return err
	}
	p := filepath.Join(w.root.Dir(), filepath.FromSlash(rel))
	if fi, err := os.Lstat(p); err == nil {
		if fi.IsDir() {
			return &fault.Error{Kind: fault.ErrRefused, Msg: fmt.Sprintf("%s is a directory where the tree has a file: nothing is written there", p), Err: confine.ErrOutside}
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	switch mode {
	case "120000":
		return os.Symlink(string(data), p)
	case "100755":
		return writeWithMode(p, data, 0o777)
	default:
		return writeWithMode(p, data, 0o666)
	}
}

// splitPath splits a slash-separated relative path into its directory ("" at the
// top) and its last name.
func splitPath(rel string) (string, string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

// writeWithMode creates the file with perm filtered by the umask, as git does; an
// existing file (or a link planted meanwhile: O_EXCL fails on a link) is never
// opened.
func writeWithMode(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
