package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The repository's configuration as git lists it is kept between commands in the
// cache file "config" (Layout.Cache), and used instead of starting `git config` only
// when it is certainly still git's answer: git's answer is a function of the git
// binary, the environment, the directory git runs in and the files it reads, so the
// record is keyed by all of them and checked by a handful of stats.
//
//   - The key: the git binary that would run (its path; its identity is a watched
//     file), every variable of git's environment whose name begins with GIT_ (GIT_CONFIG,
//     GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM, GIT_CONFIG_COUNT and
//     GIT_CONFIG_KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS, GIT_DIR, GIT_COMMON_DIR,
//     GIT_WORK_TREE, GIT_CEILING_DIRECTORIES, GIT_DISCOVERY_ACROSS_FILESYSTEM, and the
//     rest), HOME, XDG_CONFIG_HOME, SUDO_UID (safe.directory as root) and Windows' home
//     variables, the effective user, the directory git runs in (the common dir) and its
//     real path (includeIf "gitdir:").
//   - Watched files, existing or not, by identity (device, inode, size, modification and
//     change times in nanoseconds, mode, owner): the git binary, the system file, both
//     global candidates (or GIT_CONFIG_GLOBAL's), the local config and config.worktree,
//     every file an entry came from, every include.path and includeIf.*.path target
//     resolved as git resolves it, and the common dir's own .git and commondir (which
//     would change what git discovers there). The common dir's owner (safe.directory),
//     and git's test of a git dir there (isGitDir), are checked too.
//   - HEAD's content when an includeIf "onbranch:" is present. Any other condition than
//     gitdir, gitdir/i, onbranch and hasconfig:remote.*.url, an include path git
//     resolves in a way the key cannot follow (~user, %(prefix)/), GIT_CONFIG (which makes
//     `git config` read one file alone), a HOME that is not set: no record.
//   - Racy files, as git's racy index: a file changed after the record's stamp could keep
//     the identity it had if its new times fall in the same tick as the old. The stamp is
//     the modification time the record's temporary file got when it was made, before git
//     ran (the same file clock as every other file's times); a record is written, and
//     used, only when every watched file's modification and change times are older than
//     the stamp by more than that file system's granularity (racyMargin), so that any
//     change after the stamp shows as a new time.
//
// A record that is torn, foreign (another format), altered (its checksum) or stale is
// ignored: git is asked and the record replaced.
const configRecordName = "config"

// configRecordHeader begins every record; another first line is a foreign file.
const configRecordHeader = "git-atlas config cache 1"

// fileID is what a watched file is known by: absent, or a regular file or directory
// with its identity.
type fileID struct {
	exists bool
	dev    uint64
	ino    uint64
	size   int64
	mtime  [2]int64 // seconds, nanoseconds
	ctime  [2]int64
	mode   uint32
	uid    uint32
}

func (id fileID) String() string {
	if !id.exists {
		return "-"
	}
	return fmt.Sprintf("%d %d %d %d.%09d %d.%09d %o %d", id.dev, id.ino, id.size, id.mtime[0], id.mtime[1], id.ctime[0], id.ctime[1], id.mode, id.uid)
}

// racyMargin is how much older than the stamp a file's times must be: twice the
// largest power of ten (up to a second) that divides the nanoseconds of both its
// times. A file system's timestamps are multiples of its granularity (one
// nanosecond on ext4, xfs, btrfs and tmpfs; 100 ns on NTFS; 10 ms on exFAT; one
// second on ext3 and HFS+, whose nanoseconds are always zero; two seconds on FAT),
// so the largest power of ten dividing them is at least half the granularity in
// each of these forms, and the margin at least the granularity: a time taken after
// the stamp falls in a tick that is after the file's.
func racyMargin(id fileID) time.Duration {
	unit := int64(time.Second)
	for unit > 1 && (id.mtime[1]%unit != 0 || id.ctime[1]%unit != 0) {
		unit /= 10
	}
	return 2 * time.Duration(unit)
}

// racy reports whether id's times are not certainly older than stamp.
func (id fileID) racy(stamp time.Time) bool {
	if !id.exists {
		return false
	}
	limit := stamp.Add(-racyMargin(id))
	return !time.Unix(id.mtime[0], id.mtime[1]).Before(limit) || !time.Unix(id.ctime[0], id.ctime[1]).Before(limit)
}

