package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// This file holds what snapshots need to keep the bytes on disk rather than git's
// converted content (core.autocrlf, text/eol, clean/smudge filters, ident,
// working-tree-encoding all apply on the way in and out of the index): knowing when
// no conversion can apply, writing files' bytes as blobs with every conversion off,
// and writing blobs back into files verbatim.

// Conversions reports why git could convert a file's bytes on their way into or out
// of this worktree's index ("" when it provably cannot). Conversions come from two
// places only: core.autocrlf (config) and attributes (text, eol, filter, ident,
// working-tree-encoding; core.eol alone converts nothing, it only picks the ending
// for files the text attribute marks). Attributes are read from .gitattributes files
// in the tree, $GIT_COMMON_DIR/info/attributes, core.attributesFile (default
// $XDG_CONFIG_HOME/git/attributes) and the system file, which the snapshot's calls
// switch off (GIT_ATTR_NOSYSTEM). A filter driver is moreover inert unless configured,
// so with no filter.* config `git add` can run no external command. tracked lists the
// index's paths (a .gitattributes among them counts); an untracked .gitattributes can
// only bring git's internal conversions, which the snapshot's byte-exact read-back
// catches (the capture is then taken again without git's conversion machinery).
func (w *Worktree) Conversions(ctx context.Context, tracked []string) (string, error) {
	if v := strings.ToLower(w.config(ctx, "core.autocrlf")); v != "" && v != "false" && v != "no" && v != "off" && v != "0" {
		return "core.autocrlf=" + v, nil
	}
	cfg := w.configOf(ctx)
	if cfg.err != nil {
		return "", cfg.err
	}
	if cfg.hasPrefix("filter.") {
		return "filter drivers are configured", nil
	}
	for _, p := range tracked {
		if p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes") {
			return "attributes in " + p, nil
		}
	}
	if _, err := os.Stat(filepath.Join(w.Repo.CommonDir, "info", "attributes")); err == nil {
		return "attributes in info/attributes", nil
	}
	global := w.config(ctx, "core.attributesFile")
	if global == "" {
		if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
			global = filepath.Join(xdg, "git", "attributes")
		} else if home := os.Getenv("HOME"); home != "" {
			global = filepath.Join(home, ".config", "git", "attributes")
		}
	} else if rest, ok := strings.CutPrefix(global, "~/"); ok {
		global = filepath.Join(os.Getenv("HOME"), rest)
	}
	if global != "" {
		if _, err := os.Stat(global); err == nil {
			return "attributes in " + global, nil
		}
	}
	return "", nil
}

// conversionAttributes are the attributes under which a checkout may write other
// bytes than a file's blob: a filter, ident, line-ending conversion, an encoding.
var conversionAttributes = []string{"filter", "ident", "eol", "text", "crlf", "working-tree-encoding"}

// Converted returns those of paths (relative to the worktree's root) that an
// attribute of the worktree (its .gitattributes files, tracked or not, and the
// repository's, as Conversions looks for them) marks for a conversion at checkout,
// whatever the configuration says now: a file checked out under one may hold other
// bytes than its blob while its stat data are what the index recorded.
func (w *Worktree) Converted(ctx context.Context, paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(paths) == 0 {
		return out, nil
	}
	args := append([]string{"check-attr", "-z", "--stdin"}, conversionAttributes...)
	got, err := w.git(ctx, []string{noSystemAttributes}, nulJoin(paths), args...)
	if err != nil {
		return nil, err
	}
	f := bytes.Split(got, []byte{0})
	for i := 0; i+2 < len(f); i += 3 { // path, attribute, value
		if v := string(f[i+2]); v != "unspecified" && v != "unset" {
			out[string(f[i])] = true
		}
	}
	return out, nil
}

func (w *Worktree) config(ctx context.Context, key string) string {
	return w.configOf(ctx).str(key)
}

