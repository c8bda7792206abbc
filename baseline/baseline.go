// Package baseline resolves, pins and checks the commits runs, stages and nodes start
// from, and hashes the config files whose drift resume reports.
package baseline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/git-atlas/git-atlas/internal/confine"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
)

// Resolve turns a revision into a commit id, or a not-found error naming it: a full
// object id (a recorded baseline) as that id, anything else as a person's argument
// (`--baseline main~2`).
func Resolve(ctx context.Context, repo *git.Repository, rev string) (git.OID, error) {
	var r git.Rev
	if id, err := git.ParseOID(rev); err == nil {
		r = git.OIDRev(id)
	} else if r, err = git.ArgRev(rev); err != nil {
		return git.OID{}, fault.Named(fault.ErrUsage, "baseline: %v", err).WithHint("pass {baseline} with a commit, branch or tag")
	}
	sha, err := repo.ResolveCommit(ctx, r)
	if err != nil {
		if errors.Is(err, git.ErrNotFoundObject) {
			return git.OID{}, fault.Named(fault.ErrNotFound, "baseline %q is not a commit in this repository", rev).WithHint("pass {baseline} with a commit, branch or tag")
		}
		return git.OID{}, err
	}
	return sha, nil
}

// Pin returns the ref update that pins sha under name for run, create-only so a pin
// never moves once taken (in the same transaction as the ledger write).
func Pin(run, name, sha string) git.RefUpdate {
	return git.RefUpdate{Name: "refs/atlas/pins/" + run + "/" + name, New: sha, Old: git.ZeroID}
}

// Present reports whether the baseline commit is still in the object store.
func Present(ctx context.Context, repo *git.Repository, sha string) bool {
	id, err := git.ParseOID(sha)
	if err != nil {
		return false
	}
	_, err = repo.Commit(ctx, id)
	return err == nil
}

// MaxConfigFile bounds one configuration file a run hashes. Configuration is small,
// and the names come from a ledger too (a pulled run's config_files): a FIFO, a
// device such as /dev/zero or a file over the bound is hashed as what it is, never
// read, so that no read waits or runs on forever.
const MaxConfigFile = 16 << 20

// ConfigHash is sha256 over the named files, in order: each file's path as given,
// its length and its bytes, so moving bytes between files changes the hash. A
// missing file hashes as missing, and one that is not a regular file or is over
// MaxConfigFile as such, so that drift is reported rather than failing.
func ConfigHash(base string, files []string) (string, error) {
	if len(files) == 0 {
		return "", nil
	}
	h := sha256.New()
	for _, f := range files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		fmt.Fprintf(h, "%s\x00", f)
		fh, size, err := confine.OpenRegular(p, MaxConfigFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(h, "missing\x00")
			continue
		case errors.Is(err, confine.ErrNotRegular):
			fmt.Fprintf(h, "not a regular file\x00")
			continue
		case errors.Is(err, confine.ErrTooBig):
			fmt.Fprintf(h, "over %d bytes\x00", MaxConfigFile)
			continue
		case err != nil:
			return "", fmt.Errorf("hash config %s: %w", f, err)
		}
		fmt.Fprintf(h, "%d\x00", size)
		n, err := io.Copy(h, io.LimitReader(fh, size))
		fh.Close()
		if err == nil && n != size {
			err = fmt.Errorf("it changed while it was read")
		}
		if err != nil {
			return "", fmt.Errorf("hash config %s: %w", f, err)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
