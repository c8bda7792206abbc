package gitstate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/par"
	"github.com/git-atlas/git-atlas/ledger"
)

// Entry is one run in a listing: the run, or why it could not be read.
type Entry struct {
	ID  string
	Run *ledger.Run
	Err error
}

// ListDepth is how much of every run a listing reads: the less, the cheaper.
type ListDepth int

const (
	// ListFull reads run.json and state.json whole, as Load does: one for-each-ref
	// streaming into one cat-file --batch (git.RefFiles), decoded on every core while
	// git is still reading. Its runs can be written back.
	ListFull ListDepth = iota

	// ListSummaries is for detecting interrupted runs (`resume --detect` and
	// `--brief`, which runs at every agent session start) and for `list`: each Run
	// holds only the header's schema, run_id, kind, intent, session, baseline and
	// created_at, and the state's schema, run_id, status, reason, seq, epoch,
	// updated_at, driver lease and its stages' names and statuses. That is what
	// Interrupted, Live and CurrentStage read.
	//
	// Where it reads them: the summary cache (listcache.go), for every run whose tip
	// it holds, after one `git for-each-ref` that needs no object; the documents of
	// the other tips, read whole and checked (CheckDocuments) as ListFull reads them,
	// never the summary line of a tip's message (whoever pushed the commit wrote it).
	// A broken ref (a missing object, no documents) is reported on its run alone. The
	// same runs are unreadable as with ListFull. A summary is never written back:
	// Writable refuses it.
	ListSummaries

	// ListStates is ListSummaries for callers that need no header field (Kind, Intent
	// and Session are left empty). Detection (status, driver lease, stages) needs
	// nothing more; the post-checkout hook uses it.
	ListStates
)

// String is the depth's constant's name.
func (d ListDepth) String() string {
	switch d {
	case ListFull:
		return "ListFull"
	case ListSummaries:
		return "ListSummaries"
	case ListStates:
		return "ListStates"
	}
	return fmt.Sprintf("ListDepth(%d)", int(d))
}

// ListOptions say how List reads the runs.
type ListOptions struct {
	Depth ListDepth
	// NoFetch lists the local ledger as it is. A store with a Remote otherwise first
	// brings every run up to date from it (unless Remote.NoFetch says so for the whole
	// command). The post-checkout hint needs this per call: it describes the ledger
	// the hook sees, which is the local one, and it is re-derived after every write,
	// remote writes included, where a fetch would cost a round trip to the remote and
	// fail the hint when the remote cannot be reached.
	NoFetch bool
}

// List reads every run at opt.Depth, sorted by id. A run that cannot be read is an
// entry with its error (ErrCorrupt), never hidden and never fatal to the others.
func (s *Store) List(ctx context.Context, opt ListOptions) ([]Entry, error) {
	if !opt.NoFetch {
		if err := s.fetchAll(ctx); err != nil {
			return nil, err
		}
	}
	switch opt.Depth {
	case ListFull:
		return s.list(ctx, bothDocs, func(id, tip string, b []git.Blob) (*ledger.Run, error) {
			r, err := decodeRun(id, tip, b[0], b[1])
			if r != nil {
				s.localize(ctx, r)
			}
			return r, err
		})
	case ListSummaries:
		return s.listSummaries(ctx, bothDocs, func(id, tip string, b []git.Blob) (*ledger.Run, error) { return decodeSummary(id, tip, b[0], b[1]) })
	case ListStates:
		return s.listStates(ctx)
	}
	return nil, fmt.Errorf("list runs: unknown depth %v", opt.Depth)
}

var bothDocs = []string{"run.json", "state.json"}

