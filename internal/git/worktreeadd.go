package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// localAdds counts the worktrees registered in process (a test tells by it which way
// an add went).
var localAdds atomic.Int64

// A linked worktree is registered in process where that is certain to leave exactly
// what `git worktree add --detach` leaves (git 2.39: builtin/worktree.c add_worktree,
// and the `git update-ref HEAD <commit>` it runs in the new worktree), and only the
// checkout is git's: one process instead of three. The steps are git's, in git's
// order, so a kill at any point leaves a state a killed `git worktree add` leaves:
//
//  1. worktrees/<id> made with mkdir, <id> the path's base name with a number appended
//     while mkdir fails with EEXIST;
//  2. locked: the lock reason, or "initializing" (removed at the end when no reason);
//  3. the worktree directory (and its parents);
//  4. gitdir: the real path of <path>/.git; <path>/.git: "gitdir: <real common
//     dir>/worktrees/<id>"; HEAD: the null id; commondir: "../..";
//  5. update-ref's part: the reflog logs/HEAD (null id, commit, committer identity and
//     date, no message) where core.logAllRefUpdates asks for one, then HEAD: commit;
//  6. `git reset --hard --no-recurse-submodules --quiet` with GIT_DIR and
//     GIT_WORK_TREE of the new worktree, as add_worktree runs it; on failure both
//     directories are removed, as git's remove_junk does.
//
// Every file is written with git's trailing newline, through the durable writers, with
// the mode git's open(0666) gives under the umask. Anything that could make git write
// something else is left to git: a repository go-git does not open (any extension:
// sha256, reftable, worktreeConfig), an extensions.* key, a sparse checkout, a shared
// repository, core.worktree, an include of any kind, `git -c` or GIT_CONFIG in the
// environment, a checkout reached through GIT_DIR, a common dir not the user's own, a
// path with a byte outside printable ASCII, a lock reason with a NUL, a base name git
// would sanitise, a path that exists and is not an empty directory or
// that a registration names already, an identity or date git would compute from
// anything but the environment and the configuration (the account's name, an EMAIL
// variable, a date not in the form ISO 8601 UTC), a time zone Go did not load.

// addWorktreeLocal registers a detached linked worktree at path in process and, when
// checkout is set, checks it out with one git reset. done is false when git must do
// it all: nothing was written then.
func (r *Repository) addWorktreeLocal(ctx context.Context, path string, commit OID, lockReason string, checkout bool, hold *os.File) (done bool, err error) {
	if strings.ContainsRune(lockReason, 0) {
		return false, nil // git writes a reason up to its first NUL
	}
	plan, ok := r.localAddPlan(ctx, path, commit)
	if !ok {
		return false, nil
	}
	eff := effect{list: true, all: true}
	eff.note()
	defer eff.note()
	admin, ok := plan.makeAdmin()
	if !ok {
		return false, nil
	}
	// From here on git's junk rule holds: a failure removes what was made.
	if err := plan.register(admin, lockReason); err != nil {
		plan.removeJunk(admin)
		return true, err
	}
	if checkout {
		c := cmd{dir: r.CommonDir, args: []string{"reset", "--hard", "--no-recurse-submodules", "--quiet"},
			env: []string{"GIT_DIR=" + filepath.Join(path, ".git"), "GIT_WORK_TREE=" + path}, eff: &eff}
		if hold != nil {
			c.extra = []*os.File{hold}
		}
		if _, err := c.run(ctx); err != nil {
			plan.removeJunk(admin)
			return true, err
		}
	}
	if lockReason == "" {
		if err := Remove(filepath.Join(admin, "locked")); err != nil {
			return true, err
		}
	}
	localAdds.Add(1)
	return true, nil
}

// addPlan is what a local registration writes, all decided before anything is.
type addPlan struct {
	path, common, base string
	commit             OID
	reflog             string // the line of logs/HEAD, "" for none
	madeWorktree       bool   // the worktree directory did not exist
}

