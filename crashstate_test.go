package gitatlas_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// The crash-state test (docs/contract.md §11.12, issue 30): a write path's system calls are recorded
// with strace, replayed on a model of the file system that knows what each fsync made
// durable, and
//   - the order rules are checked on every run: no object named before its bytes are
//     flushed; no ref moved before the names of the objects written so far are
//     durable; every moved ref's directory flushed before the command exits; nothing
//     destroyed in a worktree before the refs and objects written so far are durable;
//     every file written into a worktree that existed (a reset's checkout) durable
//     before the command exits; every copy a new worktree's bootstrap made from
//     .worktreeinclude durable, bytes and name, before the record that names it
//     is, and before the command exits;
//   - crash states are built at fsync boundaries and before each destructive step
//     (only what was synced; that plus every deletion; a prefix of all operations,
//     every system call up to that point applied whole and none after; at the end,
//     everything with the unsynced new files empty), materialised in place from the
//     pre-command tree, and the invariants checked: refs under refs/atlas/ resolve
//     to readable objects, each ledger is at its old tip, its new tip or one in
//     between, every worktree that existed is byte-identical or held whole by a
//     recovery snapshot, `audit` and `resume --plan` end with a documented exit code,
//     and the state after a command that reported success holds every ref it set
//     (done means durable). The short run also checks a few prefix states
//     (prefixStates).
//
// The short run covers remove, resume (in-place reset) and start at the two extreme
// states; the sweeps build tag covers every path (a worktree add with .worktreeinclude
// copies among them) at boundaries spread evenly over the whole command (at most
// maxStates, plus the end state), so that the twelve paths fit CI's full part.

const maxStates = 16

type crashPath struct {
	name  string
	long  bool
	setup func(t *testing.T, a atlasCLI)
	args  []string
	// argsOf, when set, makes the command line from what setup left (a lease).
	argsOf func(t *testing.T, a atlasCLI) []string
}

