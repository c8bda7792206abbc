package git

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// The worktree list is read from the files in process where that is certain to be
// what `git worktree list --porcelain -z` prints (git 2.39: worktree.c get_worktrees,
// should_prune_worktree; builtin/worktree.c list): a repository whose refs go-git
// reads (no extension at all, files backend), a local config that says core.bare and
// nothing that could change it, and every file of every worktree in the form git
// writes it. Anything else is git's to answer. The list gates what git-atlas removes,
// so a doubt is always a question to git, never a guess.

// prunableMissing is should_prune_worktree's reason for a worktree whose directory is
// gone (`worktree list` never expires: its index's age does not matter).
const prunableMissing = "gitdir file points to non-existent location"

// listWorktreesLocal is ListWorktrees read in process; ok is false where git must
// answer.
func (r *Repository) listWorktreesLocal() (list []WorktreeInfo, ok bool) {
	if !r.UsesGoGit() || r.ObjectFormat != "sha1" {
		return nil, false
	}
	for _, name := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if os.Getenv(name) != "" {
			return nil, false // `git -c core.bare=...` and the like
		}
	}
	common, err := filepath.EvalSymlinks(r.CommonDir)
	if err != nil {
		return nil, false
	}
	if fi, err := os.Lstat(common); err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return nil, false // safe.directory is git's to judge
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	bare, ok := localBare(common)
	if !ok {
		return nil, false
	}
	// The main worktree: the real path of the common dir less a trailing /.git.
	main := WorktreeInfo{Path: strings.TrimSuffix(common, "/.git"), Bare: bare}
	if main.Path == "" || !filepath.IsAbs(main.Path) {
		return nil, false
	}
	if !bare {
		if main.Head, main.Branch, main.Detached, ok = r.headFile(filepath.Join(common, "HEAD")); !ok {
			return nil, false
		}
	}
	admin := filepath.Join(common, "worktrees")
	dir, err := os.Open(admin)
	if errors.Is(err, fs.ErrNotExist) {
		return []WorktreeInfo{main}, true
	}
	if err != nil {
		return nil, false
	}
	entries, err := dir.ReadDir(-1)
	_ = dir.Close()
	if err != nil {
		return nil, false
	}
	var linked []WorktreeInfo
	for _, e := range entries {
		switch {
		case e.Type().IsRegular():
			continue // git reads worktrees/<file>/gitdir, fails, and lists nothing for it
		case !e.IsDir():
			return nil, false
		}
		w, listed, ok := r.linkedWorktree(filepath.Join(admin, e.Name()))
		if !ok {
			return nil, false
		}
		if listed {
			linked = append(linked, w)
		}
	}
	// git sorts the linked worktrees by path with fspathcmp, strcasecmp under
	// core.ignorecase (and with an unstable sort): the order is certain only where
	// both comparisons agree and no two paths are equal under either.
	sort.Slice(linked, func(i, j int) bool { return linked[i].Path < linked[j].Path })
	for i := 1; i < len(linked); i++ {
		if foldCompare(linked[i-1].Path, linked[i].Path) >= 0 || linked[i-1].Path == linked[i].Path {
			return nil, false
		}
	}
	return append([]WorktreeInfo{main}, linked...), true
}

// foldCompare compares a and b as strcasecmp does in the C locale: ASCII letters
// folded to lower case, every other byte as it is.
func foldCompare(a, b string) int {
	lower := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if ca, cb := lower(a[i]), lower(b[i]); ca != cb {
			return int(ca) - int(cb)
		}
	}
	return len(a) - len(b)
}

// localBare reads core.bare from the repository's own config file, which git reads
// after the system and global ones: ok only when that file sets it once, to a plain
// true or false, and holds nothing that could change it or what the list shows: an
// include or a worktree setting anywhere in the text (read as bytes, as plainConfig
// does, so no parser's disagreement with git's can hide one).
func localBare(common string) (bare, ok bool) {
	data, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil {
		return false, false
	}
	lower := bytes.ToLower(data)
	if bytes.Contains(lower, []byte("worktree")) || bytes.Contains(lower, []byte("include")) {
		return false, false
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return false, false
	}
	var values []string
	for _, s := range cfg.Sections {
		if !strings.EqualFold(s.Name, "core") {
			continue
		}
		if len(s.Subsections) > 0 {
			return false, false
		}
		for _, o := range s.Options {
			if strings.EqualFold(o.Key, "bare") {
				values = append(values, strings.ToLower(o.Value))
			}
		}
	}
	if len(values) != 1 || (values[0] != "true" && values[0] != "false") {
		return false, false
	}
	return values[0] == "true", true
}