// localAddPlan checks every condition of a local registration; ok is false where git
// must add the worktree.
func (r *Repository) localAddPlan(ctx context.Context, path string, commit OID) (p addPlan, ok bool) {
	if !r.UsesGoGit() || r.ObjectFormat != "sha1" || r.configs == nil || len(commit.String()) != len(r.NullID()) {
		return p, false
	}
	if configInEnv() {
		return p, false
	}
	if checkoutEnv(r.CommonDir) != nil || !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return p, false
	}
	for i := 0; i < len(path); i++ {
		if path[i] < 0x20 || path[i] >= 0x7f {
			return p, false // git may precompose such a path (core.precomposeUnicode)
		}
	}
	common, err := filepath.EvalSymlinks(r.CommonDir)
	if err != nil {
		return p, false
	}
	if fi, err := os.Lstat(common); err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return p, false // safe.directory is git's to judge
	}
	for _, name := range []string{"reftable", "info/sparse-checkout"} {
		if _, err := os.Lstat(filepath.Join(common, name)); !errors.Is(err, fs.ErrNotExist) {
			return p, false
		}
	}
	// An include in the config text is declined by the list read in process
	// (pathUnregistered, below), an include git followed by the listing's keys here.
	cfg := r.configIn(ctx, r.CommonDir)
	if cfg.err != nil {
		return p, false
	}
	if slices.ContainsFunc([]string{"extensions.", "include.", "includeif.", "core.sparsecheckout", "core.sharedrepository", "core.worktree"}, cfg.hasPrefix) {
		return p, false
	}
	base := filepath.Base(path)
	if !plainWorktreeID(base) {
		return p, false
	}
	switch fi, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
		p.madeWorktree = true
	case err != nil || !fi.IsDir():
		return p, false // git says the path exists
	default:
		if names, err := readNames(path); err != nil || len(names) > 0 {
			return p, false
		}
	}
	if !r.pathUnregistered(path) {
		return p, false
	}
	p.path, p.common, p.base, p.commit = path, common, base, commit
	logs, ok := logsHead(cfg)
	if !ok {
		return p, false
	}
	if logs {
		ident, ok := committerIdent(cfg, time.Now())
		if !ok {
			return p, false
		}
		p.reflog = reflogLine(r.NullID(), commit.String(), ident, "")
	}
	return p, true
}

