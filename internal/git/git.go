// Package git is the only package that runs git or opens a repository's files.
//
// It splits what may touch a working tree from what may not by type: a Repository
// reads and writes refs, objects and config; a Worktree (status, index, checkout)
// exists only for worktrees git-atlas manages, so code that holds a Repository alone
// cannot change the user's checkout.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ZeroID stands for "no object" in a RefUpdate: as Old, the ref must not exist; as New,
// the ref is deleted. It is the SHA-1 null id, but UpdateRefs translates it to the null
// id of the repository's own object format (64 zeros in a sha256 repository, where
// update-ref refuses 40 zeros as an invalid old value), so callers never need to know
// the format.
const ZeroID = "0000000000000000000000000000000000000000"

// Error is a failed git invocation; it keeps git's own stderr so users see git's words.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotRepository means the path is not inside a git repository.
var ErrNotRepository = errors.New("not a git repository")

// ErrNoDirectory means the path to open is not an existing directory.
var ErrNoDirectory = errors.New("no such directory")

// leaked are variables a hook, an alias or a filter inherits from the git that
// started it (and so may leak into our environment, and from us into every process we
// start); each points git at another repository, index or object store, or changes
// which paths or refs it acts on (docs/git-notes.md §2). They are removed
// from every process git-atlas starts: its own git calls and a user's command alike
// (UserEnv).
var leaked = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_QUARANTINE_PATH",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
	"GIT_REFLOG_ACTION",
}

// fixed are variables that change how git-atlas's own git calls behave or print
// (locale, pager, editor, prompts, tracing, diff drivers, lock behaviour); those calls
// run without the user's values. A user's command keeps them: they are the user's.
var fixed = []string{
	"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER", "GIT_TERMINAL_PROMPT",
	"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_TRACE", "LC_ALL", "LANG",
	"GIT_OPTIONAL_LOCKS", "GIT_FLUSH",
}

// baseEnv is the fixed environment every git call runs with. The user's `git -c`
// (GIT_CONFIG_PARAMETERS) is kept on purpose: it is how a user points git at a
// different identity or safe.directory for one call.
func baseEnv() []string { return baseEnvOf(os.Environ()) }

// baseEnvOf is baseEnv made from environ (os.Environ's form) instead of the process's
// environment: a test gives it a caller's environment without setting one.
func baseEnvOf(environ []string) []string {
	env := environWithout(environ, leaked, fixed)
	return append(env, "LC_ALL=C", "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true")
}

// UserEnv is the environment a user's command runs with (a verify, the demo's
// worker): git-atlas's own, less the leaked variables, so that the command's own git
// calls reach the repository of the directory it runs in and no other.
func UserEnv() []string { return userEnvOf(os.Environ()) }

// userEnvOf is UserEnv made from environ, as baseEnvOf is baseEnv.
func userEnvOf(environ []string) []string { return environWithout(environ, leaked) }

func environWithout(environ []string, lists ...[]string) []string {
	env := make([]string, 0, len(environ)+5)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !inLists(name, lists) {
			env = append(env, kv)
		}
	}
	return env
}

func inLists(name string, lists [][]string) bool {
	for _, l := range lists {
		if slices.Contains(l, name) {
			return true
		}
	}
	return false
}