// configRecord is the cache file's content.
type configRecord struct {
	key    string
	system string // the system file git reads, "" for none
	stamp  time.Time
	files  []watched
	head   []byte // HEAD's content, when an includeIf onbranch needs it
	onHead bool
	list   []byte // `git config -z --list --show-origin --show-scope` as git printed it
}

type watched struct {
	path string
	id   fileID
}

func (rec *configRecord) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nkey %s\nsystem %s\nstamp %d %d\n", configRecordHeader, rec.key, hex.EncodeToString([]byte(rec.system)), rec.stamp.Unix(), rec.stamp.Nanosecond())
	for _, w := range rec.files {
		fmt.Fprintf(&b, "file %s %s\n", hex.EncodeToString([]byte(w.path)), w.id)
	}
	if rec.onHead {
		fmt.Fprintf(&b, "head %s\n", hex.EncodeToString(rec.head))
	}
	fmt.Fprintf(&b, "list %s\n", hex.EncodeToString(rec.list))
	sum := sha256.Sum256(b.Bytes())
	fmt.Fprintf(&b, "sum %s\n", hex.EncodeToString(sum[:]))
	return b.Bytes()
}

// decodeConfigRecord reads a record, refusing anything torn, foreign or altered.
func decodeConfigRecord(data []byte) (*configRecord, error) {
	body, sumLine, ok := cutLastLine(data)
	if !ok {
		return nil, errors.New("config record: torn")
	}
	sum := sha256.Sum256(body)
	if sumLine != "sum "+hex.EncodeToString(sum[:]) {
		return nil, errors.New("config record: checksum")
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) < 5 || lines[0] != configRecordHeader {
		return nil, errors.New("config record: foreign")
	}
	rec := &configRecord{}
	for _, line := range lines[1:] {
		tag, rest, _ := strings.Cut(line, " ")
		f := strings.Fields(rest)
		var err error
		switch {
		case tag == "key" && len(f) == 1:
			rec.key = f[0]
		case tag == "system" && len(f) <= 1:
			var p []byte
			p, err = hex.DecodeString(rest)
			rec.system = string(p)
		case tag == "stamp" && len(f) == 2:
			var s, ns int64
			s, err = strconv.ParseInt(f[0], 10, 64)
			if err == nil {
				ns, err = strconv.ParseInt(f[1], 10, 64)
			}
			rec.stamp = time.Unix(s, ns)
		case tag == "file" && len(f) >= 2:
			var w watched
			w, err = decodeWatched(f)
			rec.files = append(rec.files, w)
		case tag == "head" && len(f) <= 1:
			rec.head, err = hex.DecodeString(rest)
			rec.onHead = true
		case tag == "list" && len(f) <= 1:
			rec.list, err = hex.DecodeString(rest)
		default:
			err = errors.New("unknown line")
		}
		if err != nil {
			return nil, fmt.Errorf("config record: %q: %w", line, err)
		}
	}
	if rec.key == "" || rec.stamp.IsZero() {
		return nil, errors.New("config record: incomplete")
	}
	return rec, nil
}

// cutLastLine splits data into everything before its last line and that line (which
// must end in a newline).
func cutLastLine(data []byte) (body []byte, last string, ok bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return data[:i+1], string(data[i+1 : len(data)-1]), true
}

func decodeWatched(f []string) (watched, error) {
	p, err := hex.DecodeString(f[0])
	if err != nil || len(p) == 0 {
		return watched{}, errors.New("bad path")
	}
	w := watched{path: string(p)}
	if len(f) == 2 && f[1] == "-" {
		return w, nil
	}
	if len(f) != 8 {
		return watched{}, errors.New("bad identity")
	}
	id := fileID{exists: true}
	var errs [8]error
	id.dev, errs[0] = strconv.ParseUint(f[1], 10, 64)
	id.ino, errs[1] = strconv.ParseUint(f[2], 10, 64)
	id.size, errs[2] = strconv.ParseInt(f[3], 10, 64)
	id.mtime, errs[3] = parseStamp(f[4])
	id.ctime, errs[4] = parseStamp(f[5])
	var mode, uid uint64
	mode, errs[5] = strconv.ParseUint(f[6], 8, 32)
	uid, errs[6] = strconv.ParseUint(f[7], 10, 32)
	id.mode, id.uid = uint32(mode), uint32(uid)
	if err := errors.Join(errs[:]...); err != nil {
		return watched{}, err
	}
	w.id = id
	return w, nil
}

