package git

import "path/filepath"

// Layout is git-atlas's own directory in a repository, <git-common-dir>/atlas/, and
// the one place its parts are named. Everything in it belongs to this repository
// alone: none of it is under refs/, so push, pull and clones never carry it.
//
//	worktrees/<run>/<node>   managed worktrees (unless atlas.worktreeRoot says elsewhere)
//	recovery/<run>/<id>.patch a snapshot's patch (gc removes it with the snapshot's ref)
//	cache/<name>             derived data, read again from refs and objects when lost
//	trust/<run>              which of a run's commands a person trusted here (Local)
//	session-key              the key of the session ids' keyed hashes in the ledger (Local)
//	seen                     when this clone first saw run tips dated ahead of its clock (Local)
//	mutex/<name>             advisory lock files (Mutex, TryMutex, RemoveMutex)
//	verify/                  temporary copies of the user's checkout a verify runs in
//	tmp/                     temporary index files
type Layout struct {
	// Root is <git-common-dir>/atlas.
	Root string
}

// Layout is the repository's git-atlas directory.
func (r *Repository) Layout() Layout { return Layout{Root: filepath.Join(r.CommonDir, "atlas")} }

// Worktrees is the default root of managed worktrees.
func (l Layout) Worktrees() string { return filepath.Join(l.Root, "worktrees") }

// RecoveryDir holds the patches of run's snapshots.
func (l Layout) RecoveryDir(run string) string { return filepath.Join(l.Root, "recovery", run) }

// Patch is where snapshot of run keeps its patch (unless --patch-out said elsewhere).
func (l Layout) Patch(run, snapshot string) string {
	return filepath.Join(l.RecoveryDir(run), snapshot+".patch")
}

// Cache is the cache file name.
func (l Layout) Cache(name string) string { return filepath.Join(l.Root, "cache", name) }

// Local is the local state file name (slash-separated, e.g. trust/<run>).
func (l Layout) Local(name string) string { return filepath.Join(l.Root, filepath.FromSlash(name)) }

// Mutex is the lock file of the mutex name (slash-separated, e.g. runs/<run>).
func (l Layout) Mutex(name string) string {
	return filepath.Join(l.Root, "mutex", filepath.FromSlash(name))
}

// Verify holds the temporary copies of the user's checkout that verifies run in.
func (l Layout) Verify() string { return filepath.Join(l.Root, "verify") }

// Hint is the post-checkout hook's hint file (derived, safe to delete).
func (l Layout) Hint() string { return filepath.Join(l.Root, "hint") }

// Tmp holds temporary index files.
func (l Layout) Tmp() string { return filepath.Join(l.Root, "tmp") }