// userRepoEnv is GIT_DIR and GIT_WORK_TREE as the user gave them (`git --git-dir=X
// --work-tree=Y atlas`, or the variables set on the command line), for Open alone to
// honour. git also exports both to the processes a repository command starts (hooks,
// aliases, filters), but a git that has set up a repository always exports
// GIT_PREFIX too, and `git atlas` itself (git runs it without setting up a
// repository) never does: with GIT_PREFIX present, the variables were inherited from
// such a git, not meant for us, and are ignored.
func userRepoEnv() []string {
	if _, inherited := os.LookupEnv("GIT_PREFIX"); inherited {
		return nil
	}
	var env []string
	for _, name := range []string{"GIT_DIR", "GIT_WORK_TREE"} {
		if v := os.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// checkouts holds, by absolute top level, the checkouts that Open could reach only
// through GIT_DIR/GIT_WORK_TREE (a git dir outside its work tree): every internal call
// run in such a directory gets both, absolute, so it reaches the same repository.
var checkouts sync.Map // string -> []string

func checkoutEnv(dir string) []string {
	if env, ok := checkouts.Load(dir); ok {
		return env.([]string)
	}
	return nil
}

// globalArgs disable the user's hooks and fsmonitor for every internal call (a hook
// may be slow, failing or have side effects; fsmonitor data could also hide a
// change), keep git's "LF will be replaced by CRLF" warnings (core.safecrlf, which
// changes no content) out of our output, and make git flush what it writes (git 2.39
// flushes none of it by default; docs/contract.md §11.12): objects loose and packed, pack indexes
// (a pack without its index cannot be read), refs, and the index of the worktrees
// git-atlas makes: one flush per checkout, so that a power cut never leaves a managed
// worktree git cannot read (a torn index makes every status fail). A temporary
// index, thrown away after use, is not flushed (tempIndexConfig). One fsync per file
// (fsyncMethod=fsync), not batch: batch's links into objects/xx are never flushed on
// Linux (docs/git-notes.md §4). git flushes no directory: objectsWritten and
// syncRefDirs do.
var globalArgs = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.safecrlf=false",
	"-c", "core.fsync=" + fsyncComponents + ",index", "-c", "core.fsyncMethod=fsync"}

// fsyncComponents is what every git process git-atlas runs flushes (core.fsync).
const fsyncComponents = "objects,derived-metadata,reference"

// cmd is one git invocation.
type cmd struct {
	dir   string
	args  []string
	env   []string // extra variables, appended after the fixed environment
	stdin []byte
	extra []*os.File // open files the child inherits (a marker's lock)
	// eff is what the process changes, when its caller knows better than effectOf
	// (picture.go); run notes it. The git processes made by command alone (cat-file,
	// for-each-ref, diff-tree) change nothing.
	eff *effect
	// noErrors fails the command on an error line (git's "error: ") on stderr even when
	// git exits 0: `diff-tree --stdin` reports so a line it cannot read as commits, and
	// goes on with what it could.
	noErrors bool
}

// started counts the git processes command has made since the process began.
var started atomic.Int64

// Started is how many git processes git-atlas has started so far: a test takes it
// before and after a command to hold the command to its budget of processes.
func Started() int64 { return started.Load() }

// command is the one place a git process is made: git's global settings
// (globalArgs), the fixed environment, in a checkout that Open reached only through
// GIT_DIR/GIT_WORK_TREE those two (checkoutEnv), then env; in dir. Callers connect its
// input and output and run it.
func command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	started.Add(1)
	full := append(append(make([]string, 0, len(globalArgs)+len(args)), globalArgs...), args...)
	x := exec.CommandContext(ctx, "git", full...)
	x.Dir = dir
	x.Env = append(append(baseEnv(), checkoutEnv(dir)...), env...)
	return x
}

// exitCode is the exit code of a process that ran and failed, -1 otherwise (it could
// not start, or a signal ended it).
func exitCode(err error) int {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	return -1
}

func (c cmd) run(ctx context.Context) ([]byte, error) {
	eff := effectOf(c.dir, c.env, c.args)
	if c.eff != nil {
		eff = *c.eff
	}
	eff.note()
	defer eff.note()
	x := command(ctx, c.dir, c.env, c.args...)
	x.ExtraFiles = c.extra
	if c.stdin != nil {
		x.Stdin = bytes.NewReader(c.stdin)
	}
	var stdout, stderr bytes.Buffer
	x.Stdout, x.Stderr = &stdout, &stderr
	if err := x.Run(); err != nil {
		return stdout.Bytes(), &Error{Args: c.args, ExitCode: exitCode(err), Stderr: stderr.String(), Err: err}
	}
	if c.noErrors && (bytes.HasPrefix(stderr.Bytes(), []byte("error: ")) || bytes.Contains(stderr.Bytes(), []byte("\nerror: "))) {
		return stdout.Bytes(), &Error{Args: c.args, Stderr: stderr.String(), Err: errors.New("git reported an error")}
	}
	return stdout.Bytes(), nil
}