// readNames lists the names in dir.
func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// plainWorktreeID reports whether git's sanitize_refname_component leaves name as it
// is, judged conservatively: letters, digits, '-', '_' and inner dots, no "..", no
// ".lock" at the end.
func plainWorktreeID(name string) bool {
	if name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !letter && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// pathUnregistered reports whether no worktree of the list names path (git's
// find_worktree_by_path, which compares real paths with fspathcmp): judged on the list
// read in process, with both path and its real path compared ignoring ASCII case.
func (r *Repository) pathUnregistered(path string) bool {
	list, ok := r.listWorktreesLocal()
	if !ok {
		return false
	}
	// The real path of the deepest directory that exists, and the rest as it is.
	real, rest := path, ""
	for {
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = filepath.Join(r, rest)
			break
		} else if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(real) == real {
			return false
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = filepath.Dir(real)
	}
	for _, w := range list {
		if foldCompare(w.Path, path) == 0 || foldCompare(w.Path, real) == 0 {
			return false
		}
	}
	return true
}

// configInEnv reports whether the environment gives git configuration of its own
// (`git -c`, GIT_CONFIG_COUNT, GIT_CONFIG), which the in-process writers do not read.
func configInEnv() bool {
	for _, name := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return false
}

// reflogLine is a reflog entry as git writes it (log_ref_write_fd): the old and new ids,
// the committer's identity and date, a tab and the message when there is one.
func reflogLine(from, to, ident, msg string) string {
	line := from + " " + to + " " + ident
	if msg != "" {
		line += "\t" + msg
	}
	return line + "\n"
}

// logsHead reports whether `git update-ref HEAD` in the new worktree writes a reflog
// (core.logAllRefUpdates: unset is true in a worktree); ok is false for a value git
// would read otherwise.
func logsHead(cfg *configList) (logs, ok bool) {
	e, set := cfg.get("core.logallrefupdates")
	switch {
	case !set, e.bare:
		return true, true
	case strings.EqualFold(e.value, "always"):
		return true, true
	}
	v, ok := parseBool(e.value)
	return v, ok
}

// committerIdent is git_committer_info(0) where it comes from the environment or the
// configuration alone: "name <email> seconds +zone"; ok is false where git would ask
// the account or the host, or read a date this code does not.
func committerIdent(cfg *configList, now time.Time) (string, bool) {
	name, ok := identPart(cfg, "GIT_COMMITTER_NAME", "name", false)
	if !ok {
		return "", false
	}
	email, ok := identPart(cfg, "GIT_COMMITTER_EMAIL", "email", true)
	if !ok {
		return "", false
	}
	date, ok := identDate(now)
	if !ok {
		return "", false
	}
	return withoutCrud(name) + " <" + withoutCrud(email) + "> " + date, true
}

// identPart is one half of the identity: the variable when set (an empty name is
// git's to replace), else committer.<key>, else user.<key>, non-empty.
func identPart(cfg *configList, env, key string, emptyOK bool) (string, bool) {
	if v, set := os.LookupEnv(env); set {
		return v, v != "" || emptyOK
	}
	for _, k := range []string{"committer." + key, "user." + key} {
		if e, set := cfg.get(k); set {
			return e.value, !e.bare && e.value != ""
		}
	}
	return "", false
}

// identDate is git's date of an identity: GIT_COMMITTER_DATE in the one form read
// here (YYYY-MM-DDTHH:MM:SSZ), or now in the local zone, as "seconds +hhmm".
func identDate(now time.Time) (string, bool) {
	if v := os.Getenv("GIT_COMMITTER_DATE"); v != "" {
		t, err := time.Parse("2006-01-02T15:04:05Z", v)
		if err != nil || t.Format("2006-01-02T15:04:05Z") != v {
			return "", false
		}
		return strconv.FormatInt(t.Unix(), 10) + " +0000", true
	}
	if tz, set := os.LookupEnv("TZ"); set {
		tz = strings.TrimPrefix(tz, ":")
		if tz != "UTC" && tz != "" && time.Local.String() != tz {
			return "", false // a zone Go did not load: C's localtime may read it otherwise
		}
	}
	_, off := now.Zone()
	off /= 60
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%d %c%02d%02d", now.Unix(), sign, off/60, off%60), true
}

// withoutCrud is git's strbuf_addstr_without_crud: "crud" trimmed from both ends,
// and '<', '>' and newlines dropped from the rest.
func withoutCrud(s string) string {
	crud := func(c byte) bool { return c <= 32 || strings.IndexByte(".,:;<>\"\\'", c) >= 0 }
	for s != "" && crud(s[0]) {
		s = s[1:]
	}
	for s != "" && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return strings.Map(func(c rune) rune {
		if c == '<' || c == '>' || c == '\n' {
			return -1
		}
		return c
	}, s)
}

// makeAdmin makes worktrees/<id> as git does (mkdir, a number appended while the name
// is taken); ok is false when it could not, with nothing made.
func (p *addPlan) makeAdmin() (string, bool) {
	dir := filepath.Join(p.common, "worktrees")
	if err := MkdirAll(dir, 0o777); err != nil {
		return "", false
	}
	for n := range 1000 {
		admin := filepath.Join(dir, p.base)
		if n > 0 {
			admin += strconv.Itoa(n)
		}
		err := os.Mkdir(admin, 0o777)
		if err == nil {
			if SyncDir(dir) != nil {
				_ = os.Remove(admin)
				return "", false
			}
			return admin, true
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", false
		}
	}
	return "", false
}

// register writes the registration into admin, in git's order (see above).
func (p *addPlan) register(admin, lockReason string) error {
	fi, err := os.Stat(admin)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm() & 0o666 // open(0666) under the umask mkdir(0777) had
	line := func(s string) []byte {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		return []byte(s)
	}
	reason := lockReason
	if reason == "" {
		reason = "initializing"
	}
	if err := WriteFile(filepath.Join(admin, "locked"), line(reason), perm); err != nil {
		return err
	}
	if err := MkdirAll(p.path, 0o777); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(p.path)
	if err != nil {
		return err
	}
	id := filepath.Base(admin)
	steps := []struct{ file, data string }{
		{filepath.Join(admin, "gitdir"), filepath.Join(real, ".git")},
		{filepath.Join(p.path, ".git"), "gitdir: " + p.common + "/worktrees/" + id},
		{filepath.Join(admin, "HEAD"), strings.Repeat("0", len(p.commit.String()))},
		{filepath.Join(admin, "commondir"), "../.."},
	}
	if p.reflog != "" {
		if err := MkdirAll(filepath.Join(admin, "logs"), 0o777); err != nil {
			return err
		}
		steps = append(steps, struct{ file, data string }{filepath.Join(admin, "logs", "HEAD"), p.reflog})
	}
	steps = append(steps, struct{ file, data string }{filepath.Join(admin, "HEAD"), p.commit.String()})
	for _, s := range steps {
		if err := WriteFile(s.file, line(s.data), perm); err != nil {
			return err
		}
	}
	return nil
}

// removeJunk is git's remove_junk after a failed add: the registration and the
// worktree directory go (the directory held nothing before, or did not exist).
func (p *addPlan) removeJunk(admin string) {
	_ = os.RemoveAll(admin)
	_ = os.RemoveAll(p.path)
	_ = SyncDir(filepath.Dir(admin))
	_ = SyncDir(filepath.Dir(p.path))
}
