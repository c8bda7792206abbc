package git

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Loose objects git-atlas writes itself follow the durable-write discipline
// (durable.go): a temporary file in objects/xx, written, flushed, linked to its
// name, then objects/xx flushed (and objects/ when xx was made). go-git's writer names
// the object before its bytes are flushed and takes an existing name for a whole
// object, so it is not used for writing (docs/git-notes.md §4).

// compressors keeps the loose writer's compressors for the next object: a new one
// allocates and clears its tables, several times the work of compressing a ledger's
// document. The level is git's for loose objects when core.looseCompression and
// core.compression are unset: the fastest.
var compressors = make(kept[*zlib.Writer], 4)

// decompressors keeps the readers of whole loose objects the same way.
var decompressors = make(kept[io.ReadCloser], 4)

// kept holds values for reuse within the process: a channel, not a sync.Pool, which
// empties at every garbage collection.
type kept[T any] chan T

// take returns a kept value, if there is one.
func (k kept[T]) take() (v T, ok bool) {
	select {
	case v = <-k:
		return v, true
	default:
		return v, false
	}
}

// keep keeps v for the next taker, when there is room.
func (k kept[T]) keep(v T) {
	select {
	case k <- v:
	default:
	}
}

// compressor is a compressor writing to w: a kept one, or a new one.
func compressor(w io.Writer) *zlib.Writer {
	if zw, ok := compressors.take(); ok {
		zw.Reset(w)
		return zw
	}
	zw, _ := zlib.NewWriterLevel(w, zlib.BestSpeed)
	return zw
}

// decompressor is a reader of the zlib stream r: a kept one, or a new one.
func decompressor(r io.Reader) (io.ReadCloser, error) {
	if zr, ok := decompressors.take(); ok {
		return zr, zr.(zlib.Resetter).Reset(r, nil)
	}
	return zlib.NewReader(r)
}

// looseWriter writes loose objects into a repository's object store.
type looseWriter struct {
	objects string // <common dir>/objects
	sha256  bool
}

func (l looseWriter) newHash() hash.Hash {
	if l.sha256 {
		return sha256.New()
	}
	return sha1.New()
}