// Repository is a git repository reached through its common git dir: refs, objects and
// config. It never changes any working tree.
type Repository struct {
	// GitDir is the git dir of the worktree the repository was opened from.
	GitDir string
	// CommonDir holds the shared state: objects, refs, config, worktrees/.
	CommonDir string
	// TopLevel is the working tree the repository was opened from ("" when bare).
	TopLevel string
	// ObjectFormat is "sha1" or "sha256" (extensions.objectFormat).
	ObjectFormat string
	// StaleLockAge is how old a ref lock must be to be taken for a killed git's
	// (0: DefaultStaleLockAge). A test sets it on its own repository, not for the
	// whole process.
	StaleLockAge time.Duration
	// OnLockWait, when set, is told once per WaitLocks that a ref lock is in the way
	// and the write will wait for it: the lock file's path (as git names it, "" when
	// it did not) and the age at which a killed process's lock is removed. For a person
	// at a terminal, who would otherwise see a command stop for seconds.
	OnLockWait func(lock string, staleAfter time.Duration)
	objects    objectStore
	// flushed remembers, by object directory, the modification time it had when
	// syncObjectDirs flushed it (dirFlush), so a command's later git processes do not
	// flush it again unchanged.
	flushed *sync.Map
	// configs is the configuration read so far (config.go).
	configs *configCache
	// seen is the worktree list and statuses read so far (picture.go), nil until
	// KeepWorktrees.
	seen *picture
	// reader is the long-lived cat-file (batch.go), nil until KeepObjectReader.
	reader *objectReader
}

// LockAge is r.StaleLockAge, or DefaultStaleLockAge when it is not set.
func (r *Repository) LockAge() time.Duration {
	if r.StaleLockAge > 0 {
		return r.StaleLockAge
	}
	return DefaultStaleLockAge
}

// NullID is the all-zero object id of the repository's object format.
func (r *Repository) NullID() string {
	if r.ObjectFormat == "sha256" {
		return strings.Repeat("0", 64)
	}
	return ZeroID
}

// IsNullID reports whether value (a RefUpdate's Old or New) is the all-zero id of any
// object format.
func IsNullID(value string) bool {
	return value != "" && strings.Trim(value, "0") == ""
}

// Open resolves the repository containing path, once, with absolute paths: in
// process when discover is sure of git's answer, else by asking git. It honours
// GIT_DIR and GIT_WORK_TREE when the user gave them (userRepoEnv), relative to path as
// git resolves them after -C; every other git call scrubs them.
func Open(ctx context.Context, path string) (*Repository, error) {
	if path == "" {
		path = "."
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", abs, ErrNoDirectory)
	}
	if r, goGit, ok := discover(abs); ok {
		r.objects = newObjectStore(r, goGit)
		return r, nil
	}
	return openWithGit(ctx, abs)
}

// openWithGit is Open asking `git rev-parse`, for every case discover leaves to git.
func openWithGit(ctx context.Context, abs string) (*Repository, error) {
	user := userRepoEnv()
	// --show-toplevel goes last: it is the one query that fails in a bare repository.
	out, err := cmd{dir: abs, env: user, args: []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--is-bare-repository", "--show-object-format", "--show-toplevel"}}.run(ctx)
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil {
		ge, isGit := errors.AsType[*Error](err)
		switch {
		case isGit && len(lines) >= 4 && lines[2] == "true":
			// Bare repositories have no toplevel; rev-parse fails on the last query only.
		case isGit && strings.Contains(ge.Stderr, "dubious ownership"):
			return nil, fmt.Errorf("open %s: %s", abs, strings.TrimSpace(ge.Stderr))
		case isGit && strings.Contains(ge.Stderr, "not a git repository"):
			return nil, fmt.Errorf("%s: %w", abs, ErrNotRepository)
		default:
			return nil, fmt.Errorf("open %s: %w", abs, err)
		}
	}
	if len(lines) < 4 {
		return nil, fmt.Errorf("open %s: unexpected rev-parse output %q", abs, out)
	}
	r := &Repository{GitDir: lines[0], CommonDir: lines[1], ObjectFormat: lines[3], flushed: new(sync.Map), configs: new(configCache)}
	if len(lines) >= 5 && lines[2] != "true" {
		r.TopLevel = lines[4]
	}
	if len(user) > 0 && r.TopLevel != "" {
		checkouts.Store(r.TopLevel, []string{"GIT_DIR=" + r.GitDir, "GIT_WORK_TREE=" + r.TopLevel})
	}
	r.objects = newObjectStore(r, goGitCanOpen(r.CommonDir))
	return r, nil
}

// git runs git in the repository (from the common dir, so no worktree is involved).
func (r *Repository) git(ctx context.Context, args ...string) ([]byte, error) {
	return cmd{dir: r.CommonDir, args: args}.run(ctx)
}

// gitInput runs git in the repository with stdin.
func (r *Repository) gitInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if stdin == nil {
		stdin = []byte{}
	}
	return cmd{dir: r.CommonDir, args: args, stdin: stdin}.run(ctx)
}

