package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A command asks `git worktree list` and `git status` of the same worktree again and
// again (a resume plans, snapshots, resets and plans again: issue 34 counted five
// lists and four statuses). Once KeepWorktrees is called (the command line does, for
// the one Repository of a command), each answer is kept for as long as nothing
// git-atlas itself started may have changed it: every git process (and every user
// command) notes, before it starts and again when it ends, what it may change
// (effectOf) in epochs, and a kept answer is good while the epochs it was read at
// stand. Where git-atlas knows exactly what one of its own writes changed (a ref
// transaction of branch tips, a worktree attached to its branch, a worktree made
// clean), it updates the kept answer instead of dropping it. What other processes
// change meanwhile is seen by the next command, not by this one; the check that guards
// a destructive step asks git again whatever was kept (StatusNow), and a long-lived
// front end (web) calls ForgetWorktrees before each request.

// epochs counts the changes git-atlas's own processes may have made: list, to what
// `git worktree list` shows; all, to every worktree's status; dir, to the status of
// the one worktree a process ran in.
var epochs = struct {
	mu   sync.Mutex
	list int64
	all  int64
	dir  map[string]int64
}{dir: map[string]int64{}}

// effect is what one process may change.
type effect struct {
	list bool     // the worktree list (HEADs, branches, registrations)
	all  bool     // the status of any worktree
	dirs []string // the status of the worktrees in these directories
}

// note moves the epochs an effect changes on: at a process's start and at its end,
// so that an answer read while it ran is not kept.
func (e effect) note() {
	if !e.list && !e.all && len(e.dirs) == 0 {
		return
	}
	keys := make([]string, len(e.dirs))
	for i, d := range e.dirs {
		keys[i] = dirKey(d)
	}
	epochs.mu.Lock()
	defer epochs.mu.Unlock()
	if e.list {
		epochs.list++
	}
	if e.all {
		epochs.all++
	}
	for _, k := range keys {
		epochs.dir[k]++
	}
}

// dirKey is the directory as the epochs and kept statuses name it: resolved, so that
// two spellings of one worktree are one.
func dirKey(dir string) string {
	if dir == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// readOnly are the git commands that change no worktree's list entry or status
// (objects they may write are no one's status).
var readOnly = []string{
	"status", "ls-files", "diff", "diff-tree", "diff-index", "rev-parse", "cat-file", "config",
	"for-each-ref", "ls-tree", "rev-list", "merge-base", "merge-tree", "hash-object", "mktree",
	"write-tree", "show-ref", "var", "check-attr", "check-ignore", "check-ref-format",
	"count-objects", "ls-remote", "log", "show", "web--browse", "version",
}

// inDir are the commands that change only the index and files of the worktree they
// run in (and with a temporary index, not even those but for read-tree -u).
var inDir = []string{"clean", "read-tree", "update-index", "add", "apply", "checkout-index", "rm", "mv"}

// effectOf is what a git process with args (git's own options first), run in dir
// with env, may change. Anything not known to be narrower changes everything.
func effectOf(dir string, env, args []string) effect {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "-c" || args[i] == "-C" {
			i++
		}
		i++
	}
	if i >= len(args) {
		return effect{}
	}
	sub, rest := args[i], args[i+1:]
	temp := slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_INDEX_FILE=") })
	switch {
	case slices.Contains(readOnly, sub):
		return effect{}
	case sub == "worktree" && len(rest) > 0 && rest[0] == "list":
		return effect{}
	case sub == "symbolic-ref" && slices.Contains(rest, "-q"):
		return effect{} // a read of HEAD: the one use with -q
	case slices.Contains(inDir, sub):
		if temp && (sub != "read-tree" || !slices.Contains(rest, "-u")) {
			return effect{}
		}
		return effect{dirs: []string{dir}}
	case sub == "reset" && len(rest) > 0 && rest[len(rest)-1] == "HEAD":
		return effect{dirs: []string{dir}} // HEAD stays where it is
	case sub == "symbolic-ref" || sub == "update-ref" || sub == "commit" || sub == "checkout" || sub == "reset":
		return effect{list: true, dirs: []string{dir}} // this worktree's HEAD moves
	}
	return effect{list: true, all: true}
}

// refsEffect is what a ref transaction of names may change: nothing outside
// refs/heads/ and HEAD; a branch tip, the HEAD and status of the worktrees that have
// the branch checked out (all of them when the kept list cannot tell which).
func (r *Repository) refsEffect(names []string) effect {
	var heads []string
	for _, n := range names {
		if n == "HEAD" || strings.HasPrefix(n, "refs/heads/") {
			heads = append(heads, n)
		}
	}
	if len(heads) == 0 {
		return effect{}
	}
	list, ok := r.keptList()
	if !ok || slices.Contains(heads, "HEAD") {
		return effect{list: true, all: true}
	}
	e := effect{list: true}
	for _, w := range list {
		if w.Branch != "" && slices.Contains(heads, w.Branch) {
			e.dirs = append(e.dirs, w.Path)
		}
	}
	return e
}

