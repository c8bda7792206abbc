// Package hooks installs, removes and describes git-atlas's post-checkout hook (docs/contract.md §9)
// in the hooks directory git uses, keeping a hook already there running first and
// restoring it byte for byte on uninstall.
package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// Name is the hook git-atlas installs.
const Name = "post-checkout"

// OrigSuffix is appended to a hook that was already there: ours runs it first.
const OrigSuffix = ".atlas-orig"

// marker is the line that identifies a hook as git-atlas's (any version).
const marker = "# git-atlas post-checkout hook"

// Script is the hook git-atlas installs. It runs the hook that was there before (kept
// beside it as post-checkout.atlas-orig) first and exits with that hook's status, as git
// would have; git-atlas's own part never changes the outcome of a checkout.
//
// Most checkouts need no git-atlas process at all: the hint (hint.go) answers when it
// is newer than every file git.Repository.HintWatch names (the same list as here), no
// live run's lease has ended since it was written, and the checkout is not in a
// linked worktree with config from the environment. In a managed worktree (a linked
// one under the managed worktrees' root, or a locked one) it answers only for a
// worktree the hint lists: nothing to say while HEAD is on the node's branch (or the
// worktree is marked untrusted already); anything else is git-atlas's to record. It
// uses shell built-ins only (and date, when a run is live). Otherwise it calls
// git-atlas directly when it is on PATH (git puts its exec-path there for hooks),
// saving the fork of a ` + "`git`" + ` that would only start it.
const Script = `#!/bin/sh
` + marker + ` (` + "`git atlas hooks uninstall`" + ` restores what was here).
status=0
case $0 in */*) dir=${0%/*} ;; *) dir=. ;; esac
orig="$dir/post-checkout` + OrigSuffix + `"
if [ -x "$orig" ]; then
	"$orig" "$@" || status=$?
fi
[ "$3" = 0 ] && exit $status
atlas_hint() {
	gd=${GIT_DIR:-}
	if [ -z "$gd" ]; then
		if [ -d .git ]; then gd=.git
		elif [ -f .git ] && read -r gd <.git; then gd=${gd#gitdir: }
		else return 1
		fi
	fi
	case $gd in /*) ;; *) gd=$PWD/$gd ;; esac
	common=$gd linked= managed=
	if [ -f "$gd/commondir" ]; then
		read -r c <"$gd/commondir" || return 1
		case $c in /*) common=$c ;; *) common=$gd/$c ;; esac
		linked=1
		[ -e "$gd/locked" ] && managed=1
		case ${GIT_CONFIG_PARAMETERS:-}${GIT_CONFIG_COUNT:-}${GIT_CONFIG_GLOBAL:-}${GIT_CONFIG_SYSTEM:-} in ?*) return 1 ;; esac
		cd -P . || return 1
	fi
	h=$common/atlas/hint
	[ -f "$h" ] || return 1
	for f in "$common/refs/atlas/runs" "$common/refs/atlas" "$common/packed-refs" "$common/config" "$HOME/.gitconfig" "${XDG_CONFIG_HOME:-$HOME/.config}/git/config"; do
		[ "$f" -nt "$h" ] && return 1
	done
	expires= say= ok= wt= wtok=
	{
		read -r line && [ "$line" = "git-atlas hint 1" ] || return 1
		while read -r k v; do
			case $k in
			expires) expires=$v ;;
			root) [ -z "$linked" ] || case $PWD/ in "$v"/*) managed=1 ;; esac ;;
			say) say="$say$v
" ;;
			end) ok=1; [ -n "$managed" ] || break ;;
			wt) [ -n "$ok" ] || return 1; [ "${v#* }" = "$PWD" ] && wt=${v%% *} ;;
			wtend) [ -n "$ok" ] || return 1; wtok=1; break ;;
			*) return 1 ;;
			esac
		done
	} <"$h"
	[ -n "$ok" ] && [ -n "$expires" ] || return 1
	if [ -n "$managed" ]; then
		[ -n "$wt" ] && [ -n "$wtok" ] || return 1
		[ "$wt" = - ] && return 0
		read -r head <"$gd/HEAD" || return 1
		[ "$head" = "ref: $wt" ]
		return
	fi
	if [ "$expires" != 0 ]; then
		now=$(date +%s) || return 1
		[ "$now" -lt "$expires" ] 2>/dev/null || return 1
	fi
	[ -z "$say" ] || printf '%s' "$say" >&2
}
if atlas_hint; then exit $status; fi
if command -v git-atlas >/dev/null 2>&1; then
	git-atlas hook post-checkout "$@" </dev/null >/dev/null || :
elif git atlas -h >/dev/null 2>&1; then
	git atlas hook post-checkout "$@" </dev/null >/dev/null || :
fi
exit $status
`

// State is what the hooks directory holds.
type State string

const (
	// Installed: git-atlas's hook is in place.
	Installed State = "installed"
	// NotInstalled: no post-checkout hook at all.
	NotInstalled State = "not_installed"
	// Foreign: a post-checkout hook that is not git-atlas's (install keeps it running).
	Foreign State = "foreign"
)

