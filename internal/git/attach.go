package git

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// localAttaches counts the worktrees attached to their branch in process (a test
// tells by it which way an attach went).
var localAttaches atomic.Int64

// A managed worktree is attached to its branch in process where that is certain to
// leave exactly what `git symbolic-ref -m <msg> HEAD <ref>` run in it leaves (git
// 2.39: refs_create_symref, files_create_symref): one git process fewer for every
// worktree made. git's steps, in git's order, in the worktree's own git dir:
//
//  1. HEAD.lock created with O_EXCL; one that exists is git's refusal, in git's words
//     (lockExistsError), which the caller waits out as it does git's;
//  2. HEAD's value read under the lock: a detached id, or a branch's name, whose tip
//     is then the old value (anything else is git's);
//  3. where core.logAllRefUpdates asks for a reflog of HEAD (unset is yes in a
//     worktree) or logs/HEAD exists, "<old> <new> <committer>\t<msg>" appended to
//     logs/HEAD, <new> the branch's tip;
//  4. "ref: <ref>" written into the lock, flushed (a worktree's HEAD is among the refs
//     made durable before success, docs/contract.md §11.12), and renamed over HEAD;
//     the caller flushes the directories (gitDirWritten).
//
// Left to git, with nothing written: a worktree whose git dir is not its registration
// as discover finds it (localGitDir), `git -c` or GIT_CONFIG in the environment, an
// include, includeIf, extension or shared repository in the configuration, a branch
// that is not a plain loose or packed id (an unborn one gets no reflog line from git), a
// HEAD that is neither an id nor a branch with a tip, a logs/HEAD that is not a file, a
// message git would normalise (whitespace runs, ends, control bytes), and an identity
// or date git would take from anything but the environment and the configuration
// (committerIdent).

// attachLocal attaches the worktree to ref in process; done is false when git must do
// it, with nothing written.
func (m *Managed) attachLocal(ctx context.Context, ref, msg string) (done bool, err error) {
	if m.admin == "" || !plainRefName(ref) || !plainReflogMsg(msg) {
		return false, nil
	}
	if configInEnv() {
		return false, nil
	}
	gitDir, ok := m.localGitDir()
	if !ok {
		return false, nil
	}
	if admin, err := filepath.EvalSymlinks(m.admin); err != nil || admin != gitDir {
		return false, nil
	}
	cfg := m.configOf(ctx)
	if cfg.err != nil || slices.ContainsFunc([]string{"extensions.", "include.", "includeif.", "core.sharedrepository"}, cfg.hasPrefix) {
		return false, nil
	}
	logs, ok := logsHead(cfg)
	if !ok {
		return false, nil
	}
	ident, ok := committerIdent(cfg, time.Now())
	if !ok {
		return false, nil
	}
	reflog := filepath.Join(gitDir, "logs", "HEAD")
	switch fi, err := os.Lstat(reflog); {
	case err == nil && !fi.Mode().IsRegular():
		return false, nil
	case err == nil:
		logs = true // git appends to a reflog that exists, whatever the setting
	case !errors.Is(err, fs.ErrNotExist):
		return false, nil
	}

	head := filepath.Join(gitDir, "HEAD")
	lock, err := os.OpenFile(head+".lock", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return true, &lockExistsError{name: "HEAD", lock: head + ".lock"}
	} else if err != nil {
		return false, nil
	}
	locked := true
	defer func() {
		if locked {
			_ = lock.Close()
			_ = os.Remove(head + ".lock")
		}
	}()
	// Under the lock, as git: the branch's tip (the reflog's new value) and HEAD.
	packed, ok := readPackedRefs(m.Repo.CommonDir)
	if !ok {
		return false, nil
	}
	tip, ok := refValue(filepath.Join(m.Repo.CommonDir, filepath.FromSlash(ref)), ref, packed)
	if !ok || tip == "" || len(tip) != len(m.Repo.NullID()) {
		return false, nil
	}
	data, err := os.ReadFile(head)
	old, found := strings.CutSuffix(string(data), "\n")
	if target, sym := strings.CutPrefix(old, "ref: "); sym && found {
		// On a branch already (a resume attaches again): git's old value is the
		// branch's tip, resolved.
		if !strings.HasPrefix(target, "refs/heads/") || !plainRefName(target) {
			return false, nil
		}
		if old, ok = refValue(filepath.Join(m.Repo.CommonDir, filepath.FromSlash(target)), target, packed); !ok || old == "" {
			return false, nil
		}
	}
	if err != nil || !found || !isHexID(old) || len(old) != len(tip) {
		return false, nil
	}
	eff := effect{list: true, dirs: []string{m.Path}}
	eff.note()
	defer eff.note()
	if logs {
		if err := appendReflog(reflog, reflogLine(old, tip, ident, msg)); err != nil {
			return true, noSpace(err)
		}
	}
	if _, err := io.WriteString(lock, "ref: "+ref+"\n"); err != nil {
		return true, noSpace(err)
	}
	if err := lock.Sync(); err != nil {
		return true, noSpace(err)
	}
	if err := lock.Close(); err != nil {
		return true, noSpace(err)
	}
	if err := os.Rename(head+".lock", head); err != nil {
		return true, noSpace(err)
	}
	locked = false
	localAttaches.Add(1)
	return true, nil
}

// appendReflog appends line to the reflog at path, creating it (and its directory) as
// git's log_ref_setup does: mode 0666 under the umask, opened for appending.
func appendReflog(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, line); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// plainReflogMsg reports whether git writes msg into a reflog as it is
// (normalize_reflog_message collapses whitespace runs into one space and trims both
// ends): printable ASCII, single spaces inside, none at either end.
func plainReflogMsg(msg string) bool {
	if msg == "" || msg[0] == ' ' || msg[len(msg)-1] == ' ' || strings.Contains(msg, "  ") {
		return false
	}
	for i := 0; i < len(msg); i++ {
		if msg[i] < 0x20 || msg[i] >= 0x7f {
			return false
		}
	}
	return true
}