// linkedWorktree reads the worktree whose administrative directory is admin
// (<common>/worktrees/<id>): listed is false where git lists nothing for it (no gitdir
// file, or an empty one), ok false where git must answer.
func (r *Repository) linkedWorktree(admin string) (w WorktreeInfo, listed, ok bool) {
	gitdir := filepath.Join(admin, "gitdir")
	fi, err := os.Lstat(gitdir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w, false, true
	case err != nil || !fi.Mode().IsRegular():
		return w, false, false
	}
	data, err := os.ReadFile(gitdir)
	if err != nil {
		return w, false, false
	}
	if len(data) == 0 {
		return w, false, true
	}
	// What git writes: the absolute path of the worktree's .git file and a newline.
	dotgit := strings.TrimSuffix(string(data), "\n")
	if !filepath.IsAbs(dotgit) || !strings.HasSuffix(dotgit, "/.git") || strings.ContainsAny(dotgit, "\x00\r\n") || strings.TrimRight(dotgit, " \t") != dotgit {
		return w, false, false
	}
	w.Path = strings.TrimSuffix(dotgit, "/.git")
	if w.Path == "" {
		return w, false, false
	}
	// The worktree's refs are read through its commondir file: what git writes there,
	// or git must answer (an empty one makes git fail, and runWorktree repair it).
	if fi, err := os.Lstat(filepath.Join(admin, "commondir")); err != nil || !fi.Mode().IsRegular() {
		return w, false, false
	}
	if c, err := os.ReadFile(filepath.Join(admin, "commondir")); err != nil || string(c) != "../..\n" {
		return w, false, false
	}
	if w.Head, w.Branch, w.Detached, ok = r.headFile(filepath.Join(admin, "HEAD")); !ok {
		return w, false, false
	}
	locked := filepath.Join(admin, "locked")
	switch fi, err := os.Lstat(locked); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil || !fi.Mode().IsRegular():
		return w, false, false
	default:
		reason, err := os.ReadFile(locked)
		if err != nil || strings.ContainsRune(string(reason), 0) {
			return w, false, false // git prints a reason up to its first NUL
		}
		w.Locked, w.LockReason = true, strings.Trim(string(reason), " \t\r\n")
	}
	if !w.Locked {
		switch _, err := os.Lstat(dotgit); {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			w.Prunable, w.PrunableReason = true, prunableMissing
		default:
			return w, false, false
		}
	}
	return w, true, true
}

// headFile reads a HEAD file as git's files backend resolves it for the list: the id
// it names (the null id for a branch yet to be born), and its branch or detached.
// Only the forms git writes are read: "ref: refs/heads/<name>\n" with a plain name, or
// a full id and a newline; ok is false for anything else.
func (r *Repository) headFile(path string) (id, branch string, detached, ok bool) {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return "", "", false, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", false, false
	}
	s, ok := strings.CutSuffix(string(data), "\n")
	if !ok {
		return "", "", false, false
	}
	if ref, sym := strings.CutPrefix(s, "ref: "); sym {
		if !strings.HasPrefix(ref, "refs/heads/") || !plainRefName(ref) {
			return "", "", false, false
		}
		refs, ok := r.listRefsLocal([]string{ref})
		if !ok {
			return "", "", false, false
		}
		id = r.NullID()
		for _, f := range refs {
			if f.Name == ref {
				id = f.ID
			}
		}
		if len(id) != len(r.NullID()) {
			return "", "", false, false
		}
		return id, ref, false, true
	}
	if !isHexID(s) || len(s) != len(r.NullID()) || strings.ToLower(s) != s {
		return "", "", false, false
	}
	return s, "", true, true
}