// list reads paths at every run's tip, as git streams them, and decodes each run on
// the pool: the listing at ListFull.
func (s *Store) list(ctx context.Context, paths []string, decode func(id, tip string, blobs []git.Blob) (*ledger.Run, error)) ([]Entry, error) {
	type listed struct {
		Entry
		tip      string
		noHeader bool // run.json unreadable: maybe the tip itself is the problem
	}
	var results []*listed
	p := newPool()
	err := s.Repo.RefFiles(ctx, strings.TrimSuffix(RunsPrefix, "/"), paths, func(ref git.Ref, blobs []git.Blob) {
		l := &listed{Entry: Entry{ID: strings.TrimPrefix(ref.Name, RunsPrefix)}, tip: ref.ID}
		results = append(results, l)
		p.do(func() {
			l.Run, l.Err = decode(l.ID, l.tip, blobs)
			l.noHeader = l.Err != nil && blobs[0].Err != nil
		})
	})
	p.wait()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(results))
	for k, l := range results {
		if l.noHeader {
			l.Err = s.diagnose(ctx, l.ID, l.tip, l.Err) // error path only: may fork
		}
		entries[k] = l.Entry
	}
	sort.SliceStable(entries, func(a, b int) bool { return entries[a].ID < entries[b].ID })
	return entries, nil
}

// pool decodes runs on every core while git is still streaming them: do queues a
// function, wait returns when all have run (and makes what they wrote visible).
type pool struct {
	work chan func()
	wg   sync.WaitGroup
}

func newPool() *pool {
	p := &pool{work: make(chan func(), 64)}
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		p.wg.Go(func() {
			for f := range p.work {
				f()
			}
		})
	}
	return p
}

func (p *pool) do(f func()) { p.work <- f }

func (p *pool) wait() {
	close(p.work)
	p.wg.Wait()
}

// listStates lists at ListStates: ListSummaries with only the run's id left of the
// header. Both documents are read where a summary has to be read from them: a run is
// checked whole (CheckDocuments), and an open attempt's idle deadline needs the stage
// definitions of run.json.
func (s *Store) listStates(ctx context.Context) ([]Entry, error) {
	entries, err := s.listSummaries(ctx, bothDocs, func(id, tip string, b []git.Blob) (*ledger.Run, error) {
		return decodeSummary(id, tip, b[0], b[1])
	})
	for _, e := range entries {
		if e.Run != nil {
			e.Run.Header = ledger.Header{RunID: e.ID}
		}
	}
	return entries, err
}

// listSummaries lists at ListSummaries, or at ListStates with paths and decode that
// read state.json alone.
func (s *Store) listSummaries(ctx context.Context, paths []string, decode func(id, tip string, blobs []git.Blob) (*ledger.Run, error)) ([]Entry, error) {
	prefix := strings.TrimSuffix(RunsPrefix, "/")
	mark := s.Repo.MarkRefs() // before anything is read
	cache, order, complete, stamp := s.readCache()
	if complete && mark.Unchanged(stamp) {
		// No ledger ref changed since the cache was written whole: it is the listing.
		if entries, ok := entriesOf(cache, order); ok {
			return entries, nil
		}
	}
	var (
		refs    []git.Ref
		entries []Entry
		fresh   map[string]cachedSummary // the cache to keep
		miss    []int                    // runs the cache did not give
		rest    []int                    // ... nor their tip's message: read their documents
	)
	reset := func(n int) {
		refs, entries, fresh, miss, rest = make([]git.Ref, 0, n), make([]Entry, 0, n), make(map[string]cachedSummary, n), nil, nil
	}
	add := func(ref git.Ref) int {
		refs, entries = append(refs, ref), append(entries, Entry{ID: strings.TrimPrefix(ref.Name, RunsPrefix)})
		return len(refs) - 1
	}
	listed, err := s.Repo.ListRefs(ctx, prefix)
	if err != nil {
		return nil, err
	}
	reset(len(listed))
	for _, ref := range listed {
		k := add(ref)
		e := &entries[k]
		if c, ok := cache[e.ID]; ok && c.tip == ref.ID {
			if e.Run = fromLine(e.ID, ref.ID, c.line); e.Run != nil {
				fresh[e.ID] = c
				continue
			}
		}
		miss = append(miss, k)
	}
	// A tip the cache does not hold is read from its documents, never from the
	// summary line of its message: that line is the word of whoever pushed the
	// commit, and only the documents show whether the run holds a value no write
	// makes (CheckDocuments: a job named ../../x is in no line). The cache holds
	// lines made here from checked documents.
	rest = miss
	lines, err := s.readDocuments(ctx, entries, refs, rest, paths, decode)
	if err != nil {
		return nil, err
	}
	for i, k := range rest {
		if lines != nil && lines[i] != nil {
			fresh[entries[k].ID] = cachedSummary{tip: refs[k].ID, line: string(lines[i])}
		}
	}
	// Rewrite the cache when it lacked something or held runs that are gone; a
	// repository without runs gets none (`resume --brief` runs in every repository an
	// agent opens).
	// Rewrite it too when it can be written complete (every run has its line, the refs
	// have settled; it was not, or the refs moved since): the next listing then needs
	// no for-each-ref.
	all := len(fresh) == len(refs)
	if hits := len(refs) - len(miss); len(refs) > 0 && (len(fresh) != hits || len(cache) != hits || (all && mark.Settled())) {
		order := make([]string, len(entries))
		for k := range entries {
			order[k] = entries[k].ID
		}
		s.writeCache(fresh, order, all, mark)
	}
	sort.SliceStable(entries, func(a, b int) bool { return entries[a].ID < entries[b].ID })
	return entries, nil
}