func parseStamp(s string) ([2]int64, error) {
	sec, nsec, ok := strings.Cut(s, ".")
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(nsec, 10, 64)
	if !ok || err1 != nil || err2 != nil || len(nsec) != 9 {
		return [2]int64{}, errors.New("bad time")
	}
	return [2]int64{a, b}, nil
}

// configKeyEnv are the variables outside GIT_* that git's reading of configuration
// depends on.
var configKeyEnv = []string{"HOME", "XDG_CONFIG_HOME", "SUDO_UID", "USERPROFILE", "HOMEDRIVE", "HOMEPATH"}

// configContext is what a record is checked against: computed at each read, from the
// environment git would get and the directory it would run in.
type configContext struct {
	dir, git string
	env      map[string]string
	key      string
}

// newConfigContext is the context of a `git config` run in dir with environ (git's
// whole environment, a later value of a name winning as exec does); ok is false when
// no record may stand for git's answer.
func newConfigContext(dir string, environ []string) (*configContext, bool) {
	env := map[string]string{}
	for _, kv := range environ {
		if name, v, ok := strings.Cut(kv, "="); ok {
			env[name] = v
		}
	}
	if _, set := env["GIT_CONFIG"]; set || env["HOME"] == "" {
		return nil, false
	}
	bin, err := exec.LookPath("git")
	if err != nil || !filepath.IsAbs(bin) {
		return nil, false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, false
	}
	var names []string
	for name := range env {
		if strings.HasPrefix(name, "GIT_") || slices.Contains(configKeyEnv, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	fmt.Fprintf(h, "git\x00%s\x00dir\x00%s\x00real\x00%s\x00euid\x00%d\x00", bin, dir, real, os.Geteuid())
	for _, name := range names {
		fmt.Fprintf(h, "%s=%s\x00", name, env[name])
	}
	return &configContext{dir: dir, git: bin, env: env, key: hex.EncodeToString(h.Sum(nil))}, true
}

// abs is path as git, run in c.dir, reaches it.
func (c *configContext) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(c.dir, path)
}

// fixedFiles are the files whose identity matters whatever the listing says: the
// binary, the system file (system, "" for none), the global candidates, the local
// and worktree config, and the common dir's .git and commondir (absent, or git
// would discover something else).
func (c *configContext) fixedFiles(system string) []string {
	files := []string{c.git}
	if system != "" {
		files = append(files, system)
	}
	if g, set := c.env["GIT_CONFIG_GLOBAL"]; set {
		if g != "" {
			files = append(files, c.abs(g))
		}
	} else {
		xdg := c.env["XDG_CONFIG_HOME"]
		if xdg == "" {
			xdg = filepath.Join(c.env["HOME"], ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(c.env["HOME"], ".gitconfig"))
	}
	return append(files, filepath.Join(c.dir, "config"), filepath.Join(c.dir, "config.worktree"),
		filepath.Join(c.dir, ".git"), filepath.Join(c.dir, "commondir"))
}

// noSystem reports whether git reads no system file (GIT_CONFIG_NOSYSTEM, read as
// git reads a boolean); ok is false for a value git refuses.
func (c *configContext) noSystem() (none, ok bool) {
	v, set := c.env["GIT_CONFIG_NOSYSTEM"]
	if !set {
		return false, true
	}
	return parseBool(v)
}

// repoReadable is git's discovery in c.dir, as the record needs it unchanged: a git
// dir (isGitDir), owned by this user, with nothing at .git or commondir.
func (c *configContext) repoReadable() ([]byte, bool) {
	if !isGitDir(c.dir, c.dir) {
		return nil, false
	}
	if fi, err := os.Lstat(filepath.Join(c.dir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	head, err := os.ReadFile(filepath.Join(c.dir, "HEAD"))
	return head, err == nil
}

// fresh reports whether rec is git's answer in context c now.
func (rec *configRecord) fresh(c *configContext) bool {
	if rec.key != c.key {
		return false
	}
	head, ok := c.repoReadable()
	if !ok || rec.onHead && !bytes.Equal(head, rec.head) {
		return false
	}
	for _, w := range rec.files {
		id, ok := statID(w.path)
		if !ok || id != w.id || id.racy(rec.stamp) {
			return false
		}
	}
	return true
}

// originEntry is a configEntry with the origin git printed for it.
type originEntry struct {
	configEntry
	origin string
}

// parseOriginList reads `git config -z --list --show-origin --show-scope`: per entry
// the scope, NUL, the origin, NUL, then the key, and either a newline and the value
// or nothing (a bare key), then NUL.
func parseOriginList(out []byte) []originEntry {
	fields := strings.Split(string(out), "\x00")
	var list []originEntry
	for i := 0; i+2 < len(fields); i += 3 {
		e := originEntry{origin: fields[i+1], configEntry: configEntry{scope: fields[i]}}
		if k, v, ok := strings.Cut(fields[i+2], "\n"); ok {
			e.key, e.value = k, v
		} else {
			e.key, e.bare = fields[i+2], true
		}
		list = append(list, e)
	}
	return list
}

func entriesOf(list []originEntry) []configEntry {
	entries := make([]configEntry, len(list))
	for i, e := range list {
		entries[i] = e.configEntry
	}
	return entries
}

// listedFiles are the files the listing depends on beyond the fixed ones: every file
// an entry came from and every include target, resolved as git does (relative to the
// including file, "~/" from HOME). onHead is true when an includeIf onbranch makes
// HEAD part of the answer. ok is false for anything the record cannot follow.
func (c *configContext) listedFiles(list []originEntry) (files []string, onHead, ok bool) {
	for _, e := range list {
		from, isFile := strings.CutPrefix(e.origin, "file:")
		switch {
		case isFile && from != "":
			files = append(files, c.abs(from))
		case e.origin == "command line:":
		default:
			return nil, false, false
		}
		var include bool
		switch {
		case e.key == "include.path":
			include = true
		case strings.HasPrefix(e.key, "includeif.") && strings.HasSuffix(e.key, ".path"):
			include = true
			cond := strings.TrimSuffix(strings.TrimPrefix(e.key, "includeif."), ".path")
			switch {
			case strings.HasPrefix(cond, "onbranch:"):
				onHead = true
			case strings.HasPrefix(cond, "gitdir:"), strings.HasPrefix(cond, "gitdir/i:"), strings.HasPrefix(cond, "hasconfig:remote.*.url:"):
			default:
				return nil, false, false
			}
		}
		if !include {
			continue
		}
		target, ok := c.includeTarget(e, from, isFile)
		if !ok {
			return nil, false, false
		}
		files = append(files, target)
	}
	return files, onHead, true
}

// includeTarget is the file an include entry names, as git's handle_path_include
// finds it.
func (c *configContext) includeTarget(e originEntry, from string, isFile bool) (string, bool) {
	p := e.value
	switch {
	case e.bare || p == "":
		return "", false
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = c.env["HOME"] + p[1:]
	case strings.HasPrefix(p, "~") || strings.HasPrefix(p, "%(prefix)/"):
		return "", false
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	if !isFile || from == "" {
		return "", false
	}
	return c.abs(filepath.Join(filepath.Dir(from), p)), true
}

// storedConfig is the configuration as git run in r.CommonDir lists it: the record
// when it is fresh, else git's answer, recorded when it can be.
func (r *Repository) storedConfig(ctx context.Context) *configList {
	dir := r.CommonDir
	if !configRecords {
		return readConfigList(ctx, dir)
	}
	c, ok := newConfigContext(dir, append(baseEnv(), checkoutEnv(dir)...))
	if !ok {
		return readConfigList(ctx, dir)
	}
	path := r.Layout().Cache(configRecordName)
	var prev *configRecord
	if data, err := os.ReadFile(path); err == nil {
		if rec, err := decodeConfigRecord(data); err == nil {
			if rec.fresh(c) {
				return &configList{entries: entriesOf(parseOriginList(rec.list))}
			}
			prev = rec
		}
	}
	return r.recordConfig(ctx, c, path, prev)
}

// recordConfig asks git for the listing and writes its record when every file it
// depends on is known and not racy. prev (nil for none) is the record found stale:
// its system file is this git's still when its key is the same.
func (r *Repository) recordConfig(ctx context.Context, c *configContext, path string, prev *configRecord) *configList {
	f, err := CreateFile(path, 0o600) // the stamp: made before git runs
	if err != nil {
		return readConfigList(ctx, c.dir)
	}
	defer f.Abort()
	stampID, ok := fstatID(f.File)
	if !ok {
		return readConfigList(ctx, c.dir)
	}
	out, err := listConfig(ctx, c.dir)
	if err != nil {
		return &configList{err: err}
	}
	list := parseOriginList(out)
	l := &configList{entries: entriesOf(list)}
	system, ok := r.systemConfig(ctx, c, list, prev)
	if !ok {
		return l
	}
	listed, onHead, ok := c.listedFiles(list)
	if !ok {
		return l
	}
	rec := &configRecord{key: c.key, system: system, stamp: time.Unix(stampID.mtime[0], stampID.mtime[1]), list: out, onHead: onHead}
	head, ok := c.repoReadable()
	if !ok {
		return l
	}
	if onHead {
		if slices.ContainsFunc(list, func(e originEntry) bool { return e.key == "extensions.refstorage" }) {
			return l // HEAD is not the file
		}
		rec.head = head
	}
	seen := map[string]bool{}
	for _, p := range append(c.fixedFiles(system), listed...) {
		if seen[p] {
			continue
		}
		seen[p] = true
		id, ok := statID(p)
		if !ok || id.racy(rec.stamp) {
			return l
		}
		rec.files = append(rec.files, watched{path: p, id: id})
	}
	for _, p := range []string{filepath.Join(c.dir, ".git"), filepath.Join(c.dir, "commondir")} {
		if id, _ := statID(p); id.exists {
			return l
		}
	}
	if _, err := f.Write(rec.encode()); err == nil && f.Commit() == nil {
		// The temporary files of writers killed before they committed.
		temps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+configRecordName+".tmp-*"))
		for _, t := range temps {
			if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) > staleTemp {
				_ = os.Remove(t)
			}
		}
	}
	return l
}

// systemConfig is the system file git reads ("" for none): none under
// GIT_CONFIG_NOSYSTEM, GIT_CONFIG_SYSTEM's when set, else the origin of a system entry
// of the listing, the previous record's under the same key, or git's own answer
// (`git config --system --edit` with an editor that prints the file's name).
func (r *Repository) systemConfig(ctx context.Context, c *configContext, list []originEntry, prev *configRecord) (string, bool) {
	none, ok := c.noSystem()
	switch {
	case !ok:
		return "", false
	case none:
		return "", true
	}
	if p, set := c.env["GIT_CONFIG_SYSTEM"]; set {
		if p == "" {
			return "", true
		}
		return c.abs(p), true
	}
	for _, e := range list {
		if from, ok := strings.CutPrefix(e.origin, "file:"); ok && e.scope == "system" && from != "" {
			return c.abs(from), true
		}
	}
	if prev != nil && prev.key == c.key && prev.system != "" {
		return prev.system, true
	}
	out, err := cmd{dir: c.dir, env: []string{"GIT_EDITOR=printf %s"}, args: []string{"config", "--system", "--edit"}}.run(ctx)
	if err != nil || len(out) == 0 || bytes.ContainsAny(out, "\n\x00") {
		return "", false
	}
	return c.abs(string(out)), true
}

// statID is path's identity as stat (following links, as git's fopen does) gives
// it; absent when nothing is there (or a part of the path is not a directory). ok is
// false for anything else: an error, or something that is neither a regular file nor
// absent.
func statID(path string) (fileID, bool) {
	id, err := statFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir):
		return fileID{}, true
	case err != nil:
		return fileID{}, false
	}
	return id, id.mode&0o170000 == 0o100000
}
