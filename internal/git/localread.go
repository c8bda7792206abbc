package git

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Object reads in process (issue 34): where go-git can open the repository, every
// object a `cat-file --batch` would be asked for is read from its loose file when it
// has one (readLoose: whole, its hash checked), and git is asked only for the others,
// in one batch, the answers handed on in the order of the questions. The ledger's
// objects and a snapshot's are loose until a gc packs them, so a command that reads
// a few runs or a snapshot starts no reader process at all; a packed object costs
// what it cost before (one batch for all of them).
//
// Every answer is the one git gives: an object is taken from its loose file only when
// the file inflates whole to the object of that id; a loose file that does not (empty,
// torn, another object's bytes), an object that is not loose, a spec that is not a
// full id or a plain "<commit>:<path>" through loose trees all go to git, which
// answers as before (missing, or an error that fails the read).

// localRefsMost is the most refs RefFiles and RefMessages list and read in process.
// Up to a thousand runs that was faster than git's for-each-ref feeding cat-file,
// loose and packed (where git reads the objects either way, and listing the refs from
// the files saves its for-each-ref); over a few thousand packed runs git's two
// processes, streaming into each other, were as fast or faster (BenchmarkLocalReads).
// A benchmark may change it.
var localRefsMost = 1024

// localSpec is what resolve found for one spec.
type localSpec struct {
	id      string // the loose object that answers it, or ""
	missing bool   // the path certainly names nothing: git would answer missing
}

// looseTrees caches, for one read, the trees "<rev>:<path>" specs start from and the
// loose trees' contents they walk through: a ref's documents share them.
type looseTrees struct {
	l     looseWriter
	roots map[string]root   // rev id -> the tree its paths start from
	trees map[string][]byte // tree id -> content (nil when not a loose tree)
}

// root is where "<rev>:<path>" starts: the tree of a loose commit, a loose tree
// itself, nothing for a loose blob (git answers missing), else git's to find. Of a
// loose commit it keeps the first parent too, for "<rev>~<n>" (ancestor).
type root struct {
	tree    string
	missing bool
	commit  bool
	parent  string // the commit's first parent, "" for none
}

func (c *looseTrees) root(id string) root {
	if t, ok := c.roots[id]; ok {
		return t
	}
	var t root
	if typ, data, ok := c.l.readLoose(id); ok {
		switch typ {
		case "commit":
			if info, err := parseCommit(id, data); err == nil {
				t.tree, t.commit = info.Tree.String(), true
				if len(info.Parents) > 0 {
					t.parent = info.Parents[0].String()
				}
			}
		case "tree":
			t.tree = id
			c.trees[id] = data
		case "blob":
			t.missing = true
		}
	}
	c.roots[id] = t
	return t
}

// ancestor is the back-th first-parent ancestor of commit id ("<id>~<back>") when
// every commit on the way is loose, else "" (git answers).
func (c *looseTrees) ancestor(id, back string) string {
	n, err := strconv.Atoi(back)
	if err != nil || n < 0 {
		return ""
	}
	for range n {
		if !isHexID(id) {
			return ""
		}
		r := c.root(id) // read once per call, with the tree the specs start from
		if !r.commit || r.parent == "" {
			return ""
		}
		id = r.parent
	}
	return id
}

func (c *looseTrees) tree(id string) []byte {
	if t, ok := c.trees[id]; ok {
		return t
	}
	var t []byte
	if typ, data, ok := c.l.readLoose(id); ok && typ == "tree" {
		t = data // not nil: an empty tree is an empty slice
	}
	c.trees[id] = t
	return t
}

// resolve finds the loose object that answers spec (a full id, or
// "<rev>:<path>" through a loose commit or tree and loose trees, the path plain: no empty,
// "." or ".." part, which git reads relative to a working directory), or that the
// path certainly names nothing. The zero localSpec: git must answer.
func (c *looseTrees) resolve(spec string) localSpec {
	commit, path, isPath := strings.Cut(spec, ":")
	if !isPath {
		if isHexID(spec) && c.l.exists(spec) {
			return localSpec{id: spec}
		}
		return localSpec{}
	}
	if base, back, ok := strings.Cut(commit, "~"); ok {
		commit = c.ancestor(base, back)
	}
	if !isHexID(commit) {
		return localSpec{}
	}
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return localSpec{}
		}
	}
	start := c.root(commit)
	if start.missing {
		return localSpec{missing: true}
	}
	id := start.tree
	if id == "" {
		return localSpec{}
	}
	for i, p := range parts {
		tree := c.tree(id)
		if tree == nil {
			return localSpec{}
		}
		mode, entry, found, ok := treeEntry(tree, p)
		switch {
		case !ok:
			return localSpec{} // git's answer
		case !found:
			return localSpec{missing: true}
		case i < len(parts)-1 && mode != "40000":
			return localSpec{} // a file on the way: git's answer
		}
		id = entry
	}
	if !c.l.exists(id) {
		return localSpec{}
	}
	return localSpec{id: id}
}

// mayReplace reports whether git might answer a read of an object with another
// object: a replace ref (under refs/replace/, or the base GIT_REPLACE_REF_BASE names)
// exists, and cat-file and for-each-ref honour it. Then every read is git's.
func (r *Repository) mayReplace() bool {
	if _, set := os.LookupEnv("GIT_REPLACE_REF_BASE"); set {
		return true
	}
	return !r.noRefsUnder("refs/replace")
}