// errBadLine is a cache line that does not decode.
var errBadLine = errors.New("a summary line does not decode")

// entriesOf is the listing a complete cache holds, sorted by id; false when a line does
// not decode (then the refs are listed).
//
// The lines are decoded in one chunk per core: at a thousand runs that was most of
// `resume --brief`'s own time.
func entriesOf(cache map[string]cachedSummary, order []string) ([]Entry, bool) {
	entries := make([]Entry, len(order))
	chunks := min(runtime.GOMAXPROCS(0), (len(order)+255)/256)
	errs := par.Each(chunks, chunks, func(c int) error {
		for k := c * len(order) / chunks; k < (c+1)*len(order)/chunks; k++ {
			id := order[k]
			line := cache[id]
			r := fromLine(id, line.tip, line.line)
			if r == nil {
				return errBadLine
			}
			entries[k] = Entry{ID: id, Run: r}
		}
		return nil
	})
	if par.Join(errs) != nil {
		return nil, false
	}
	sort.SliceStable(entries, func(a, b int) bool { return entries[a].ID < entries[b].ID })
	return entries, true
}

// readDocuments reads the runs at entries[k] for k in which from their documents,
// decoding on every core. When it read both documents it returns the summary line
// of each run it could read, for the cache (a state-only read has no header to keep).
func (s *Store) readDocuments(ctx context.Context, entries []Entry, refs []git.Ref, which []int, paths []string, decode func(id, tip string, blobs []git.Blob) (*ledger.Run, error)) ([][]byte, error) {
	if len(which) == 0 {
		return nil, nil
	}
	specs := make([]git.BlobSpec, 0, len(which)*len(paths))
	for _, k := range which {
		more, err := blobSpecs(refs[k].ID, paths...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", refs[k].Name, err)
		}
		specs = append(specs, more...)
	}
	blobs, err := s.Repo.BlobsAt(ctx, specs)
	if err != nil {
		return nil, err
	}
	var lines [][]byte
	if len(paths) == len(bothDocs) {
		lines = make([][]byte, len(which))
	}
	p := newPool()
	for i, k := range which {
		p.do(func() {
			b, e := blobs[i*len(paths):(i+1)*len(paths)], &entries[k]
			if e.Run, e.Err = decode(e.ID, refs[k].ID, b); e.Run != nil && lines != nil {
				lines[i], _ = summaryOf(e.Run).encode()
			}
		})
	}
	p.wait()
	for i, k := range which {
		if e := &entries[k]; e.Err != nil && blobs[i*len(paths)].Err != nil {
			e.Err = s.diagnose(ctx, e.ID, refs[k].ID, e.Err) // error path only: may fork
		}
	}
	return lines, nil
}
