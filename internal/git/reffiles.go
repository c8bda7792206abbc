package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// RefFiles reads, for every ref under prefix, the files at paths in the commit it
// points to, and calls fn once per ref, in ref order, with one Blob per path. Where
// go-git opens the repository and there are few refs, they are listed from the ref
// files and their loose objects read in process (refFilesLocal): a command that reads
// a few runs starts no process. Else it is one `git for-each-ref` feeding one `git
// cat-file --batch`, both started at once and read as they stream: over 1,000 runs
// that took 0.2x the time of go-git's reads, which decode every delta chain in Go
// (bench/results/2026-12-05.md).
//
// A ref whose commit or file is missing gets a Blob with ErrNotFoundObject; only a
// failing git fails the call. Each Blob's Data is its own slice: fn may keep it.
func (r *Repository) RefFiles(ctx context.Context, prefix string, paths []string, fn func(ref Ref, blobs []Blob)) error {
	if done, err := r.refFilesLocal(ctx, prefix, paths, fn); done {
		return err
	}
	return r.refFilesGit(ctx, prefix, paths, fn)
}

// refFilesGit is RefFiles through git: for-each-ref streaming into cat-file --batch.
func (r *Repository) refFilesGit(ctx context.Context, prefix string, paths []string, fn func(ref Ref, blobs []Blob)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var format strings.Builder
	for i, p := range paths {
		if i > 0 {
			format.WriteString("%0a")
		}
		format.WriteString("%(objectname):" + p)
	}
	list := command(ctx, r.CommonDir, nil, "for-each-ref", "--format=%(refname) "+format.String(), prefix)
	batch := command(ctx, r.CommonDir, nil, "cat-file", "--batch", "--buffer")
	var listErr, batchErr bytes.Buffer
	list.Stderr, batch.Stderr = &listErr, &batchErr
	listOut, err := list.StdoutPipe()
	if err != nil {
		return err
	}
	batchIn, err := batch.StdinPipe()
	if err != nil {
		return err
	}
	batchOut, err := batch.StdoutPipe()
	if err != nil {
		return err
	}
	if err := list.Start(); err != nil {
		return err
	}
	if err := batch.Start(); err != nil {
		_ = list.Wait()
		return err
	}

	// The feeder records each ref, then passes its specs to cat-file; cat-file answers
	// every input line with exactly one record, in order, so record k belongs to ref
	// k/len(paths), which the feeder recorded before cat-file could see it. Nothing
	// waits on the reader: cat-file's output (--buffer) and ours are flushed only when
	// full, and at the end.
	var (
		mu   sync.Mutex
		refs []Ref
	)
	fed := make(chan error, 1)
	go func() {
		defer batchIn.Close()
		sc := bufio.NewScanner(listOut)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		w := bufio.NewWriterSize(batchIn, 64<<10)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			if n == 0 {
				name, spec, _ := strings.Cut(line, " ")
				id, _, _ := strings.Cut(spec, ":")
				mu.Lock()
				refs = append(refs, Ref{Name: name, ID: id})
				mu.Unlock()
				line = spec
			}
			_, _ = w.WriteString(line)
			_ = w.WriteByte('\n')
			n = (n + 1) % len(paths)
		}
		if err := sc.Err(); err != nil {
			fed <- err
			return
		}
		fed <- w.Flush()
	}()

	br := bufio.NewReaderSize(batchOut, 256<<10)
	var readErr error
	for k := 0; ; k++ {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		mu.Lock()
		known := k < len(refs)
		var ref Ref
		if known {
			ref = refs[k]
		}
		mu.Unlock()
		if !known {
			readErr = fmt.Errorf("an answer for no question")
			cancel()
			break
		}
		blobs := make([]Blob, len(paths))
		for i := range paths {
			if blobs[i], readErr = readBatchRecord(br, ref.ID+":"+paths[i]); readErr != nil {
				break
			}
		}
		if readErr != nil {
			cancel()
			_, _ = io.Copy(io.Discard, br)
			break
		}
		fn(ref, blobs)
	}
	feedErr := <-fed
	listWait, batchWait := list.Wait(), batch.Wait()
	switch {
	case readErr != nil:
		return fmt.Errorf("cat-file --batch: %w: %s", readErr, batchErr.String())
	case listWait != nil:
		return &Error{Args: []string{"for-each-ref", prefix}, Stderr: listErr.String(), Err: listWait}
	case batchWait != nil:
		return &Error{Args: []string{"cat-file", "--batch"}, Stderr: batchErr.String(), Err: batchWait}
	case feedErr != nil && !errors.Is(feedErr, io.ErrClosedPipe):
		return fmt.Errorf("feed cat-file: %w", feedErr)
	}
	return nil
}

// batchObject is one `cat-file --batch` answer: an object, or missing.
type batchObject struct {
	id, typ string
	data    []byte
	missing bool
	size    int64 // an `info` (--batch-check) answer's: the object's size
}

// blob is the answer as BlobsAt reports it: anything but a blob is not found.
func (o batchObject) blob(spec string) Blob {
	switch {
	case o.missing:
		return Blob{Err: fmt.Errorf("%s: %w", spec, ErrNotFoundObject)}
	case o.typ != "blob":
		return Blob{Err: fmt.Errorf("%s: %w (a %s)", spec, ErrNotFoundObject, o.typ)}
	}
	return Blob{ID: o.id, Data: o.data}
}

// readBatchRecord reads one `cat-file --batch` answer for spec.
func readBatchRecord(br *bufio.Reader, spec string) (Blob, error) {
	o, err := readBatchObject(br)
	if err != nil {
		return Blob{}, err
	}
	return o.blob(spec), nil
}

func readBatchObject(br *bufio.Reader) (batchObject, error) {
	o, size, err := readBatchHeader(br)
	if err != nil || o.missing {
		return o, err
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(br, data); err != nil {
		return batchObject{}, err
	}
	o.data = data[:size]
	return o, nil
}
