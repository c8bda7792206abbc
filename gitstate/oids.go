package gitstate

import (
	"context"

	"github.com/git-atlas/git-atlas/internal/git"
)

// IsAncestorID is Repository.IsAncestor on two ids held as text (a ref's value, a
// remote's answer): one that is not a full object id is an error, never a revision.
func IsAncestorID(ctx context.Context, repo *git.Repository, a, b string) (bool, error) {
	x, err := git.ParseOID(a)
	if err != nil {
		return false, err
	}
	y, err := git.ParseOID(b)
	if err != nil {
		return false, err
	}
	return repo.IsAncestor(ctx, x, y)
}

// Reaches reports whether every object of commit id is certainly in repo: id is local
// (a ref's value here) or an ancestor of it. A ref moves only after the write or fetch
// that brought its objects has completed, so what it reaches is whole. That the
// commit id is here proves nothing: a fetch running beside this command writes a
// pack's objects one by one (unpack-objects), commits first, and the commit's trees and
// blobs may not be written yet. Any doubt (local empty, id missing, an ancestry that
// cannot be read) is false: fetch.
func Reaches(ctx context.Context, repo *git.Repository, local, id string) bool {
	if local == "" || id == "" {
		return false
	}
	if local == id {
		return true
	}
	ok, err := IsAncestorID(ctx, repo, id, local) // false when id is missing
	return err == nil && ok
}

// blobSpecs are the documents paths of the commit tip.
func blobSpecs(tip string, paths ...string) ([]git.BlobSpec, error) {
	id, err := git.ParseOID(tip)
	if err != nil {
		return nil, err
	}
	specs := make([]git.BlobSpec, len(paths))
	for i, p := range paths {
		specs[i] = git.BlobSpec{Commit: id, Path: p}
	}
	return specs, nil
}
