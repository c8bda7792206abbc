package gitstate

import (
	"context"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// LoadTips reads the runs ids[i] whole at the ledger tips tips[i] a listing found, in
// one read of all their documents: for a front end that shows more of some runs than
// their summaries hold (a graph run's jobs and verdict). errs[i] is the error of a run
// that cannot be read, which never hides the others; err is a failure to read at all.
func (s *Store) LoadTips(ctx context.Context, ids, tips []string) (runs []*ledger.Run, errs []error, err error) {
	runs, errs = make([]*ledger.Run, len(ids)), make([]error, len(ids))
	specs := make([]git.BlobSpec, 0, len(ids)*len(bothDocs))
	which := make([]int, 0, len(ids))
	for i, id := range ids {
		more, err := blobSpecs(tips[i], bothDocs...)
		if err != nil {
			errs[i] = unreadable(id, "its tip: %v", err)
			continue
		}
		specs = append(specs, more...)
		which = append(which, i)
	}
	if len(which) == 0 {
		return runs, errs, nil
	}
	blobs, err := s.Repo.BlobsAt(ctx, specs)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range which {
		r, err := decodeRun(ids[i], tips[i], blobs[2*j], blobs[2*j+1])
		if r != nil {
			s.localize(ctx, r)
		}
		runs[i], errs[i] = r, err
	}
	return runs, errs, nil
}
