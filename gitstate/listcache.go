package gitstate

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
)

// The summary cache, <git-common-dir>/atlas/cache/summaries, keeps the summary line
// of every run's tip, keyed by the tip's commit id:
//
//	git-atlas summaries 2 <crc32c of the rest, hex>
//	<run> <tip> <summary JSON>
//	...
//
// A tip is a commit id, and a commit's documents never change, so a line is either
// right or about another tip, and then it is not used: nothing ever invalidates the
// cache, and writers of the ledger never touch it. Listing rewrites it (to a
// temporary file, renamed into place) after reading any run it did not hold; a
// file that fails its checksum (a torn write, a disk error) is ignored as a whole.
// It is derived data, like git's commit-graph: deleting it costs one slower listing.
// Its lines are made from documents CheckDocuments passed; version 1 files, whose
// lines could come from commit messages unchecked, are not read.

const cacheMagic = "git-atlas summaries 2 "

// completeMagic heads a cache that holds a line for every run the refs had when it was
// written, dated by those refs (git.Repository.WriteCacheStamped): while no ref file is
// newer, it is the whole listing, and no for-each-ref is needed. (Older versions do not
// know this header and treat the file as no cache.)
const completeMagic = "git-atlas summaries 2+ "

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

type cachedSummary struct {
	tip  string
	line string
}

const cacheName = "summaries"

// readCache returns the cached lines by run, or nil when there is no usable cache;
// order is the runs in the file's order, complete whether the file holds every run
// the refs had at its stamp.
func (s *Store) readCache() (cache map[string]cachedSummary, order []string, complete bool, stamp time.Time) {
	data, stamp, err := s.Repo.ReadCacheStamped(cacheName)
	if err != nil {
		return nil, nil, false, stamp
	}
	// Every id, tip and line below is a substring of data: no copies.
	header, body, ok := strings.Cut(data, "\n")
	sum, found := strings.CutPrefix(header, cacheMagic)
	if !found {
		sum, complete = strings.CutPrefix(header, completeMagic)
		found = complete
	}
	if !ok || !found || sum != fmt.Sprintf("%08x", checksum(body)) {
		return nil, nil, false, stamp
	}
	n := strings.Count(body, "\n") + 1
	cache, order = make(map[string]cachedSummary, n), make([]string, 0, n)
	for len(body) > 0 {
		var line string
		line, body, _ = strings.Cut(body, "\n")
		id, rest, ok1 := strings.Cut(line, " ")
		tip, doc, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 {
			return nil, nil, false, stamp
		}
		cache[id] = cachedSummary{tip: tip, line: doc}
		order = append(order, id)
	}
	return cache, order, complete, stamp
}

// checksum is the cache's crc32c of s, through a small buffer rather than a copy of s.
func checksum(s string) uint32 {
	var buf [8192]byte
	var crc uint32
	for len(s) > 0 {
		n := copy(buf[:], s)
		crc, s = crc32.Update(crc, castagnoli(), buf[:n]), s[n:]
	}
	return crc
}

// writeCache replaces the cache with lines, in order, best effort: a repository we
// cannot write to lists as before, only slower. With complete (lines hold every run
// the refs had at mark), the file is written as a complete cache dated by mark when
// the mark allows; it reports whether it was.
func (s *Store) writeCache(lines map[string]cachedSummary, order []string, complete bool, mark git.RefsMark) bool {
	magic := cacheMagic
	if complete && mark.Settled() {
		magic = completeMagic
	}
	// One buffer: the header's place first (its length is fixed), then the lines, then
	// the checksum of the lines written into the header. Run ids are ref name
	// components, which hold no space and no newline.
	header := len(magic) + 8 + 1
	file := bytes.NewBuffer(make([]byte, header, header+len(order)*600))
	for _, id := range order {
		if c, ok := lines[id]; ok {
			file.WriteString(id + " " + c.tip + " ")
			file.WriteString(c.line)
			file.WriteByte('\n')
		}
	}
	data := file.Bytes()
	copy(data, fmt.Sprintf("%s%08x\n", magic, crc32.Checksum(data[header:], castagnoli())))
	if magic == completeMagic {
		if s.Repo.WriteCacheStamped(cacheName, data, mark) {
			return true
		}
		// The refs moved meanwhile: keep the lines, undated.
		return s.writeCache(lines, order, false, mark)
	}
	_ = s.Repo.WriteCache(cacheName, data) // best effort
	return false
}
