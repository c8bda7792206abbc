package worktrees

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// includedRecord is the local record (never pushed) of the files copied into the
// worktree of run's node from the checkout's .worktreeinclude.
func includedRecord(run, node string) string { return "included/" + run + "/" + node }

// includedV2 opens a record that keeps, after each copied file's name, the object id
// its bytes had when copied. It cannot be a copied file's name: those are relative.
const includedV2 = "/2"

// Included lists the files copied into the worktree of run's node from the user's
// checkout (docs/contract.md §15): the user's files, perhaps secrets, which a snapshot
// leaves out. nil when none were.
func Included(repo *git.Repository, run, node string) ([]string, error) {
	copies, err := IncludedCopies(repo, run, node)
	if err != nil || len(copies) == 0 {
		return nil, err
	}
	return slices.Sorted(maps.Keys(copies)), nil
}

// IncludedCopies maps each file copied into the worktree of run's node from the user's
// checkout to the blob id of the bytes copied ("" when a record from before ids were
// kept does not say): while a file the agent made tracked (`git add -f`) still holds
// those bytes, it is the user's copy, not the agent's work (docs/contract.md §15).
func IncludedCopies(repo *git.Repository, run, node string) (map[string]string, error) {
	if ledger.ValidName("run", run) != nil || ledger.ValidName("node", node) != nil {
		return nil, nil
	}
	data, err := repo.ReadLocal(includedRecord(run, node))
	if err != nil || len(data) == 0 {
		return nil, err
	}
	fields := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	copies := map[string]string{}
	if fields[0] != includedV2 {
		for _, f := range fields {
			copies[f] = ""
		}
		return copies, nil
	}
	for i := 1; i+1 < len(fields); i += 2 {
		copies[fields[i]] = fields[i+1]
	}
	return copies, nil
}

// ForgetIncluded removes the record of the files copied into the worktree of run's
// node, once that worktree is gone (docs/contract.md §15): a worktree made there again
// records its own copies.
func ForgetIncluded(repo *git.Repository, run, node string) error {
	if ledger.ValidName("run", run) != nil || ledger.ValidName("node", node) != nil {
		return nil
	}
	return repo.RemoveLocal(includedRecord(run, node))
}

// bootstrap copies into the new worktree of rec the ignored files of the user's
// checkout that its .worktreeinclude names (docs/contract.md §15), and records which,
// so that no snapshot takes them. Each is a copy, reflinked where the file system
// can, never a hard link; only regular files, never through a link, never over a
// file the worktree has. Without a main checkout (a bare repository) nothing is
// copied.
func bootstrap(ctx context.Context, repo *git.Repository, run string, rec ledger.WorktreeRec) error {
	list, err := repo.ListWorktrees(ctx)
	if err != nil {
		return err
	}
	var copied []copied
	if len(list) > 0 && !list[0].Bare && list[0].Path != "" {
		copied, err = copyIncluded(ctx, repo, list[0].Path, rec.Path)
	}
	// What was copied is recorded even when a later copy failed.
	name := includedRecord(run, rec.Node)
	if len(copied) == 0 {
		return errors.Join(err, repo.RemoveLocal(name))
	}
	fields := []string{includedV2}
	for _, c := range copied {
		fields = append(fields, c.path, c.id)
	}
	return errors.Join(err, repo.WriteLocal(name, []byte(strings.Join(fields, "\x00")+"\x00")))
}

// copied is one file bootstrap copied, and the blob id of its bytes.
type copied struct{ path, id string }

// copyIncluded copies the included files of the checkout at from into the worktree
// at to and returns the ones it copied.
func copyIncluded(ctx context.Context, repo *git.Repository, from, to string) ([]copied, error) {
	paths, err := repo.WorktreeIncluded(ctx, from)
	if err != nil || len(paths) == 0 {
		return nil, err
	}
	src, err := confine.New(from)
	if err != nil {
		return nil, err
	}
	dst, err := confine.New(to)
	if err != nil {
		return nil, err
	}
	// Only what lies in the worktree itself: a path beyond a symbolic link the node's
	// branch commits (cfg, linking anywhere, for cfg/secret.env) is left out, never
	// copied and never asked about (git check-ignore refuses the whole list for it,
	// which left the worktree half-made), and nothing is written through the link.
	paths = slices.DeleteFunc(paths, func(p string) bool {
		_, err := dst.Leaf(p)
		return err != nil
	})
	// Only what the new worktree ignores too: the checkout's rules may ignore a file
	// (by a .gitignore line not committed) that the worktree's do not, where an
	// agent's `git add -A` would commit the copy, and the union and a push carry it
	// off.
	if paths, err = repo.CheckIgnored(ctx, to, paths); err != nil || len(paths) == 0 {
		return nil, err
	}
	var done []copied
	dirs := map[string]bool{} // where copies were named: each flushed once, at the end
	for _, p := range paths {
		ok, err := copyOne(src, dst, p, dirs)
		if err != nil {
			return done, errors.Join(fmt.Errorf("copy %s from %s (%s): %w", p, from, git.WorktreeIncludeFile, err), syncDirs(dirs))
		}
		if !ok {
			continue
		}
		c := copied{path: p}
		if leaf, err := dst.Leaf(p); err == nil {
			c.id, _ = repo.BlobIDOfFile(leaf) // "": unknown, never taken for the copy
		}
		done = append(done, c)
	}
	return done, syncDirs(dirs)
}

// syncDirs flushes each of dirs: the copies named there are durable once it returns.
func syncDirs(dirs map[string]bool) error {
	var errs []error
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		errs = append(errs, git.SyncDir(d))
	}
	return errors.Join(errs...)
}

// copyOne copies the checkout's file rel into the same place in the worktree,
// durably (docs/contract.md §11.12): created under its own name, never over a file the
// worktree has (made meanwhile too), its bytes flushed, each directory made for it
// flushed, and the directory it is named in added to dirs, which the caller flushes
// once for all the copies there (syncDirs), all before the copies are recorded and the
// worktree reported made. The copy is made while the worktree's marker is held
// (materialize, resume's reset in place): a kill or a power cut before the record
// leaves a half-made worktree, which the next command preserves and makes anew, never
// a copy taken for the worktree's own. No temporary name is used: one would not be
// ignored, so a half-made worktree's snapshot, which push carries, would take it.
func copyOne(src, dst confine.Root, rel string, dirs map[string]bool) (bool, error) {
	from, err := src.Leaf(rel)
	if err != nil {
		return false, nil // through a link in the checkout: not copied
	}
	fi, err := os.Lstat(from)
	if err != nil || !fi.Mode().IsRegular() {
		return false, nil
	}
	to, err := dst.Leaf(rel)
	if err != nil {
		return false, nil
	}
	if _, err := os.Lstat(to); err == nil {
		return false, nil // the worktree has its own
	}
	if err := git.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return false, err
	}
	if to, err = dst.Leaf(rel); err != nil { // no link was planted meanwhile
		return false, nil
	}
	in, err := os.Open(from)
	if err != nil {
		return false, err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if errors.Is(err, os.ErrExist) {
		return false, nil // the worktree has its own, made meanwhile
	}
	if err != nil {
		return false, err
	}
	if !reflink(out, in) {
		_, err = io.Copy(out, in)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(to)
		return false, err
	}
	dirs[filepath.Dir(to)] = true
	return true, nil
}