func crashPaths() []crashPath {
	dirty := func(t *testing.T, a atlasCLI, run, node string) {
		t.Helper()
		var rec struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(a.must(t, "worktree", "add", run, node), &rec); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(rec.Path, "README"), "edited by the agent\n")
		writeFile(t, filepath.Join(rec.Path, "new", "work.txt"), "untracked work\n")
		for i := range 5 {
			writeFile(t, filepath.Join(rec.Path, "gen", fmt.Sprintf("f%02d.txt", i)), fmt.Sprintf("generated %d\n", i))
		}
	}
	graph := func(t *testing.T, a atlasCLI) {
		a.must(t, "start", "--id", "g", "--graph", "--gas", "10")
		a.must(t, "job", "add", "g", "a", "--scope", "src/**")
	}
	claim := func(t *testing.T, a atlasCLI, ttl string) string {
		var c struct {
			Lease string `json:"lease"`
		}
		if err := json.Unmarshal(a.must(t, "job", "claim", "g", "--job", "a", "--holder", "w1", "--ttl", ttl), &c); err != nil {
			t.Fatal(err)
		}
		return c.Lease
	}
	return []crashPath{
		{name: "start", args: []string{"start", "--id", "s", "--stages", "code"}},
		{name: "remove", setup: func(t *testing.T, a atlasCLI) {
			a.must(t, "start", "--id", "s", "--stages", "code,keep")
			dirty(t, a, "s", "code")
			// Another worktree stays: .git/worktrees/ is kept, so only the removal's
			// own flush of it makes the registration's removal durable.
			a.must(t, "worktree", "add", "s", "keep")
		}, args: []string{"worktree", "remove", "s", "code"}},
		{name: "resume", setup: func(t *testing.T, a atlasCLI) {
			graph(t, a)
			lease := claim(t, a, "1ms")
			var rec struct {
				Path string `json:"path"`
			}
			if err := json.Unmarshal(a.must(t, "worktree", "add", "g", "a", "--lease", lease), &rec); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(rec.Path, "src", "work.go"), "package src // the agent's work\n")
			writeFile(t, filepath.Join(rec.Path, "README"), "edited by the agent\n")
		}, args: []string{"resume", "g"}},
		{name: "transition", long: true, setup: func(t *testing.T, a atlasCLI) {
			a.must(t, "start", "--id", "s", "--stages", "code")
		}, args: []string{"transition", "s", "code", "dispatched"}},
		{name: "job-claim", long: true, setup: graph, args: []string{"job", "claim", "g", "--job", "a", "--holder", "w1"}},
		{name: "worktree-add", long: true, setup: func(t *testing.T, a atlasCLI) {
			a.must(t, "start", "--id", "s", "--stages", "code")
		}, args: []string{"worktree", "add", "s", "code"}},
		// The bootstrap's copies of the user's ignored files (docs/contract.md §15):
		// beside tracked files, in a directory of their own, and last (in git's order)
		// two directories down, where no later copy flushes the directories made for it.
		{name: "worktree-add-include", long: true, setup: func(t *testing.T, a atlasCLI) {
			gi, err := os.ReadFile(filepath.Join(a.repo, ".gitignore"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(a.repo, ".gitignore"), string(gi)+"secret.env\nconf/\nvar/\n")
			writeFile(t, filepath.Join(a.repo, ".worktreeinclude"), "secret.env\nconf/\nvar/\n")
			mustGit(t, a.repo, a.env, "", "add", ".gitignore", ".worktreeinclude")
			mustGit(t, a.repo, a.env, "", "commit", "-qm", "include the user's secrets")
			writeFile(t, filepath.Join(a.repo, "secret.env"), "API_KEY=hunter2\n")
			writeFile(t, filepath.Join(a.repo, "conf", "local.env"), "PORT=1\n")
			writeFile(t, filepath.Join(a.repo, "var", "cache", "db.env"), "DB=x\n")
			a.must(t, "start", "--id", "s", "--stages", "code")
		}, args: []string{"worktree", "add", "s", "code"}},
		{name: "gc", long: true, setup: func(t *testing.T, a atlasCLI) {
			a.must(t, "start", "--id", "f", "--stages", "code")
			dirty(t, a, "f", "code")
			a.must(t, "finish", "f", "--status", "completed")
		}, args: []string{"gc", "--before", "0s", "--apply"}},
		{name: "hooks-install", long: true, setup: func(t *testing.T, a atlasCLI) {
			writeFile(t, filepath.Join(a.repo, ".git", "hooks", "post-checkout"), "#!/bin/sh\necho the user's hook\n")
		}, args: []string{"hooks", "install"}},
		{name: "agent-install", long: true, args: []string{"agent", "install", "claude"}},
		{name: "job-done", long: true, setup: graph, argsOf: func(t *testing.T, a atlasCLI) []string {
			return []string{"job", "done", "g", "a", "--lease", claim(t, a, "1h"), "--status", "ok"}
		}},
		{name: "trust", long: true, setup: func(t *testing.T, a atlasCLI) {
			a.must(t, "start", "--id", "s", "--stages", "code")
		}, argsOf: func(t *testing.T, a atlasCLI) []string {
			var list struct {
				Runs []struct {
					Digest string `json:"digest"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(a.must(t, "trust", "--list", "s"), &list); err != nil || len(list.Runs) != 1 {
				t.Fatalf("trust --list s: %+v, %v", list, err)
			}
			return []string{"trust", "s", "--yes", "--digest", list.Runs[0].Digest}
		}},
	}
}

func TestCrashStates(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed: the crash-state test records system calls with it (.ci/run installs it)")
	}
	for _, p := range crashPaths() {
		if p.long && !testenv.Long() {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			runCrashPath(t, p)
		})
	}
}

// crashFixture is newAtlasRepo with about 100 tracked files.
func crashFixture(t *testing.T) atlasCLI {
	a := newAtlasRepo(t)
	for i := range 96 {
		writeFile(t, filepath.Join(a.repo, "src", fmt.Sprintf("d%d", i%8), fmt.Sprintf("file%02d.go", i)), fmt.Sprintf("package d // %d\n", i))
	}
	git := func(args ...string) { mustGit(t, a.repo, a.env, "", args...) }
	git("add", "src")
	git("commit", "-qm", "a hundred files")
	git("stash", "-q", "--include-untracked") // the fixture's dirty checkout is not what is tested
	return a
}

func runCrashPath(t *testing.T, p crashPath) {
	a := crashFixture(t)
	if p.setup != nil {
		p.setup(t, a)
	}
	if p.argsOf != nil {
		p.args = p.argsOf(t, a)
	}
	root := filepath.Dir(a.repo)
	pre := loadTree(t, root)
	preRefs := atlasRefs(t, a)
	worktrees := managedWorktrees(pre, a.repo)

	log := filepath.Join(t.TempDir(), "strace.log")
	args := append([]string{"-f", "-qq", "-o", log, "-y", "-xx", "-s", "4194304", "-e", "trace=" + tracedCalls,
		"--", a.bin, "-C", a.repo, "--json"}, p.args...)
	c := exec.Command("strace", args...)
	c.Env = a.env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("git atlas %s: %v\n%s", strings.Join(p.args, " "), err, stderr.String())
	}
	postRefs := atlasRefs(t, a)
	chains := map[string]map[string]bool{}
	for name, tip := range postRefs {
		chains[name] = firstParentsOf(t, a, tip)
	}

	sim := newFsim(root, pre, worktrees)
	sim.keepStates = testenv.Long()
	ops, err := parseTrace(log)
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		sim.step = i
		sim.apply(op)
	}
	sim.finish()
	for _, v := range sim.violations {
		t.Errorf("order rule broken: %s", v)
	}
	states := sim.states
	if !testenv.Long() {
		// The two extreme states: the last synced-only state and the end state with
		// every unsynced new file empty.
		var ends []crashState
		for _, state := range slices.Backward(states) {
			if state.kind == "synced" {
				ends = append(ends, state)
				break
			}
		}
		states = append(ends, states[len(states)-1])
	} else if len(states) > maxStates {
		var picked []crashState
		for i := range maxStates {
			picked = append(picked, states[i*len(states)/maxStates])
		}
		states = append(picked, states[len(states)-1])
	}
	states = append(states, prefixStates(root, pre, worktrees, ops, sim)...)
	t.Logf("%d system calls, %d fsync boundaries, %d destructive steps, %d states checked", len(ops), sim.fsyncs, len(sim.destroyAt), len(states))
	for i, st := range states {
		materialize(t, root, st.tree)
		full := st.full || i%8 == 0 || i == len(states)-1 || !testenv.Long()
		if problems := checkState(t, a, st, preRefs, postRefs, chains, sim.written, pre, worktrees, full); len(problems) > 0 {
			t.Errorf("crash state %s (after %d fsyncs): %s", st.kind, st.at, strings.Join(problems, "; "))
		}
	}
	materialize(t, root, sim.current())
}

const tracedCalls = "open,openat,creat,write,pwrite64,ftruncate,rename,renameat,renameat2,link,linkat," +
	"unlink,unlinkat,mkdir,mkdirat,rmdir,symlink,symlinkat,fsync,fdatasync,syncfs,sync,chdir,fchdir,clone,clone3,fork,vfork," +
	"copy_file_range,ioctl"

// ---- the file-system model ----

type node struct {
	dir       bool
	entries   map[string]*node // current names (dir)
	durable   map[string]*node // names as of the directory's last fsync
	data      []byte
	synced    []byte
	hasSynced bool
	link      string // symlink target
	mode      os.FileMode
}

type entry struct {
	data []byte
	link string
	dir  bool
	mode os.FileMode
}

type crashState struct {
	kind string // synced, deleted, end, prefix
	at   int
	tree map[string]entry
	last bool // the state after the whole command
	full bool // audit and resume --plan are run on it in the long run too
}

type fsim struct {
	root       string
	top        *node
	worktrees  []string
	fsyncs     int
	violations []string
	states     []crashState
	objects    []string        // object paths named so far
	refs       []string        // ref paths moved so far
	written    map[string]bool // "<ref> <id>" for every value a ref was given
	destroyed  map[string]bool
	// keepStates: every fsync and the first destructive step keep their crash states
	// (the long run picks among them); otherwise only finish's are kept, all the short
	// run checks, and a replay (prefixStates) keeps none.
	keepStates bool
	step       int   // the index of the system call being applied
	fsyncAt    []int // prefix lengths (calls applied) right after each fsync
	destroyAt  []int // prefix lengths right after each destructive step

	// unregistered are the linked worktrees' registrations (.git/worktrees/<id>)
	// removed: gone for good once the command reports success.
	unregistered []string
	// wtWritten are the files written into a worktree that existed (a reset's
	// checkout): durable, bytes and name, once the command reports success.
	wtWritten []string
	// included are the copies a bootstrap made from .worktreeinclude, as its record
	// names them: durable, bytes and name, before the record is, and at exit.
	included []string
}

func loadTree(t *testing.T, root string) map[string]entry {
	t.Helper()
	tree := map[string]entry{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree[rel] = entry{link: l}
		case fi.IsDir():
			tree[rel] = entry{dir: true, mode: fi.Mode().Perm()}
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tree[rel] = entry{data: data, mode: fi.Mode().Perm()}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func newFsim(root string, pre map[string]entry, worktrees []string) *fsim {
	s := &fsim{root: root, top: &node{dir: true, entries: map[string]*node{}, durable: map[string]*node{}},
		worktrees: worktrees, destroyed: map[string]bool{}, written: map[string]bool{}}
	names := make([]string, 0, len(pre))
	for p := range pre {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		e := pre[p]
		parent := s.walk(filepath.Dir(p), false)
		n := &node{dir: e.dir, data: e.data, synced: e.data, hasSynced: true, link: e.link, mode: e.mode}
		if e.dir {
			n.entries, n.durable = map[string]*node{}, map[string]*node{}
		}
		parent.entries[filepath.Base(p)] = n
		parent.durable[filepath.Base(p)] = n
	}
	return s
}

// walk finds the directory at rel (relative to root, "." for root); nil when absent.
func (s *fsim) walk(rel string, _ bool) *node {
	n := s.top
	if rel == "." || rel == "" {
		return n
	}
	for part := range strings.SplitSeq(rel, string(filepath.Separator)) {
		n = n.entries[part]
		if n == nil || !n.dir {
			return nil
		}
	}
	return n
}

// rel maps an absolute path into the model ("" when outside it).
func (s *fsim) rel(abs string) string {
	abs = strings.TrimSuffix(abs, " (deleted)")
	r, err := filepath.Rel(s.root, filepath.Clean(abs))
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return ""
	}
	return r
}

func (s *fsim) lookup(rel string) (*node, string, *node) {
	parent := s.walk(filepath.Dir(rel), false)
	if parent == nil {
		return nil, "", nil
	}
	name := filepath.Base(rel)
	return parent, name, parent.entries[name]
}

type op struct {
	call  string
	paths []string // absolute
	fdArg string   // the path of the fd argument (write, fsync, ftruncate)
	data  []byte
	flags string
	ret   int64
	off   int64
}

func isObject(rel string) bool {
	d := filepath.Base(filepath.Dir(rel))
	return strings.Contains(rel, "/objects/") && (len(d) == 2 && !strings.HasPrefix(filepath.Base(rel), "tmp_") ||
		d == "pack" && (strings.HasSuffix(rel, ".pack") || strings.HasSuffix(rel, ".idx")))
}

// isRef: a ref of the common dir, packed-refs, or what a linked worktree's own git dir
// (.git/worktrees/<id>/) holds of the kind: its HEAD, its index and its own refs.
func isRef(rel string) bool {
	if strings.HasSuffix(rel, ".lock") {
		return false
	}
	if strings.Contains(rel, "/.git/refs/") || strings.HasSuffix(rel, "/.git/packed-refs") {
		return true
	}
	_, own, ok := strings.Cut(rel, "/.git/worktrees/")
	if !ok {
		return false
	}
	_, f, ok := strings.Cut(own, "/")
	return ok && (f == "HEAD" || f == "index" || strings.HasPrefix(f, "refs/"))
}

func (s *fsim) inWorktree(rel string) bool {
	for _, w := range s.worktrees {
		if rel == w || strings.HasPrefix(rel, w+"/") {
			return true
		}
	}
	return false
}

// durableVisible reports whether the path rel names n after a crash now.
func (s *fsim) durableVisible(rel string, n *node) bool {
	d := s.top
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		c := d.durable[part]
		if c == nil {
			return false
		}
		if i == len(parts)-1 {
			return c == n
		}
		d = c
	}
	return false
}

func (s *fsim) checkDurableSoFar(what string) {
	for _, o := range s.objects {
		_, _, n := s.lookup(o)
		if n != nil && !s.durableVisible(o, n) {
			s.violations = append(s.violations, fmt.Sprintf("%s before object %s was durable", what, o))
			return
		}
	}
}

func (s *fsim) checkRefsSoFar(what string) {
	for _, r := range s.refs {
		_, _, n := s.lookup(r)
		if n != nil && !s.durableVisible(r, n) {
			s.violations = append(s.violations, fmt.Sprintf("%s before ref %s was durable", what, r))
			return
		}
	}
}

// destroy records a destructive step in a worktree: before each, everything written
// so far must be durable; the crash states just before the first are kept.
func (s *fsim) destroy(rel, what string) {
	if !s.inWorktree(rel) {
		return
	}
	if _, _, n := s.lookup(rel); n == nil {
		return
	}
	if len(s.violations) == 0 {
		s.checkDurableSoFar(what + " " + rel)
		s.checkRefsSoFar(what + " " + rel)
	}
	if len(s.destroyed) == 0 {
		s.snapshot()
	}
	s.destroyed[rel] = true
	if n := len(s.destroyAt); n == 0 || s.destroyAt[n-1] != s.step+1 {
		s.destroyAt = append(s.destroyAt, s.step+1)
	}
}

func (s *fsim) snapshot() {
	if !s.keepStates {
		return
	}
	s.states = append(s.states, crashState{kind: "synced", at: s.fsyncs, tree: s.build(false)},
		crashState{kind: "deleted", at: s.fsyncs, tree: s.build(true)})
}

// build is a crash state: the durable names (with deletions: less every name gone
// now), each file with its flushed bytes, empty if never flushed.
func (s *fsim) build(deletions bool) map[string]entry {
	tree := map[string]entry{}
	var rec func(prefix string, d *node)
	rec = func(prefix string, d *node) {
		for name, c := range d.durable {
			if deletions && d.entries[name] == nil {
				continue
			}
			p := filepath.Join(prefix, name)
			tree[p] = entryOf(c)
			if c.dir {
				rec(p, c)
			}
		}
	}
	rec("", s.top)
	return tree
}

// current is the model's view now, with unsynced file contents empty.
func (s *fsim) current() map[string]entry {
	tree := map[string]entry{}
	var rec func(prefix string, d *node)
	rec = func(prefix string, d *node) {
		for name, c := range d.entries {
			p := filepath.Join(prefix, name)
			tree[p] = entryOf(c)
			if c.dir {
				rec(p, c)
			}
		}
	}
	rec("", s.top)
	return tree
}

func entryOf(c *node) entry {
	if c.dir {
		return entry{dir: true, mode: c.mode}
	}
	if c.link != "" {
		return entry{link: c.link}
	}
	var data []byte
	if c.hasSynced {
		data = c.synced
	}
	return entry{data: data, mode: c.mode}
}

func (s *fsim) apply(o op) {
	if o.ret < 0 {
		return
	}
	switch o.call {
	case "open", "openat", "creat":
		rel := s.rel(o.fdArg)
		if rel == "" {
			return
		}
		parent, name, n := s.lookup(rel)
		if parent == nil {
			return
		}
		creat := o.call == "creat" || strings.Contains(o.flags, "O_CREAT")
		if n == nil && creat {
			mode := os.FileMode(0o644)
			parent.entries[name] = &node{mode: mode}
		} else if n != nil && !n.dir && (o.call == "creat" || strings.Contains(o.flags, "O_TRUNC")) {
			s.destroy(rel, "truncate")
			n.data = nil
		}
	case "write", "pwrite64":
		rel := s.rel(o.fdArg)
		_, _, n := s.lookup(rel)
		if n == nil || n.dir {
			return
		}
		if s.inWorktree(rel) && !slices.Contains(s.wtWritten, rel) {
			s.wtWritten = append(s.wtWritten, rel)
		}
		d := o.data
		if int64(len(d)) > o.ret {
			d = d[:o.ret]
		}
		if o.call == "pwrite64" {
			end := o.off + int64(len(d))
			if int64(len(n.data)) < end {
				n.data = append(n.data, make([]byte, end-int64(len(n.data)))...)
			}
			copy(n.data[o.off:], d)
		} else {
			n.data = append(append([]byte(nil), n.data...), d...)
		}
	case "copy_file_range", "ioctl":
		// A copy in the kernel (Go's io.Copy between files; a FICLONE reflink): the
		// bytes of the file at paths[0] go to the one at fdArg, from the offset both
		// are at (a copy into a new file, from the start of both).
		_, _, n := s.lookup(s.rel(o.fdArg))
		_, _, from := s.lookup(s.rel(o.paths[0]))
		if n == nil || n.dir || from == nil || from.dir {
			return
		}
		if s.inWorktree(s.rel(o.fdArg)) && !slices.Contains(s.wtWritten, s.rel(o.fdArg)) {
			s.wtWritten = append(s.wtWritten, s.rel(o.fdArg))
		}
		if o.call == "ioctl" {
			n.data = append([]byte(nil), from.data...)
			return
		}
		at := min(len(n.data), len(from.data))
		end := min(at+int(o.ret), len(from.data))
		n.data = append(append([]byte(nil), n.data...), from.data[at:end]...)
	case "ftruncate":
		_, _, n := s.lookup(s.rel(o.fdArg))
		if n != nil && !n.dir && o.off < int64(len(n.data)) {
			n.data = append([]byte(nil), n.data[:o.off]...)
		}
	case "rename", "renameat", "renameat2", "link", "linkat":
		from, to := s.rel(o.paths[0]), s.rel(o.paths[1])
		fp, fname, n := s.lookup(from)
		tp, tname, _ := s.lookup(to)
		if n == nil || tp == nil {
			return
		}
		if isObject(to) {
			if !n.dir && (!n.hasSynced || !bytes.Equal(n.synced, n.data)) {
				s.violations = append(s.violations, fmt.Sprintf("object %s named before its bytes were flushed", to))
			}
			s.objects = append(s.objects, to)
		}
		if wt, ok := includedRecordOf(to); ok {
			for _, c := range includedCopies(n.data) {
				s.included = append(s.included, filepath.Join(wt, c))
			}
			s.checkIncluded("the record " + to + " of the copies named")
		}
		if isRef(to) {
			s.checkDurableSoFar("ref " + to + " moved")
			s.refs = append(s.refs, to)
			if _, name, ok := strings.Cut(to, "/.git/"); ok {
				s.written[name+" "+strings.TrimSpace(string(n.data))] = true
			}
		}
		if strings.HasPrefix(o.call, "rename") {
			s.destroy(from, "rename away")
			delete(fp.entries, fname)
		}
		tp.entries[tname] = n
	case "unlink", "unlinkat", "rmdir":
		rel := s.rel(o.paths[0])
		parent, name, n := s.lookup(rel)
		if n == nil {
			return
		}
		s.destroy(rel, "delete")
		delete(parent.entries, name)
		if isRegistration(rel) {
			s.unregistered = append(s.unregistered, rel)
		}
	case "mkdir", "mkdirat":
		parent, name, n := s.lookup(s.rel(o.paths[0]))
		if parent != nil && n == nil {
			parent.entries[name] = &node{dir: true, entries: map[string]*node{}, durable: map[string]*node{}, mode: 0o755}
		}
	case "symlink", "symlinkat":
		parent, name, n := s.lookup(s.rel(o.paths[1]))
		if parent != nil && n == nil {
			parent.entries[name] = &node{link: o.paths[0], hasSynced: true}
		}
	case "fsync", "fdatasync":
		_, _, n := s.lookup(s.rel(o.fdArg))
		if n == nil {
			return
		}
		if n.dir {
			n.durable = make(map[string]*node, len(n.entries))
			maps.Copy(n.durable, n.entries)
		} else {
			n.synced, n.hasSynced = append([]byte(nil), n.data...), true
		}
		s.fsyncs++
		s.fsyncAt = append(s.fsyncAt, s.step+1)
		s.snapshot()
	case "syncfs", "sync":
		var rec func(d *node)
		rec = func(d *node) {
			if !d.dir {
				d.synced, d.hasSynced = append([]byte(nil), d.data...), true
				return
			}
			d.durable = make(map[string]*node, len(d.entries))
			for k, v := range d.entries {
				d.durable[k] = v
				rec(v)
			}
		}
		rec(s.top)
		s.fsyncs++
		s.fsyncAt = append(s.fsyncAt, s.step+1)
		s.snapshot()
	}
}

// prefix is the state after a crash that kept every operation so far and none after:
// the current names, each file with all the bytes written to it.
func (s *fsim) prefix() map[string]entry {
	tree := map[string]entry{}
	var rec func(prefix string, d *node)
	rec = func(prefix string, d *node) {
		for name, c := range d.entries {
			p := filepath.Join(prefix, name)
			switch {
			case c.dir:
				tree[p] = entry{dir: true, mode: c.mode}
				rec(p, c)
			case c.link != "":
				tree[p] = entry{link: c.link}
			default:
				tree[p] = entry{data: c.data, mode: c.mode}
			}
		}
	}
	rec("", s.top)
	return tree
}

// maxPrefixes is how many prefix states the long run adds to the short run's (at most
// five per path), spread evenly over the fsync boundaries and destructive steps.
const maxPrefixes = 3

// prefixStates are the crash states that keep a prefix of all operations: right after
// an fsync, and right after a destructive step (what must be there to restore the
// worktree from then on: a kill at that moment leaves the same). The short run takes
// the prefixes that end with the first, middle and last destructive step and those at
// a third and two thirds of the fsync boundaries; the long run adds maxPrefixes spread
// evenly over all of those points. The model is replayed to build them.
func prefixStates(root string, pre map[string]entry, worktrees []string, ops []op, sim *fsim) []crashState {
	want := map[int]bool{}
	pick := func(at []int, fracs ...float64) {
		for _, f := range fracs {
			if len(at) > 0 {
				want[at[min(int(f*float64(len(at))), len(at)-1)]] = true
			}
		}
	}
	pick(sim.destroyAt, 0, 0.5, 1)
	pick(sim.fsyncAt, 1.0/3, 2.0/3)
	short := maps.Clone(want)
	if testenv.Long() {
		all := append(append([]int(nil), sim.destroyAt...), sim.fsyncAt...)
		sort.Ints(all)
		for i := range maxPrefixes {
			pick(all, (float64(i)+0.5)/maxPrefixes)
		}
	}
	ks := make([]int, 0, len(want))
	for k := range want {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var out []crashState
	replay := newFsim(root, pre, worktrees)
	next := 0
	for i := 0; i <= len(ops) && next < len(ks); i++ {
		for next < len(ks) && ks[next] == i {
			out = append(out, crashState{kind: fmt.Sprintf("prefix of %d of %d calls", i, len(ops)), at: replay.fsyncs, tree: replay.prefix(), full: short[i]})
			next++
		}
		if i < len(ops) {
			replay.step = i
			replay.apply(ops[i])
		}
	}
	return out
}

// isRegistration: git's registration of a linked worktree, .git/worktrees/<id>.
func isRegistration(rel string) bool {
	_, id, ok := strings.Cut(rel, "/.git/worktrees/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// includedRecordOf: the local record of the copies a bootstrap made from
// .worktreeinclude into the worktree of a run's node,
// <repo>/.git/atlas/included/<run>/<node>, and that worktree's place (the default
// root, <repo>/.git/atlas/worktrees/<run>/<node>).
func includedRecordOf(rel string) (string, bool) {
	atlas, runNode, ok := strings.Cut(rel, "/.git/atlas/included/")
	if !ok || strings.Count(runNode, "/") != 1 || strings.HasPrefix(filepath.Base(runNode), ".") {
		return "", false
	}
	return filepath.Join(atlas, ".git", "atlas", "worktrees", runNode), true
}

// includedCopies are the worktree-relative paths such a record names: after the
// version field "/2", each path is followed by its bytes' blob id; an older record
// is paths alone.
func includedCopies(data []byte) []string {
	fields := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	if len(fields) == 0 || fields[0] != "/2" {
		return fields
	}
	var out []string
	for i := 1; i+1 < len(fields); i += 2 {
		out = append(out, fields[i])
	}
	return out
}

// checkIncluded: every copy recorded so far has its bytes flushed and its name
// durable (a copy named before its bytes can survive a crash empty, and the next
// bootstrap takes it for the worktree's own).
func (s *fsim) checkIncluded(what string) {
	for _, c := range s.included {
		_, _, n := s.lookup(c)
		if n != nil && (!n.hasSynced || !bytes.Equal(n.synced, n.data) || !s.durableVisible(c, n)) {
			s.violations = append(s.violations, fmt.Sprintf("%s before the copy %s was durable", what, c))
		}
	}
}

// durablyNamed reports whether rel would still be there after a crash now: every
// directory on its way names the next as of its last flush.
func (s *fsim) durablyNamed(rel string) bool {
	d := s.top
	for part := range strings.SplitSeq(rel, "/") {
		if d.durable[part] == nil {
			return false
		}
		d = d.durable[part]
	}
	return true
}

// finish checks that every ref moved, and every worktree registration removed, is
// durable at exit (a registration that a crash brings back names a directory that is
// gone), and adds the end states.
func (s *fsim) finish() {
	s.checkRefsSoFar("exit")
	for _, r := range s.unregistered {
		if s.durablyNamed(r) {
			s.violations = append(s.violations, fmt.Sprintf("exit before the removal of the registration %s was durable", r))
		}
	}
	s.checkIncluded("exit")
	for _, w := range s.wtWritten {
		if _, _, n := s.lookup(w); n != nil && (!n.hasSynced || !bytes.Equal(n.synced, n.data) || !s.durableVisible(w, n)) {
			s.violations = append(s.violations, fmt.Sprintf("exit before the file %s written into a worktree was durable", w))
		}
	}
	s.states = append(s.states, crashState{kind: "synced", at: s.fsyncs, tree: s.build(false), last: true},
		crashState{kind: "end", at: s.fsyncs, tree: s.current(), last: true})
}

// ---- strace output ----

var (
	lineRE = regexp.MustCompile(`^(\d+) +(.*)$`)
	cwdRE  = regexp.MustCompile(`AT_FDCWD<([^>]*)>`)
	callRE = regexp.MustCompile(`^([a-z0-9_]+)\((.*)\) += (-?\d+)(<[^>]*>)?`)
)

func parseTrace(path string) ([]op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pending := map[string]string{}
	cwd := map[string]string{} // by pid: from AT_FDCWD<...>, chdir and fork
	// opened is the file each descriptor number was last opened on, by any process:
	// strace names the files of the descriptors it knows to be ones (-y), not
	// FICLONE's source, which is opened just before by the same process.
	opened := map[string]string{}
	var ops []op
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, rest := m[1], m[2]
		if i := strings.Index(rest, " <unfinished ...>"); i >= 0 {
			pending[pid] = rest[:i]
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			i := strings.Index(rest, " resumed>")
			if i < 0 {
				continue
			}
			rest = pending[pid] + rest[i+len(" resumed>"):]
			delete(pending, pid)
		}
		if m := cwdRE.FindStringSubmatch(rest); m != nil {
			cwd[pid] = unquote(m[1])
		}
		cm := callRE.FindStringSubmatch(rest)
		if cm == nil {
			continue
		}
		o := op{call: cm[1]}
		o.ret, _ = strconv.ParseInt(cm[3], 10, 64)
		abs := func(p string) string {
			if filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(cwd[pid], p)
		}
		if cm[4] != "" {
			o.fdArg = unquote(cm[4][1 : len(cm[4])-1])
		}
		args := splitArgs(cm[2])
		switch o.call {
		case "clone", "clone3", "fork", "vfork":
			if o.ret > 0 {
				cwd[cm[3]] = cwd[pid]
			}
			continue
		case "chdir":
			if o.ret == 0 && len(args) > 0 {
				cwd[pid] = abs(unquote(strings.Trim(args[0], `"`)))
			}
			continue
		case "fchdir":
			if o.ret == 0 && len(args) > 0 {
				cwd[pid] = fdPath(args[0])
			}
			continue
		case "open", "openat", "creat":
			for _, a := range args {
				if strings.HasPrefix(a, "O_") {
					o.flags = a
				}
			}
			if o.ret >= 0 {
				opened[cm[3]] = o.fdArg
			}
		case "copy_file_range": // (fd_in, off_in, fd_out, off_out, len, flags)
			if len(args) < 3 {
				continue
			}
			o.fdArg, o.paths = fdPath(args[2]), []string{fdPath(args[0])}
		case "ioctl": // FICLONE (dest fd, FICLONE, src fd); every other request is no write
			if len(args) < 3 || !strings.HasSuffix(args[1], "FICLONE") { // "BTRFS_IOC_CLONE or FICLONE"
				continue
			}
			o.fdArg, o.paths = fdPath(args[0]), []string{opened[args[2]]}
		case "write", "pwrite64", "fsync", "fdatasync", "ftruncate":
			if len(args) == 0 {
				continue
			}
			o.fdArg = fdPath(args[0])
			if (o.call == "write" || o.call == "pwrite64") && len(args) > 1 {
				o.data = []byte(unquote(strings.TrimSuffix(strings.Trim(args[1], `"`), `"...`)))
			}
			if o.call == "pwrite64" && len(args) > 3 {
				o.off, _ = strconv.ParseInt(args[3], 10, 64)
			}
			if o.call == "ftruncate" && len(args) > 1 {
				o.off, _ = strconv.ParseInt(args[1], 10, 64)
			}
		default:
			o.paths = pathArgs(o.call, args)
			if o.paths == nil {
				continue
			}
			for i := range o.paths {
				if i != 0 || !strings.HasPrefix(o.call, "symlink") {
					o.paths[i] = abs(o.paths[i])
				}
			}
		}
		ops = append(ops, o)
	}
	return ops, sc.Err()
}

// splitArgs splits a call's arguments at top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '<' || c == '{' || c == '[':
			depth++
		case c == '>' || c == '}' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func fdPath(arg string) string {
	i := strings.Index(arg, "<")
	if i < 0 || !strings.HasSuffix(arg, ">") {
		return ""
	}
	return unquote(arg[i+1 : len(arg)-1])
}

// joinAt resolves a (dirfd, "path") pair.
func joinAt(dirfd, p string) string {
	name := unquote(strings.Trim(p, `"`))
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(fdPath(dirfd), name)
}

func pathArgs(call string, a []string) []string {
	switch call {
	case "rename", "link":
		if len(a) >= 2 {
			return []string{unquote(strings.Trim(a[0], `"`)), unquote(strings.Trim(a[1], `"`))}
		}
	case "renameat", "renameat2", "linkat":
		if len(a) >= 4 {
			return []string{joinAt(a[0], a[1]), joinAt(a[2], a[3])}
		}
	case "unlink", "rmdir", "mkdir":
		if len(a) >= 1 {
			return []string{unquote(strings.Trim(a[0], `"`))}
		}
	case "unlinkat", "mkdirat":
		if len(a) >= 2 {
			return []string{joinAt(a[0], a[1])}
		}
	case "symlink":
		if len(a) >= 2 {
			return []string{unquote(strings.Trim(a[0], `"`)), unquote(strings.Trim(a[1], `"`))}
		}
	case "symlinkat":
		if len(a) >= 3 {
			return []string{unquote(strings.Trim(a[0], `"`)), joinAt(a[1], a[2])}
		}
	}
	return nil
}

// unquote decodes strace's -xx strings (\xHH, and the usual C escapes).
func unquote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteByte('x')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '0':
			b.WriteByte(0)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// ---- the invariants ----

func managedWorktrees(pre map[string]entry, repo string) []string {
	var out []string
	base := filepath.Join(filepath.Base(repo), ".git", "atlas", "worktrees")
	for p, e := range pre {
		if e.dir && filepath.Dir(filepath.Dir(p)) == base {
			if _, ok := pre[filepath.Join(p, ".git")]; ok {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

func materialize(t *testing.T, root string, tree map[string]entry) {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(tree))
	for p := range tree {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		e, abs := tree[p], filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.dir:
			err = os.MkdirAll(abs, 0o755)
		case e.link != "":
			err = os.Symlink(e.link, abs)
		default:
			mode := e.mode
			if mode == 0 {
				mode = 0o644
			}
			err = os.WriteFile(abs, e.data, mode|0o200)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func crashGit(a atlasCLI, stdin string, args ...string) (string, string, error) {
	return gitRun(a.repo, a.env, stdin, args...)
}

func atlasRefs(t *testing.T, a atlasCLI) map[string]string {
	out, _, err := crashGit(a, "", "for-each-ref", "--format=%(refname) %(objectname)", "refs/atlas/")
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if n, id, ok := strings.Cut(l, " "); ok {
			refs[n] = id
		}
	}
	return refs
}

func firstParentsOf(t *testing.T, a atlasCLI, tip string) map[string]bool {
	out, _, err := crashGit(a, "", "rev-list", "--first-parent", tip)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for id := range strings.FieldsSeq(out) {
		set[id] = true
	}
	return set
}

func checkState(t *testing.T, a atlasCLI, st crashState, preRefs, postRefs map[string]string, chains map[string]map[string]bool,
	written map[string]bool, pre map[string]entry, worktrees []string, full bool) []string {
	var problems []string
	out, errOut, err := crashGit(a, "", "for-each-ref", "--format=%(refname) %(objectname)", "refs/atlas/")
	if err != nil || strings.Contains(errOut, "broken") {
		return []string{fmt.Sprintf("refs unreadable: %v %s", err, errOut)}
	}
	refs := map[string]string{}
	var tips []string
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if n, id, ok := strings.Cut(l, " "); ok {
			refs[n] = id
			tips = append(tips, id)
		}
	}
	if len(tips) > 0 {
		list, e, err := crashGit(a, "", append([]string{"rev-list", "--objects"}, tips...)...)
		if err != nil {
			problems = append(problems, "a ref under refs/atlas/ names a missing object: "+strings.TrimSpace(e))
		} else {
			var ids strings.Builder
			for l := range strings.SplitSeq(strings.TrimSpace(list), "\n") {
				ids.WriteString(strings.Fields(l + " x")[0] + "\n")
			}
			if o, e, err := crashGit(a, ids.String(), "cat-file", "--batch"); err != nil || strings.Contains(o, " missing\n") {
				problems = append(problems, "an object under refs/atlas/ does not read: "+strings.TrimSpace(e))
			}
		}
	}
	for name, id := range refs {
		if !strings.HasPrefix(name, "refs/atlas/runs/") {
			continue
		}
		if id != preRefs[name] && !chains[name][id] && !written[name+" "+id] {
			problems = append(problems, fmt.Sprintf("ledger %s at %s: neither its old tip nor one this command wrote", name, id))
		}
	}
	if st.last {
		for name, id := range postRefs {
			if refs[name] != id {
				problems = append(problems, fmt.Sprintf("the command reported success but %s is %q after a crash, not %s", name, refs[name], id))
			}
		}
	}
	for _, w := range worktrees {
		if !worktreeKept(a, st.tree, pre, w, refs) {
			problems = append(problems, fmt.Sprintf("worktree %s is neither intact nor held by a recovery snapshot", w))
		}
	}
	if full {
		for _, args := range [][]string{{"audit"}, {"resume", "--plan"}} {
			_, code, stderr := a.run(args...)
			switch {
			case strings.Contains(stderr, "panic:"):
				problems = append(problems, fmt.Sprintf("%s panicked: %s", args[0], stderr))
			case code != 0 && code != 1 && code != 3 && code != 4 && code != 5 && code != 10:
				problems = append(problems, fmt.Sprintf("%s exited %d: %s", args[0], code, stderr))
			}
		}
	}
	return problems
}

// worktreeKept: every file of the worktree w as it was is in the crash state
// unchanged, or in the tree of a recovery snapshot.
func worktreeKept(a atlasCLI, tree, pre map[string]entry, w string, refs map[string]string) bool {
	files := map[string]entry{}
	for p, e := range pre {
		if strings.HasPrefix(p, w+"/") && !e.dir && filepath.Base(p) != ".git" {
			files[strings.TrimPrefix(p, w+"/")] = e
		}
	}
	intact := true
	for rel, e := range files {
		got, ok := tree[filepath.Join(w, rel)]
		if !ok || !bytes.Equal(got.data, e.data) || got.link != e.link {
			intact = false
			break
		}
	}
	if intact {
		return true
	}
	for name, id := range refs {
		if !strings.HasPrefix(name, "refs/atlas/recovery/") {
			continue
		}
		var in strings.Builder
		var order []string
		for rel := range files {
			in.WriteString(id + ":" + rel + "\n")
			order = append(order, rel)
		}
		out, _, err := crashGit(a, in.String(), "cat-file", "--batch")
		if err != nil {
			continue
		}
		if snapshotHolds(out, order, files) {
			return true
		}
	}
	return false
}

func snapshotHolds(out string, order []string, files map[string]entry) bool {
	r := bufio.NewReader(strings.NewReader(out))
	for _, rel := range order {
		head, err := r.ReadString('\n')
		if err != nil {
			return false
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			return false
		}
		n, _ := strconv.Atoi(f[2])
		body := make([]byte, n+1)
		if _, err := ioReadFull(r, body); err != nil {
			return false
		}
		e := files[rel]
		want := e.data
		if e.link != "" {
			want = []byte(e.link)
		}
		if !bytes.Equal(body[:n], want) {
			return false
		}
	}
	return true
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
