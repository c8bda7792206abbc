package git

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// discover finds the repository containing abs as `git rev-parse` would, without
// starting git, in the layouts that are common and certain: a non-bare repository
// reached through a `.git` directory or a `.git` file (a linked worktree, a separate
// git dir), owned by this user, with plain config. Starting git costs about as much as
// the rest of `resume --brief` (issue 14), and every command opens a repository first.
//
// It answers only when it is sure git would answer the same; ok is false for anything
// else, and Open asks git: a GIT_DIR or GIT_WORK_TREE of the user's, variables that
// change discovery or config (GIT_CEILING_DIRECTORIES, GIT_DISCOVERY_ACROSS_FILESYSTEM,
// `git -c`), a bare repository or a directory inside a git dir, a mount point crossed,
// a path or git dir owned by someone else (safe.directory is git's to judge),
// core.worktree, core.bare, config includes, extensions other than objectFormat, a
// format version it does not know, and anything it cannot read. TestDiscoverAgreesWithGit
// compares the two in every layout either handles. goGit is goGitCanOpen's answer,
// from the config discover has read already (no extensions at all).
func discover(abs string) (r *Repository, goGit, ok bool) {
	if len(userRepoEnv()) > 0 {
		return nil, false, false
	}
	for _, name := range []string{"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if os.Getenv(name) != "" {
			return nil, false, false
		}
	}
	// git works in the physical directory (it chdirs there, then asks getcwd), and
	// prints physical paths.
	dir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, false, false
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, false, false
	}
	for {
		if !ownedByMe(fi) {
			return nil, false, false
		}
		dotgit := filepath.Join(dir, ".git")
		switch gi, err := os.Lstat(dotgit); {
		case err == nil:
			return discovered(dir, dotgit, gi)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, false, false
		}
		if _, err := os.Lstat(filepath.Join(dir, "HEAD")); !errors.Is(err, fs.ErrNotExist) {
			return nil, false, false // a bare repository, or a directory inside a git dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, false, false // not a repository: git says so in its own words
		}
		pi, err := os.Lstat(parent)
		if err != nil || !sameDevice(fi, pi) {
			return nil, false, false
		}
		dir, fi = parent, pi
	}
}

// discovered finishes discover at the top level top, whose .git (dotgit, as Lstat saw
// it) is a directory, a link to one, or a file naming the git dir.
func discovered(top, dotgit string, fi fs.FileInfo) (*Repository, bool, bool) {
	if !ownedByMe(fi) {
		return nil, false, false
	}
	gitDir := dotgit
	if fi.Mode().IsRegular() {
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return nil, false, false
		}
		path, found := strings.CutPrefix(strings.TrimRight(string(data), "\r\n"), "gitdir: ")
		if !found || path == "" || strings.ContainsAny(path, "\n\r") {
			return nil, false, false
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(top, path)
		}
		gitDir = path
	}
	gitDir, err := filepath.EvalSymlinks(gitDir)
	if err != nil {
		return nil, false, false
	}
	commonDir := gitDir
	switch data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); {
	case err == nil:
		path := strings.TrimRight(string(data), "\r\n")
		if path == "" || strings.ContainsAny(path, "\n\r") {
			return nil, false, false
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(gitDir, path)
		}
		if commonDir, err = filepath.EvalSymlinks(path); err != nil {
			return nil, false, false
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, false
	}
	if !isGitDir(gitDir, commonDir) {
		return nil, false, false
	}
	format, extensions, ok := plainConfig(filepath.Join(commonDir, "config"))
	if !ok {
		return nil, false, false
	}
	return &Repository{GitDir: gitDir, CommonDir: commonDir, TopLevel: top, ObjectFormat: format, flushed: new(sync.Map), configs: new(configCache)}, !extensions, true
}

// isGitDir is git's test of a git dir: a HEAD that is a symbolic ref or an object id,
// and objects/ and refs/ in the common dir; all owned by this user.
func isGitDir(gitDir, commonDir string) bool {
	for _, d := range []string{gitDir, commonDir, filepath.Join(commonDir, "objects"), filepath.Join(commonDir, "refs")} {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || !ownedByMe(fi) {
			return false
		}
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return false
	}
	h := strings.TrimRight(string(head), "\n")
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		return strings.HasPrefix(ref, "refs/") && !strings.ContainsAny(ref, " \n")
	}
	return (len(h) == 40 || len(h) == 64) && strings.Trim(h, "0123456789abcdef") == ""
}

// plainConfig reads the repository's config and returns its object format and
// whether it names any extension, with ok false when anything in it could make git's discovery answer differ from discover's:
// a worktree or include anywhere in the text (read as bytes, so no parser's
// disagreement with git's can hide one), a core.bare that is not false, a format
// version other than 0 or 1, an extension other than objectFormat.
func plainConfig(path string) (format string, extensions, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, false
	}
	lower := bytes.ToLower(data)
	if bytes.Contains(lower, []byte("worktree")) || bytes.Contains(lower, []byte("include")) {
		return "", false, false
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return "", false, false
	}
	core := cfg.Section("core")
	for _, v := range core.OptionAll("bare") {
		switch strings.ToLower(v) {
		case "false", "no", "off", "0":
		default:
			return "", false, false
		}
	}
	format = "sha1"
	switch v := core.Option("repositoryformatversion"); v {
	case "", "0":
		if len(cfg.Section("extensions").Options) > 0 {
			return "", false, false
		}
	case "1":
		for _, o := range cfg.Section("extensions").Options {
			f := strings.ToLower(o.Value)
			if !strings.EqualFold(o.Key, "objectformat") || f != "sha1" && f != "sha256" {
				return "", false, false
			}
			format = f
		}
	default:
		return "", false, false
	}
	if len(cfg.Section("extensions").Subsections) > 0 {
		return "", false, false
	}
	return format, len(cfg.Section("extensions").Options) > 0, true
}