// noSystemAttributes keeps the system-wide gitattributes out of snapshot calls, so
// Conversions need not find it.
var noSystemAttributes = "GIT_ATTR_NOSYSTEM=1"

// Others lists the worktree's untracked files that are not ignored, as the temporary
// index sees them; a nested repository is one entry ending in "/". ls-files reads no
// file's content, so no conversion or filter runs.
func (t *TempIndex) Others(ctx context.Context) ([]string, error) {
	out, err := t.git(ctx, nil, nil, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	return nulSplit(out), nil
}

// WriteRawBlobs writes the bytes of files of the working tree dir as blobs, every
// conversion off (`hash-object --no-filters`: no autocrlf, attributes or filters),
// and returns their ids in order.
func (r *Repository) WriteRawBlobs(ctx context.Context, dir string, paths []string) ([]string, error) {
	ids := make([]string, len(paths))
	var in bytes.Buffer
	var batch []int
	for i, p := range paths {
		if strings.ContainsAny(p, "\n") {
			// --stdin-paths reads one name a line: such a name goes on its own.
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return nil, err
			}
			id, err := r.WriteBlob(ctx, data)
			if err != nil {
				return nil, err
			}
			ids[i] = id.String()
			continue
		}
		in.WriteString(p)
		in.WriteByte('\n')
		batch = append(batch, i)
	}
	if len(batch) == 0 {
		return ids, nil
	}
	start := time.Now()
	out, err := cmd{dir: dir, args: []string{"--git-dir=" + r.CommonDir, "--work-tree=" + dir,
		"hash-object", "-w", "--no-filters", "--stdin-paths"}, stdin: in.Bytes()}.run(ctx)
	if err := r.objectsWritten(start, err); err != nil {
		return nil, err
	}
	got := strings.Fields(string(out))
	if len(got) != len(batch) {
		return nil, fmt.Errorf("hash-object: %d ids for %d paths", len(got), len(batch))
	}
	for k, i := range batch {
		ids[i] = got[k]
	}
	return ids, nil
}

// NestedHead returns the HEAD commit of the repository whose top level is dir (a
// nested repository or a checked-out submodule), or "" when dir is not the top of a
// repository or its HEAD is unborn.
func (r *Repository) NestedHead(ctx context.Context, dir string) string {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return ""
	}
	out, err := cmd{dir: dir, args: []string{"rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"}}.run(ctx)
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return ""
	}
	top, err1 := filepath.EvalSymlinks(f[0])
	want, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil || top != want {
		return ""
	}
	return f[1]
}

// filtersOff is config for git calls that move bytes between the index and files,
// or re-read files to compare them, without running the user's filters (which may be
// slow, fail, or have side effects): every configured filter driver emptied and not
// required. git's own conversions (autocrlf, text, eol, ident, encoding) cannot all be
// switched off by config and run no program; callers that need exact bytes write or
// hash them themselves (WriteTreeFiles, the snapshot's raw capture).
func (r *Repository) filtersOff(ctx context.Context) []string {
	var args []string
	cfg := r.configIn(ctx, r.CommonDir)
	if cfg.err != nil {
		return args
	}
	seen := map[string]bool{}
	for _, key := range cfg.keysWithPrefix("filter.") {
		i := strings.LastIndexByte(key, '.')
		if i <= len("filter.") {
			continue
		}
		name := key[:i] // filter.<driver>, the driver name may hold dots
		if seen[name] {
			continue
		}
		seen[name] = true
		args = append(args, "-c", name+".clean=", "-c", name+".smudge=", "-c", name+".process=", "-c", name+".required=false")
	}
	return args
}