// exists reports whether id has a loose file (it may still not read whole).
func (l looseWriter) exists(id string) bool {
	fi, err := os.Lstat(l.path(id))
	return err == nil && fi.Mode().IsRegular()
}

// catFileLocal answers specs as catFileGit does, in order, reading loose objects in
// process and asking git (one batch) only for the rest: at every count measured a
// loose object was read faster in Go than through git (BenchmarkLocalReads), and one
// that is not loose costs a failed Lstat before git is asked. A loose file that resolved
// but does not read whole is asked of git alone, when its turn comes.
func (g *goGitStore) catFileLocal(ctx context.Context, r *Repository, specs []string, fn func(i int, o batchObject)) error {
	if r.mayReplace() {
		return catFileGit(ctx, r, specs, fn)
	}
	c := &looseTrees{l: g.loose(), roots: map[string]root{}, trees: map[string][]byte{}}
	local := make([]localSpec, len(specs))
	var rest []string
	var at []int
	for i, s := range specs {
		local[i] = c.resolve(s)
		if local[i].id == "" && !local[i].missing {
			rest = append(rest, s)
			at = append(at, i)
		}
	}
	next := 0 // the next spec to answer
	var err error
	// answer answers the specs from next up to end (exclusive), all in process.
	answer := func(end int) {
		for ; next < end && err == nil; next++ {
			if err = ctx.Err(); err != nil {
				break
			}
			ls := local[next]
			if ls.missing {
				fn(next, batchObject{missing: true})
				continue
			}
			typ, data, ok := c.l.readLoose(ls.id)
			if !ok {
				// Torn, or gone since (a gc packed and pruned it): git's answer.
				i := next
				err = catFileGit(ctx, r, specs[i:i+1], func(_ int, o batchObject) { fn(i, o) })
				continue
			}
			fn(next, batchObject{id: ls.id, typ: typ, data: data})
		}
	}
	answered := 0 // of rest
	if len(rest) > 0 {
		gitErr := catFileGit(ctx, r, rest, func(k int, o batchObject) {
			answered = k + 1
			answer(at[k])
			if err == nil {
				fn(at[k], o)
				next = at[k] + 1
			}
		})
		if err == nil && gitErr != nil {
			// git answered as far as the spec it failed on: so do we.
			if answered < len(rest) {
				answer(at[answered])
			}
			err = gitErr
		}
	}
	answer(len(specs))
	return err
}

// refFilesLocal is RefFiles in process: the refs listed from the files
// (listRefsLocal), their files read through catFile. done is false, and nothing was
// called, when git must list them: go-git cannot open the repository, the refs are
// not certain from the files, or there are more than localRefsMost.
func (r *Repository) refFilesLocal(ctx context.Context, prefix string, paths []string, fn func(ref Ref, blobs []Blob)) (done bool, err error) {
	if len(paths) == 0 {
		return false, nil
	}
	refs, ok := r.listRefsLocal([]string{prefix})
	if !ok || len(refs) > localRefsMost {
		return false, nil
	}
	specs := make([]string, 0, len(refs)*len(paths))
	for _, ref := range refs {
		for _, p := range paths {
			specs = append(specs, ref.ID+":"+p)
		}
	}
	blobs := make([]Blob, len(paths))
	err = catFile(ctx, r, specs, func(i int, o batchObject) {
		blobs[i%len(paths)] = o.blob(specs[i])
		if i%len(paths) == len(paths)-1 {
			fn(refs[i/len(paths)], blobs)
			blobs = make([]Blob, len(paths))
		}
	})
	return true, err
}

// refMessagesLocal is RefMessages in process, when the refs are certain from the
// files (listRefsLocal), there are at most localRefsMost, and every object they point
// to is whole and loose: anything else (a missing object, which for-each-ref dies on,
// among them) is git's to answer, and false is returned before fn is called.
func (r *Repository) refMessagesLocal(prefix string, fn func(RefMessage)) bool {
	g, ok := r.objects.(*goGitStore)
	if !ok || r.mayReplace() {
		return false
	}
	refs, ok := r.listRefsLocal([]string{prefix})
	if !ok || len(refs) > localRefsMost {
		return false
	}
	l := g.loose()
	out := make([]RefMessage, len(refs))
	for i, ref := range refs {
		typ, data, ok := l.readLoose(ref.ID)
		if !ok {
			return false
		}
		out[i] = RefMessage{Ref: ref, Type: typ}
		if typ == "commit" {
			if out[i].Tree, out[i].Message, ok = commitMessage(data); !ok {
				return false // for-each-ref's to parse, or refuse
			}
		}
	}
	for _, m := range out {
		fn(m)
	}
	return true
}

// commitMessage is the tree and message for-each-ref prints for a commit
// (%(tree), %(contents)), where that is certain: a commit whose first line names its
// tree, with a message that is not empty, does not start with a blank line (git skips
// those) and holds no NUL (git stops at one). ok is false for anything else.
func commitMessage(data []byte) (tree string, msg []byte, ok bool) {
	headers, msg, ok := bytes.Cut(data, []byte("\n\n"))
	if !ok || len(msg) == 0 || msg[0] == '\n' || bytes.IndexByte(data, 0) >= 0 {
		return "", nil, false
	}
	first, _, _ := bytes.Cut(headers, []byte("\n"))
	t, ok := bytes.CutPrefix(first, []byte("tree "))
	if !ok || !isHexID(string(t)) {
		return "", nil, false
	}
	return string(t), slices.Clip(msg), true
}