// UsesGoGit reports whether reads and object writes go through go-git in-process.
func (r *Repository) UsesGoGit() bool { _, ok := r.objects.(*goGitStore); return ok }

// UseGitForObjects makes r read and write objects with git itself from now on, as
// GIT_ATLAS_NO_GOGIT=1 does at Open: a test of the CLI path sets it on its own
// repository instead of in the process's environment.
func (r *Repository) UseGitForObjects() { r.objects = &cliStore{r: r} }

// ResolveCommit resolves rev to a full commit id.
func (r *Repository) ResolveCommit(ctx context.Context, rev Rev) (OID, error) {
	if rev.IsZero() {
		return OID{}, fmt.Errorf("resolve: no revision: %w", ErrNotFoundObject)
	}
	if rev.s == "HEAD" {
		if id, ok := r.headCommit(ctx); ok {
			return gitOID(id)
		}
	}
	dir := r.CommonDir
	if r.TopLevel != "" {
		dir = r.TopLevel // HEAD is per worktree: resolve it where we were opened
	}
	out, err := cmd{dir: dir, args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev.s + "^{commit}"}}.run(ctx)
	if err != nil {
		return OID{}, fmt.Errorf("resolve %q: %w", rev.s, ErrNotFoundObject)
	}
	return gitOID(string(out))
}

// ErrNotFoundObject means a revision or object does not exist.
var ErrNotFoundObject = errors.New("no such commit or object")

// HasObject reports whether id exists in the object store and reads: a loose object
// that is empty or torn (a power cut's leftover, which `cat-file -e` calls present) is
// missing, and is removed so that the next write of it makes it whole (git's writers
// keep an existing file).
func (r *Repository) HasObject(ctx context.Context, id OID) bool {
	if id.IsZero() {
		return false
	}
	found := false
	err := objectInfo(ctx, r, []string{id.String()}, func(_ int, o batchObject) { found = !o.missing })
	if err != nil || !found {
		r.repairLoose(id.String())
	}
	return err == nil && found
}

// ObjectType returns the type of object id (commit, tree, blob, tag), or
// ErrNotFoundObject.
func (r *Repository) ObjectType(ctx context.Context, id OID) (string, error) {
	if id.IsZero() {
		return "", fmt.Errorf("object: none: %w", ErrNotFoundObject)
	}
	var o batchObject
	err := objectInfo(ctx, r, []string{id.String()}, func(_ int, b batchObject) { o = b })
	if err != nil || o.missing {
		return "", fmt.Errorf("object %s: %w", id.String(), ErrNotFoundObject)
	}
	return o.typ, nil
}

// Commits returns which of ids are commits here: a missing object, or one of
// another type, is not. Those known in process cost nothing (knownCommit); the rest
// are asked of git in one batch. For refs from elsewhere, whose names promise a
// commit and whose objects may be anything.
func (r *Repository) Commits(ctx context.Context, ids []OID) (map[OID]bool, error) {
	out := make(map[OID]bool, len(ids))
	var ask []string
	var askIDs []OID
	for _, id := range ids {
		if id.IsZero() {
			continue
		}
		if r.knownCommit(id.String()) {
			out[id] = true
			continue
		}
		ask, askIDs = append(ask, id.String()), append(askIDs, id)
	}
	err := objectInfoGit(ctx, r, ask, func(i int, o batchObject) {
		if !o.missing && o.typ == "commit" {
			out[askIDs[i]] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("read object types: %w", err)
	}
	return out, nil
}

// Config returns a config value ("" when unset).
func (r *Repository) Config(ctx context.Context, key string) string {
	return r.configIn(ctx, r.CommonDir).str(key)
}
