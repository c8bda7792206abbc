package git

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
)

// Configuration is read once per command and directory: one `git config -z --list
// --show-scope` (git's own reading, so include, includeIf and safe.directory are
// honoured as every other git call honours them), kept for the repository's common
// dir and for each worktree a command asks about, instead of one `git config --get`
// per setting. git-atlas writes no configuration itself; a long-lived front end
// (mcp, web) calls ReloadConfig before each request so that a change a person makes
// meanwhile is seen.

// configCache holds the lists read so far, by the directory git ran in.
type configCache struct {
	mu    sync.Mutex
	byDir map[string]*configList
}

// configList is one directory's configuration in the order git reads it (the last
// value of a key wins), or the error reading it gave.
type configList struct {
	entries []configEntry
	err     error
}

type configEntry struct {
	scope, key, value string
	// bare: the key has no "=" at all (an implicit true; no value for a path).
	bare bool
}

// ReloadConfig forgets the configuration read so far: the next read asks git again.
func (r *Repository) ReloadConfig() {
	if r.configs == nil {
		return
	}
	r.configs.mu.Lock()
	r.configs.byDir = nil
	r.configs.mu.Unlock()
}

// configOf is the configuration as git run in worktree w reads it: the repository's
// own when nothing can make them differ (a worktree of this repository as discover
// finds it, go-git's kind of repository, so no worktree-scope config, and no includeIf,
// whose conditions depend on the git dir and branch), else git asked in w.
func (w *Worktree) configOf(ctx context.Context) *configList {
	if _, ok := w.localGitDir(); ok {
		if l := w.Repo.configIn(ctx, w.Repo.CommonDir); l.err == nil && !l.hasPrefix("includeif.") {
			return l
		}
	}
	return w.Repo.configIn(ctx, w.Path)
}

// configIn is the configuration as git run in dir reads it, asked once per dir.
func (r *Repository) configIn(ctx context.Context, dir string) *configList {
	if r.configs == nil {
		return readConfigList(ctx, dir)
	}
	r.configs.mu.Lock()
	defer r.configs.mu.Unlock()
	if l, ok := r.configs.byDir[dir]; ok {
		return l
	}
	var l *configList
	if dir == r.CommonDir {
		l = r.storedConfig(ctx) // kept between commands (configstore.go)
	} else {
		l = readConfigList(ctx, dir)
	}
	if ctx.Err() != nil {
		return l // a cancelled read is not the configuration
	}
	if r.configs.byDir == nil {
		r.configs.byDir = map[string]*configList{}
	}
	r.configs.byDir[dir] = l
	return l
}

func readConfigList(ctx context.Context, dir string) *configList {
	out, err := listConfig(ctx, dir)
	if err != nil {
		return &configList{err: err}
	}
	return &configList{entries: entriesOf(parseOriginList(out))}
}

// listConfig is git's listing of the configuration in dir, each entry with its
// scope and origin (parseOriginList reads it; the origins are what a kept listing
// watches, configstore.go).
func listConfig(ctx context.Context, dir string) ([]byte, error) {
	return cmd{dir: dir, args: []string{"config", "-z", "--list", "--show-origin", "--show-scope"}}.run(ctx)
}

// canonicalKey is key as git lists it: section and variable name in lower case, a
// subsection as written.
func canonicalKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// all is every value of key, in order.
func (l *configList) all(key string) []configEntry {
	key = canonicalKey(key)
	var vals []configEntry
	for _, e := range l.entries {
		if e.key == key {
			vals = append(vals, e)
		}
	}
	return vals
}

// get is the value of key that wins (the last), and whether it is set.
func (l *configList) get(key string) (configEntry, bool) {
	vals := l.all(key)
	if len(vals) == 0 {
		return configEntry{}, false
	}
	return vals[len(vals)-1], true
}

// hasPrefix reports whether any key begins with prefix (in git's lower-case form).
func (l *configList) hasPrefix(prefix string) bool {
	for _, e := range l.entries {
		if strings.HasPrefix(e.key, prefix) {
			return true
		}
	}
	return false
}

// keysWithPrefix lists the keys that begin with prefix, in order.
func (l *configList) keysWithPrefix(prefix string) []string {
	var keys []string
	for _, e := range l.entries {
		if strings.HasPrefix(e.key, prefix) {
			keys = append(keys, e.key)
		}
	}
	return keys
}

