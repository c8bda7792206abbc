package git

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HEAD and a worktree's git dir are read in process where that is certain to be git's
// answer, as Open does with discover: a repository whose refs go-git reads (no
// extension, files backend), HEAD a plain file naming a branch or a commit, the branch
// a plain ref. Anything else is git's to answer (an unborn branch, a symbolic ref
// chain, a GIT_DIR checkout, a path discover is not sure of).

// headIn reads HEAD in gitDir: the commit id it names and the branch it is on ("" when
// detached). ok is false where git must answer.
func (r *Repository) headIn(ctx context.Context, gitDir string) (id, branch string, ok bool) {
	if _, goGit := r.objects.(*goGitStore); !goGit {
		return "", "", false
	}
	p := filepath.Join(gitDir, "HEAD")
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return "", "", false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", "", false
	}
	s := strings.TrimRight(string(data), "\n")
	if ref, sym := strings.CutPrefix(s, "ref: "); sym {
		if !strings.HasPrefix(ref, "refs/heads/") || strings.ContainsAny(ref, " \t\r\n\\:?*[^~") || strings.Contains(ref, "..") {
			return "", "", false
		}
		id, err := r.objects.readRef(ctx, ref)
		if err != nil || !isHexID(id) {
			return "", "", false
		}
		return id, ref, true
	}
	if isHexID(s) {
		return s, "", true
	}
	return "", "", false
}

// knownObject is what is known in process of object id: whether it exists as git
// would find it (a whole loose object, or one a pack's index names where no replace
// ref could make git read another) and whether it is a commit (a packed delta's type
// is not known). false: ask git.
func (r *Repository) knownObject(id string) (exists, commit bool) {
	g, goGit := r.objects.(*goGitStore)
	if !goGit {
		return false, false
	}
	if typ, _, ok := g.loose().readLoose(id); ok {
		return true, typ == "commit"
	}
	// A clone's objects are packed: the pack's index and entry tell (packedType).
	typ, found := g.loose().packedType(id)
	if !found || r.mayReplace() {
		return false, false
	}
	return true, typ == "commit"
}

// knownCommit reports whether id is a commit, known in process (knownObject).
func (r *Repository) knownCommit(id string) bool {
	_, commit := r.knownObject(id)
	return commit
}

// headCommit is ResolveCommit of HEAD in process: HEAD of the git dir the repository
// was opened from, when it names a commit known in process (knownCommit).
func (r *Repository) headCommit(ctx context.Context) (string, bool) {
	id, _, ok := r.headIn(ctx, r.GitDir)
	if !ok || !r.knownCommit(id) {
		return "", false
	}
	return id, true
}

// localGitDir is the worktree's git dir as git started in w.Path finds it, when
// discover is sure of it and it belongs to this repository (its common dir) with
// w.Path its top level; ok is false where git must answer.
func (w *Worktree) localGitDir() (string, bool) {
	if _, goGit := w.Repo.objects.(*goGitStore); !goGit || checkoutEnv(w.Path) != nil {
		return "", false
	}
	d, _, ok := discover(w.Path)
	if !ok {
		return "", false
	}
	common, err := filepath.EvalSymlinks(w.Repo.CommonDir)
	if err != nil || d.CommonDir != common {
		return "", false
	}
	top, err := filepath.EvalSymlinks(w.Path)
	if err != nil || d.TopLevel != top {
		return "", false
	}
	return d.GitDir, true
}

// pseudoRefsAbsent reports, in process, that no name resolves as cat-file would
// resolve it (the worktree's $GIT_DIR/<name>, then refs/<name>, refs/tags/<name>,
// refs/heads/<name>, refs/remotes/<name>[/HEAD]): the common case, no merge or
// cherry-pick under way. false means git must answer, not that one is present.
func (w *Worktree) pseudoRefsAbsent(names []string) bool {
	gitDir, ok := w.localGitDir()
	if !ok {
		return false
	}
	var prefixes []string
	for _, n := range names {
		if !plainRefName(n) || strings.Contains(n, "/") {
			return false
		}
		if _, err := os.Lstat(filepath.Join(gitDir, n)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		for _, dir := range []string{"refs/", "refs/tags/", "refs/heads/", "refs/remotes/"} {
			prefixes = append(prefixes, dir+n)
		}
	}
	refs, ok := w.Repo.listRefsLocal(prefixes)
	return ok && len(refs) == 0
}