// Status describes the post-checkout hook of a repository.
type Status struct {
	State State `json:"state"`
	// Dir is the hooks directory git uses (core.hooksPath, else <git-common-dir>/hooks).
	Dir string `json:"hooks_dir"`
	// Scope is the config file that set core.hooksPath: "local", "worktree", "global"
	// or "system" ("" when it is not set).
	Scope string `json:"config_scope,omitempty"`
	// Hook is the path of the post-checkout hook.
	Hook string `json:"hook"`
	// Chained is the user's hook that ours runs first ("" when none).
	Chained string `json:"chained,omitempty"`
	// Current: the installed hook is this version's script, byte for byte.
	Current bool `json:"current,omitempty"`
	// Changed: the command changed something (install and uninstall only).
	Changed bool `json:"changed"`
}

// location is the hooks directory git runs hooks from, and which setting says so:
// core.hooksPath as the repository's config files set it (a relative value is relative
// to the working tree's top level, where git runs hooks, or the git dir of a bare
// repository), else <git-common-dir>/hooks.
type location struct {
	dir string
	// value and scope are core.hooksPath as configured and the config file that set it
	// ("local", "worktree", "global", "system"); both "" when it is not set.
	value, scope string
}

func locate(ctx context.Context, repo *git.Repository) (location, error) {
	// Every internal git call sets core.hooksPath=/dev/null on its command line: skip
	// the command-line scope and keep the last value of the config files.
	vals, err := repo.ConfigPathAll(ctx, "core.hooksPath")
	if err != nil {
		return location{}, fmt.Errorf("read core.hooksPath: %w", err)
	}
	var loc location
	for _, v := range vals {
		if v.Scope != "command" {
			loc.value, loc.scope = v.Value, v.Scope
		}
	}
	if loc.value == "" {
		loc.scope = ""
		loc.dir = filepath.Join(repo.CommonDir, "hooks")
		return loc, nil
	}
	loc.dir = loc.value
	if !filepath.IsAbs(loc.dir) {
		base := repo.TopLevel
		if base == "" {
			base = repo.GitDir
		}
		loc.dir = filepath.Join(base, loc.dir)
	}
	loc.dir = filepath.Clean(loc.dir)
	return loc, nil
}

// Shared reports whether the hooks directory is set by a config file outside the
// repository (global or system): every repository that uses that setting runs what is
// installed there.
func (s Status) Shared() bool { return s.Scope == "global" || s.Scope == "system" }

// Options are the consents install and uninstall need.
type Options struct {
	// Global allows changing a hooks directory that core.hooksPath sets in the global
	// or system config (shared by other repositories).
	Global bool
	// Clock is the time the hook's ledger reads and writes judge by (nil: the system
	// clock, in UTC). A test gives its own.
	Clock ledger.Clock
}

// store is a ledger store over repo, by opts' clock, whose writes keep the hint.
func (opts Options) store(repo *git.Repository) *gitstate.Store {
	s := gitstate.New(repo)
	s.Clock = opts.Clock
	s.AfterWrite = KeepHint
	return s
}

// checkWritable refuses, before anything is written, a hooks directory git-atlas must
// not change:
//   - one inside a working tree (husky's tracked .husky, say): installing would add and
//     change files in the user's checkout, and in every branch that tracks them;
//   - a relative core.hooksPath: git resolves it from the top of each worktree, so the
//     hook would not run in git-atlas's worktrees (install only; uninstall may clean up
//     what an older version put there);
//   - a directory set in the global or system config, without opts.Global.
func checkWritable(ctx context.Context, repo *git.Repository, loc location, install bool, opts Options) error {
	if wt, err := repo.WorkingTreeOf(ctx, loc.dir); err != nil {
		return err
	} else if wt != "" {
		return fault.Refused("core.hooksPath (%s) is inside the working tree %s: installing there would add and change files in your checkout, and git-atlas never writes into a working tree", loc.value, wt).
			WithHint("git-atlas works without its hook (`%s` finds interrupted runs); to have it anyway, add the line `git atlas hook post-checkout \"$@\" </dev/null >/dev/null || true` to %s yourself, or point core.hooksPath at a directory outside the working tree", fault.Do("resume", "detect", true), filepath.Join(loc.dir, Name))
	}
	if install && loc.value != "" && !filepath.IsAbs(loc.value) {
		return fault.Refused("core.hooksPath is the relative path %s: git looks for it from the top of each worktree, so a hook installed in %s would not run in git-atlas's worktrees", loc.value, loc.dir).
			WithHint("set it to an absolute path (`git config core.hooksPath %s`) and install again", loc.dir)
	}
	if (loc.scope == "global" || loc.scope == "system") && !opts.Global {
		verb := "install"
		if !install {
			verb = "uninstall"
		}
		return fault.Named(fault.ErrUsage, "core.hooksPath is set in your %s git config: %s would change %s, which every repository using that setting runs, not only this one", loc.scope, verb, filepath.Join(loc.dir, Name)).
			WithHint("pass {global} to %s it there anyway", verb)
	}
	return nil
}