// str is key's value as `git config --get` prints it ("" when unset or
// unreadable).
func (l *configList) str(key string) string {
	if l.err != nil {
		return ""
	}
	e, _ := l.get(key)
	return strings.TrimSpace(e.value)
}

// boolean is key's value as `git config --type=bool --get` run in dir reads it, def
// when it is unset or not a boolean git accepts.
func (l *configList) boolean(ctx context.Context, dir, key string, def bool) bool {
	if l.err != nil {
		return def
	}
	e, ok := l.get(key)
	if !ok {
		return def
	}
	if e.bare {
		return true
	}
	if b, ok := parseBool(e.value); ok {
		return b
	}
	// A form parseBool does not read (hexadecimal, octal): git's answer.
	out, err := cmd{dir: dir, args: []string{"config", "--type=bool", "--get", key}}.run(ctx)
	if err != nil {
		return def
	}
	return strings.TrimSpace(string(out)) == "true"
}

// parseBool reads a boolean as git does (git_parse_maybe_bool, then an integer with
// an optional k, m or g unit); ok is false for anything git would refuse.
func parseBool(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	s := strings.TrimRight(strings.ToLower(v), "kmg")
	if len(v)-len(s) > 1 || s == "" {
		return false, false
	}
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	zero := s != ""
	for _, c := range s {
		if c < '0' || c > '9' {
			return false, false
		}
		zero = zero && c == '0'
	}
	return !zero, s != ""
}

// expandPath is a path-typed value as `git config --type=path` prints it: a leading
// "~/" (or "~" alone) is the home directory. ok is false where git's own answer is
// needed ("~user", "%(prefix)/", no HOME).
func expandPath(v string) (string, bool) {
	if v != "~" && !strings.HasPrefix(v, "~/") {
		return v, !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "%(prefix)/")
	}
	home := os.Getenv("HOME")
	if home == "" {
		return "", false
	}
	return strings.TrimSuffix(home, "/") + v[1:], true
}

// ConfigPath reads the path-typed config value key (as `git config --type=path
// --get`, so ~ is expanded); set is false when key is not set.
func (r *Repository) ConfigPath(ctx context.Context, key string) (value string, set bool, err error) {
	l := r.configIn(ctx, r.CommonDir)
	if l.err != nil {
		return "", false, l.err
	}
	e, ok := l.get(key)
	if !ok {
		return "", false, nil
	}
	if v, ok := expandPath(e.value); ok && !e.bare {
		return v, true, nil
	}
	return r.configPathFromGit(ctx, key)
}

func (r *Repository) configPathFromGit(ctx context.Context, key string) (value string, set bool, err error) {
	out, err := r.git(ctx, "config", "--type=path", "--get", key)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimRight(string(out), "\n"), true, nil
}

// ConfigValue is one value of a multi-valued config key and the scope that set it
// ("local", "worktree", "global", "system" or "command").
type ConfigValue struct {
	Scope, Value string
}

// ConfigPathAll reads every path-typed value of key with its scope, in the order git
// reads them (the last one wins); none when key is not set.
func (r *Repository) ConfigPathAll(ctx context.Context, key string) ([]ConfigValue, error) {
	l := r.configIn(ctx, r.CommonDir)
	if l.err != nil {
		return nil, l.err
	}
	var vals []ConfigValue
	for _, e := range l.all(key) {
		v, ok := expandPath(e.value)
		if !ok || e.bare {
			return r.configPathAllFromGit(ctx, key)
		}
		vals = append(vals, ConfigValue{Scope: e.scope, Value: v})
	}
	return vals, nil
}

func (r *Repository) configPathAllFromGit(ctx context.Context, key string) ([]ConfigValue, error) {
	out, err := r.git(ctx, "config", "--show-scope", "--type=path", "--get-all", key)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var vals []ConfigValue
	for line := range strings.SplitSeq(strings.TrimRight(string(out), "\n"), "\n") {
		if scope, v, ok := strings.Cut(line, "\t"); ok {
			vals = append(vals, ConfigValue{Scope: scope, Value: v})
		}
	}
	return vals, nil
}