// id is the object id of an object of type typ holding data.
func (l looseWriter) id(typ string, data []byte) string {
	h := l.newHash()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func (l looseWriter) path(id string) string {
	return filepath.Join(l.objects, id[:2], id[2:])
}

// write stores the object durably and returns its id. An existing loose object of
// that id that does not read back whole (empty or torn by a crash: git's own writers
// only freshen an existing file) is removed and written again.
func (l looseWriter) write(typ string, data []byte) (string, error) {
	return l.writeObject(typ, data, true)
}

// writeObject is write; without syncDir, objects/xx is left for the caller to flush
// (syncObjectDirs, once for many objects, as after a git process that wrote them).
func (l looseWriter) writeObject(typ string, data []byte, syncDir bool) (string, error) {
	id := l.id(typ, data)
	return id, l.writeHashed(id, typ, data, syncDir)
}

// writeHashed is writeObject of an object whose id, l.id(typ, data), the caller
// already has.
func (l looseWriter) writeHashed(id, typ string, data []byte, syncDir bool) error {
	p := l.path(id)
	if _, err := os.Lstat(p); err == nil {
		if l.readsBack(p, id) {
			// Freshen it, as git does, so a prune of old unreachable objects does not
			// take it before the ref that will name it moves.
			now := time.Now()
			_ = os.Chtimes(p, now, now)
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove torn object %s: %w", id, err)
		}
	}
	dir := filepath.Dir(p)
	if err := MkdirAll(dir, 0o755); err != nil {
		return noSpace(err)
	}
	if err := l.writeNew(dir, p, typ, data, syncDir); err != nil {
		return noSpace(fmt.Errorf("write object %s: %w", id, err))
	}
	return nil
}

func (l looseWriter) writeNew(dir, p, typ string, data []byte, syncDir bool) error {
	f, err := os.CreateTemp(dir, TmpObjectPrefix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // after the link, the name stays and this goes
	zw := compressor(f)
	defer compressors.keep(zw)
	_, err = fmt.Fprintf(zw, "%s %d\x00", typ, len(data))
	if err == nil {
		_, err = zw.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Chmod(0o444)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// link, not rename: a concurrent writer's object of the same id is the same
	// bytes, and it was flushed before it was named too.
	if err := os.Link(tmp, p); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if !syncDir {
		return nil
	}
	return SyncDir(dir)
}

// readsBack reports whether the loose object at p inflates whole to an object with
// id: a well-formed header, exactly the length it announces, and the right hash.
func (l looseWriter) readsBack(p, id string) bool {
	_, _, ok := l.read(p, id)
	return ok
}

// read inflates the loose object at p and returns its type and content when it is
// whole: a well-formed header, exactly the length it announces, and the hash id. ok
// is false for anything else (no such file, torn, another object's bytes).
func (l looseWriter) read(p, id string) (typ string, data []byte, ok bool) {
	f, err := os.Open(p)
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	zr, err := decompressor(f)
	if err != nil {
		return "", nil, false
	}
	raw, err := io.ReadAll(zr)
	decompressors.keep(zr)
	if err != nil {
		return "", nil, false
	}
	nul := bytes.IndexByte(raw, 0)
	if nul < 0 {
		return "", nil, false
	}
	t, size, ok := bytes.Cut(raw[:nul], []byte{' '})
	n, err := strconv.Atoi(string(size))
	if !ok || err != nil || n != len(raw)-nul-1 {
		return "", nil, false
	}
	h := l.newHash()
	h.Write(raw)
	if hex.EncodeToString(h.Sum(nil)) != id {
		return "", nil, false
	}
	return string(t), raw[nul+1:], true
}

// readLoose reads object id in process when it is a whole loose object (the ledger's
// own objects are, until a gc packs them): no process, and no pack index parsed, which
// is what made go-git's object reads slow (docs/git-notes.md §1). ok is false when git
// must be asked: packed, in an alternate, torn, or not a well-formed id.
func (l looseWriter) readLoose(id string) (typ string, data []byte, ok bool) {
	if !isHexID(id) {
		return "", nil, false
	}
	return l.read(l.path(id), id)
}

// headerSize is the size a loose object's header states, when id is a loose object
// whose header inflates and parses (a type git knows and a size), as git's type check
// reads it.
func (l looseWriter) headerSize(id string) (int64, bool) {
	_, size, ok := l.header(id)
	return size, ok
}

// header is the type and size a loose object's header states, when id is a loose
// object whose header inflates and parses: what `cat-file --batch-check` answers for
// it, which reads no further.
func (l looseWriter) header(id string) (typ string, size int64, ok bool) {
	if !isHexID(id) {
		return "", 0, false
	}
	f, err := os.Open(l.path(id))
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	hr := headerReaders.Get().(*headerReader)
	defer func() {
		hr.in.Reset(nil) // the file is closed: nothing keeps it
		headerReaders.Put(hr)
	}()
	hr.in.Reset(f)
	if hr.zr == nil {
		hr.zr, err = zlib.NewReader(&hr.in)
	} else {
		err = hr.zr.(zlib.Resetter).Reset(&hr.in, nil)
	}
	if err != nil {
		return "", 0, false
	}
	var head [64]byte
	n, _ := io.ReadFull(hr.zr, head[:])
	nul := bytes.IndexByte(head[:n], 0)
	if nul < 0 {
		return "", 0, false
	}
	t, sz, ok := bytes.Cut(head[:nul], []byte{' '})
	v, err := strconv.ParseUint(string(sz), 10, 63)
	if !ok || err != nil {
		return "", 0, false
	}
	switch string(t) {
	case "blob", "tree", "commit", "tag":
		return string(t), int64(v), true
	}
	return "", 0, false
}

// headerReader inflates loose objects' headers, kept for the next one: a new zlib
// reader allocates and clears its whole window for each object.
type headerReader struct {
	in bufio.Reader
	zr io.ReadCloser
}

var headerReaders = sync.Pool{New: func() any {
	return &headerReader{in: *bufio.NewReaderSize(nil, 512)}
}}

// names lists the loose objects of the fan-out directories the ids fall in (one
// directory listing each, rather than an open of every id: most of a worktree's blobs
// are packed).
func (l looseWriter) names(ids []OID) map[string]bool {
	listed := map[string]bool{}
	found := map[string]bool{}
	for _, id := range ids {
		xx := id.String()[:2]
		if listed[xx] {
			continue
		}
		listed[xx] = true
		ents, err := os.ReadDir(filepath.Join(l.objects, xx))
		if err != nil {
			continue
		}
		for _, e := range ents {
			found[xx+e.Name()] = true
		}
	}
	return found
}

func isHexID(id string) bool {
	if len(id) != 40 && len(id) != 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// repairLoose makes sure the loose object id, when there is one, reads back whole: a
// torn one (git's writers keep an existing file and only freshen it) is removed, and
// the caller writes the object again. It reports whether it removed one.
func (r *Repository) repairLoose(id string) bool {
	l := looseWriter{objects: filepath.Join(r.CommonDir, "objects"), sha256: r.ObjectFormat == "sha256"}
	if len(id) < 4 {
		return false
	}
	p := l.path(id)
	if _, err := os.Lstat(p); err != nil || l.readsBack(p, id) {
		return false
	}
	return os.Remove(p) == nil
}

// BlobIDOfFile is the object id the bytes of the regular file at path would have as a
// blob in this repository (its object format), as read from disk with no conversion:
// `git hash-object --no-filters`, in process. A file that is not regular is an error.
func (r *Repository) BlobIDOfFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	h := looseWriter{sha256: r.ObjectFormat == "sha256"}.newHash()
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return "", err
	}
	if n != fi.Size() {
		return "", fmt.Errorf("%s changed while it was read", path)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