// Inspect reports the state of the post-checkout hook.
func Inspect(ctx context.Context, repo *git.Repository) (Status, error) {
	loc, err := locate(ctx, repo)
	if err != nil {
		return Status{}, err
	}
	return inspect(loc)
}

func inspect(loc location) (Status, error) {
	st := Status{Dir: loc.dir, Hook: filepath.Join(loc.dir, Name), Scope: loc.scope}
	data, err := os.ReadFile(st.Hook)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, lerr := os.Lstat(st.Hook); lerr == nil {
			st.State = Foreign // a dangling symbolic link is still the user's
		} else {
			st.State = NotInstalled
		}
	case err != nil:
		return st, fmt.Errorf("read %s: %w", st.Hook, err)
	case isOurs(st.Hook, data):
		st.State, st.Current = Installed, string(data) == Script
		if _, err := os.Lstat(st.Hook + OrigSuffix); err == nil {
			st.Chained = st.Hook + OrigSuffix
		}
	default:
		st.State = Foreign
	}
	return st, nil
}

// isOurs: a regular file (never a link into someone else's file) carrying our marker.
func isOurs(path string, data []byte) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && bytes.Contains(data, []byte("\n"+marker))
}

// Install puts git-atlas's hook in place. A hook already there (file, link, any mode)
// is renamed to post-checkout.atlas-orig, untouched, and ours runs it first. Installing
// again changes nothing; an older version of our script is replaced.
func Install(ctx context.Context, repo *git.Repository, opts Options) (Status, error) {
	loc, err := locate(ctx, repo)
	if err != nil {
		return Status{}, err
	}
	st, err := inspect(loc)
	if err != nil {
		return st, err
	}
	if err := checkWritable(ctx, repo, loc, true, opts); err != nil {
		return st, err
	}
	orig := st.Hook + OrigSuffix
	defer startHint(ctx, opts.store(repo))
	switch {
	case st.State == Installed && st.Current:
		return st, nil
	case st.State == Foreign:
		if _, err := os.Lstat(orig); err == nil {
			return st, fault.Conflict("%s is not git-atlas's hook and %s already exists", st.Hook, orig).
				WithHint("move one of them away, then install again")
		}
		// Rename first: a crash before our script is written leaves no hook and the
		// user's one kept as .atlas-orig, which the next install chains. The rename
		// is flushed (hooks/ synced) before the new hook is written: a power cut
		// cannot leave the new hook durable and the user's one under neither name.
		if err := git.Rename(st.Hook, orig); err != nil {
			return st, fmt.Errorf("keep %s: %w", st.Hook, err)
		}
	case st.State == NotInstalled:
		if err := git.MkdirAll(loc.dir, 0o755); err != nil {
			return st, fmt.Errorf("create hooks directory: %w", err)
		}
	}
	if err := writeAtomic(st.Hook, []byte(Script), 0o755); err != nil {
		return st, err
	}
	st, err = inspect(loc)
	st.Changed = true
	return st, err
}

// startHint makes the hint the installed hook reads (best effort: without one the
// hook asks git-atlas, which makes it).
func startHint(ctx context.Context, store *gitstate.Store) {
	_, _ = RefreshHint(ctx, store, true)
}

// Uninstall removes git-atlas's hook and puts back the one it kept, as it was (the same
// file, renamed back: bytes, mode and time). Nothing installed: nothing to do. A hook
// that is not ours is refused, never deleted.
func Uninstall(ctx context.Context, repo *git.Repository, opts Options) (Status, error) {
	loc, err := locate(ctx, repo)
	if err != nil {
		return Status{}, err
	}
	st, err := inspect(loc)
	if err != nil {
		return st, err
	}
	if err := checkWritable(ctx, repo, loc, false, opts); err != nil {
		return st, err
	}
	orig := st.Hook + OrigSuffix
	if st.State != Foreign {
		_ = repo.RemoveHint() // nobody reads it any more
	}
	switch st.State {
	case Foreign:
		return st, fault.Refused("%s is not git-atlas's hook: left as it is", st.Hook)
	case NotInstalled:
		if _, err := os.Lstat(orig); err != nil {
			return st, nil
		}
		// An install that died between its two steps: put the user's hook back.
	}
	if _, err := os.Lstat(orig); err == nil {
		if err := git.Rename(orig, st.Hook); err != nil {
			return st, fmt.Errorf("restore %s: %w", st.Hook, err)
		}
	} else if err := git.Remove(st.Hook); err != nil {
		return st, fmt.Errorf("remove %s: %w", st.Hook, err)
	}
	st, err = inspect(loc)
	st.Changed = true
	return st, err
}

// writeAtomic writes data to path durably (git.WriteFile: flushed, renamed into
// place, hooks/ flushed).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	return git.WriteFile(path, data, mode)
}