// picture is what one Repository keeps of the worktrees.
type picture struct {
	mu      sync.Mutex
	list    []WorktreeInfo
	there   []bool // whether each listed directory was there (git calls one gone prunable)
	listAt  int64
	hasList bool
	status  map[string]keptStatus
}

type keptStatus struct {
	out      []byte
	all, dir int64
}

// KeepWorktrees makes r keep the worktree list and statuses it reads, as picture.go
// says, from now on: for the Repository of one command (the command line opens one per
// command; a test or a library caller that changes worktrees behind r's back does
// not call it). Call it before r is shared.
func (r *Repository) KeepWorktrees() {
	if r.seen == nil {
		r.seen = new(picture)
	}
}

// ForgetWorktrees forgets every worktree list and status kept so far: the next asks
// git again. A long-lived front end calls it before each request.
func (r *Repository) ForgetWorktrees() {
	if r.seen == nil {
		return
	}
	r.seen.mu.Lock()
	r.seen.hasList, r.seen.list, r.seen.status = false, nil, nil
	r.seen.mu.Unlock()
}

// listEpoch is the list epoch now.
func listEpoch() int64 {
	epochs.mu.Lock()
	defer epochs.mu.Unlock()
	return epochs.list
}

// keptList is the kept worktree list, if it is still good.
func (r *Repository) keptList() ([]WorktreeInfo, bool) {
	list, _, ok := r.keptListAt()
	return list, ok
}

// keptListAt is keptList and the list epoch it is good at.
func (r *Repository) keptListAt() ([]WorktreeInfo, int64, bool) {
	if r.seen == nil {
		return nil, 0, false
	}
	at := listEpoch()
	r.seen.mu.Lock()
	defer r.seen.mu.Unlock()
	if !r.seen.hasList || r.seen.listAt != at || !slices.Equal(r.seen.there, there(r.seen.list)) {
		return nil, 0, false // or a directory was moved or removed in process, outside git
	}
	return slices.Clone(r.seen.list), at, true
}

// keepList keeps list, read when the list epoch was at.
func (r *Repository) keepList(list []WorktreeInfo, at int64) {
	if r.seen == nil {
		return
	}
	r.seen.mu.Lock()
	defer r.seen.mu.Unlock()
	r.seen.list, r.seen.there, r.seen.listAt, r.seen.hasList = slices.Clone(list), there(list), at, true
}

// there says of each listed worktree whether its directory is there.
func there(list []WorktreeInfo) []bool {
	t := make([]bool, len(list))
	for i, w := range list {
		_, err := os.Lstat(w.Path)
		t[i] = err == nil
	}
	return t
}

// changeList runs write, a change of git-atlas's own whose effect on the list is
// exactly update (applied to the kept list when write succeeds). The kept list stays
// good only if it was good before and no other process's change came in between.
// write runs one git process whose effect (a cmd's eff) changes the list.
func (r *Repository) changeList(update func([]WorktreeInfo) bool, write func() error) error {
	before, at, ok := r.keptListAt()
	err := write()
	if err != nil || !ok || r.seen == nil {
		return err
	}
	epochs.mu.Lock()
	now := epochs.list
	epochs.mu.Unlock()
	if now == at+2 && update(before) {
		r.keepList(before, now)
	}
	return err
}

// statusEpochs are the epochs a status of dir is read at.
func statusEpochs(key string) (all, dir int64) {
	epochs.mu.Lock()
	defer epochs.mu.Unlock()
	return epochs.all, epochs.dir[key]
}

// keptStatus is the kept status of the worktree at dir, if it is still good.
func (r *Repository) keptStatus(dir string) ([]byte, bool) {
	if r.seen == nil {
		return nil, false
	}
	key := dirKey(dir)
	all, d := statusEpochs(key)
	r.seen.mu.Lock()
	defer r.seen.mu.Unlock()
	s, ok := r.seen.status[key]
	if !ok || s.all != all || s.dir != d {
		return nil, false
	}
	return s.out, true
}

// keepStatus keeps out, the status of dir read at the epochs all and d.
func (r *Repository) keepStatus(dir string, out []byte, all, d int64) {
	if r.seen == nil {
		return
	}
	r.seen.mu.Lock()
	defer r.seen.mu.Unlock()
	if r.seen.status == nil {
		r.seen.status = map[string]keptStatus{}
	}
	r.seen.status[dirKey(dir)] = keptStatus{out: slices.Clone(out), all: all, dir: d}
}

// movedTips applies a ref transaction's branch updates to list: the worktrees on a
// moved branch have its new tip as HEAD. A deleted branch, or HEAD itself, is not
// worked out here (false: the list is asked again).
func movedTips(list []WorktreeInfo, updates []RefUpdate) bool {
	for _, u := range updates {
		if !strings.HasPrefix(u.Name, "refs/heads/") {
			if u.Name == "HEAD" {
				return false
			}
			continue
		}
		for i := range list {
			if list[i].Branch != u.Name {
				continue
			}
			if IsNullID(u.New) {
				return false
			}
			list[i].Head = u.New
		}
	}
	return true
}