// AddWorktreeNoCheckout adds a detached linked worktree at commit without checking any
// file out (and so without running the user's smudge filters): for a restore that
// writes the files itself (ResetTo). git's --no-checkout registers the worktree
// as a checkout does and skips only the reset: the same local registration applies.
func (r *Repository) AddWorktreeNoCheckout(ctx context.Context, path string, commit OID) error {
	start := time.Now()
	if done, err := r.addWorktreeLocal(ctx, path, commit, "", false, nil); done {
		return r.worktreeAdded(start, path, err)
	}
	_, err := r.runWorktree(ctx, cmd{dir: r.CommonDir, args: []string{"worktree", "add", "--quiet", "--detach", "--no-checkout", "--end-of-options", path, commit.String()}})
	return r.worktreeAdded(start, path, err)
}

// ConvertedOnDisk returns the files of the worktree's index (stage 0, not links)
// whose size, as git recorded it when it last wrote the file or looked at it, is not
// their blob's size, and that no conversion this repository configures now explains:
// files checked out through a conversion (line endings, ident, an encoding, a filter)
// whose configuration is gone since, or that came only from the system or global
// attributes file. git's status calls such a file clean while its stat data match,
// yet its bytes on disk are not its blob's, and no checkout gives them back: they
// are kept only by a snapshot. A conversion explains a file when core.autocrlf is
// true, or when the repository's own attributes (.gitattributes of the worktree,
// info/attributes) mark it for one (a filter only when its smudge is configured).
// An index this code does not read whole (a split index, another version) cannot be
// judged: all is true then, and the caller keeps the worktree's bytes.
func (w *Worktree) ConvertedOnDisk(ctx context.Context) (paths []string, all bool, err error) {
	gitDir, err := w.GitDir(ctx)
	if err != nil {
		return nil, false, err
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil // no index: no file was checked out
	}
	if err != nil {
		return nil, false, err
	}
	entries, split, err := readIndexEntries(data, w.Repo.ObjectFormat == "sha256")
	if err != nil || split {
		return nil, true, nil
	}
	var ids []OID
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.stat.Mode == "120000" || seen[e.stat.ID] {
			continue // a link's target is never converted
		}
		seen[e.stat.ID] = true
		id, err := ParseOID(e.stat.ID)
		if err != nil {
			return nil, true, nil
		}
		ids = append(ids, id)
	}
	sizes, missing, err := w.Repo.ObjectSizes(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	if len(missing) > 0 {
		return nil, true, nil // a blob the index names is gone: its file is all there is
	}
	var differ []string
	for _, e := range entries {
		size, ok := sizes[e.stat.ID]
		if e.stat.Mode != "120000" && ok && uint32(size) != e.stat.Size {
			differ = append(differ, e.path)
		}
	}
	if len(differ) == 0 || strings.EqualFold(w.config(ctx, "core.autocrlf"), "true") {
		return nil, false, nil
	}
	explained, err := w.convertedByRepository(ctx, differ)
	if err != nil {
		return nil, false, err
	}
	for _, p := range differ {
		if !explained[p] {
			paths = append(paths, p)
		}
	}
	return paths, false, nil
}

// convertedByRepository is Converted with only the repository's own attributes (no
// system or global attributes file), and a filter counted only when its smudge
// command is configured: what a checkout of this repository converts, wherever it
// runs.
func (w *Worktree) convertedByRepository(ctx context.Context, paths []string) (map[string]bool, error) {
	args := append([]string{"-c", "core.attributesFile=" + os.DevNull, "check-attr", "-z", "--stdin"}, conversionAttributes...)
	got, err := w.git(ctx, []string{noSystemAttributes}, nulJoin(paths), args...)
	if err != nil {
		return nil, err
	}
	cfg := w.configOf(ctx)
	out := map[string]bool{}
	f := bytes.Split(got, []byte{0})
	for i := 0; i+2 < len(f); i += 3 { // path, attribute, value
		attr, v := string(f[i+1]), string(f[i+2])
		if v == "unspecified" || v == "unset" {
			continue
		}
		if attr == "filter" && cfg.str("filter."+v+".smudge") == "" && cfg.str("filter."+v+".process") == "" {
			continue // a driver not configured converts nothing
		}
		out[string(f[i])] = true
	}
	return out, nil
}
