package git

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// A command reads objects many times (a snapshot checks its trees, then writes them;
// a resume lists, loads and checks): issue 34 counted a `cat-file --batch` and a
// `cat-file -t` per read. Once KeepObjectReader is called (the command line does, for
// the one Repository of a command, and closes it when the command ends), every object
// read goes to one long-lived `git cat-file --batch-command --buffer`: `contents` for
// reads, `info` for HasObject and ObjectType, a `flush` after each request.
//
// Nothing it answers goes stale: git looks a loose object up on disk at every request
// and, when an object is in no pack it knows, reads the pack directory again before
// calling it missing, so objects written after it started (by git-atlas or anyone) are
// found; an object's content never changes. `info` answers as `cat-file -t` does (an
// empty or torn loose object, whose header does not inflate, is missing: issue 30's
// rule) and `contents` of a loose object whose body is torn ends the process, as it
// failed the one-shot read: the request fails, and the next request starts a new one.
//
// A request holds the process for its whole length. A read asked meanwhile (from the
// callback of a read in progress, or from another goroutine) starts a process of its
// own, as before, rather than wait: nothing can deadlock on the shared one.

// objectReader is the long-lived cat-file of one Repository.
type objectReader struct {
	mu     sync.Mutex // held for a whole request, and by Close
	p      *batchProc // nil until the first request, and after a failure
	closed bool
}

// batchProc is one running `cat-file --batch-command --buffer`.
type batchProc struct {
	x      *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
}

// KeepObjectReader makes r read every object through one long-lived cat-file from now
// on, until Close. Call it before r is shared; whoever calls it calls Close.
func (r *Repository) KeepObjectReader() {
	if r.reader == nil {
		r.reader = new(objectReader)
	}
}

// StartObjectReader starts the long-lived cat-file (KeepObjectReader) in the
// background when r keeps one, it is free and not running yet, and the store holds
// packed objects: a caller about to read them has its start-up overlap other work.
// Nothing waits for it: a read that comes first starts a process of its own, as any
// read does that finds the reader busy.
func (r *Repository) StartObjectReader(ctx context.Context) {
	if g, ok := r.objects.(*goGitStore); ok && g.loose().onlyLoose() {
		// Every object is loose, so every read is answered in process: a process
		// started now would be closed unused (a dirty worktree remove's snapshot
		// started one for nothing). A read that does need git starts it then.
		return
	}
	b := r.shared() // held until the process has started
	if b == nil {
		return
	}
	if b.p != nil {
		b.mu.Unlock()
		return
	}
	go func() {
		defer b.mu.Unlock()
		if p, err := startBatch(ctx, r); err == nil {
			b.p = p
		}
	}()
}

// Close ends the long-lived cat-file, if one runs (KeepObjectReader); reads after it
// start a process each, as without KeepObjectReader.
func (r *Repository) Close() {
	if r.reader == nil {
		return
	}
	r.reader.mu.Lock()
	defer r.reader.mu.Unlock()
	r.reader.closed = true
	if r.reader.p != nil {
		r.reader.p.close()
		r.reader.p = nil
	}
}

// shared returns the long-lived reader, locked for one request, or nil when r keeps
// none, it is closed, or a request holds it.
func (r *Repository) shared() *objectReader {
	b := r.reader
	if b == nil || !b.mu.TryLock() {
		return nil
	}
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	return b
}

// request asks the long-lived process verb ("contents" or "info") of every spec, in
// order, and calls fn with each answer as it arrives; b is locked by the caller
// (shared). A failure ends the process: the next request starts another.
func (b *objectReader) request(ctx context.Context, r *Repository, verb string, specs []string, fn func(i int, o batchObject)) error {
	if b.p == nil {
		p, err := startBatch(ctx, r)
		if err != nil {
			return err
		}
		b.p = p
	}
	p := b.p
	// The questions are written while the answers are read: git's output is flushed
	// when its buffer fills, and a reader that waited for all questions to be written
	// could leave both sides waiting on a full pipe.
	var fed sync.WaitGroup
	var feedErr error
	fed.Go(func() {
		w := bufio.NewWriterSize(p.in, 64<<10)
		for _, s := range specs {
			_, _ = w.WriteString(verb + " " + s + "\n")
		}
		_, _ = w.WriteString("flush\n")
		feedErr = w.Flush()
	})
	// A cancelled request ends the process, which ends the reads below.
	stop := context.AfterFunc(ctx, p.kill)
	read := readBatchObject
	if verb == "info" {
		read = readBatchInfo
	}
	var err error
	for i := range specs {
		var o batchObject
		if o, err = read(p.out); err != nil {
			break
		}
		fn(i, o)
	}
	killed := !stop()
	if err != nil {
		p.kill() // and the feeder, if it is still writing, stops
	}
	fed.Wait()
	if err == nil {
		err = feedErr
	}
	if err == nil && killed {
		err = ctx.Err()
	}
	if err == nil {
		return nil
	}
	p.kill()
	_ = p.x.Wait() // and stderr is whole
	b.p = nil
	if ctx.Err() != nil {
		return fmt.Errorf("cat-file --batch-command: %w", ctx.Err())
	}
	return fmt.Errorf("cat-file --batch-command: %w: %s", err, p.stderr.String())
}

func startBatch(ctx context.Context, r *Repository) (*batchProc, error) {
	// Not the request's context: the process outlives the request (request ends it
	// when its context is cancelled).
	x := command(context.WithoutCancel(ctx), r.CommonDir, nil, "cat-file", "--batch-command", "--buffer")
	in, err := x.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := x.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &batchProc{x: x, in: in, out: bufio.NewReaderSize(out, 64<<10), stderr: new(tailBuffer)}
	x.Stderr = p.stderr
	if err := x.Start(); err != nil {
		return nil, fmt.Errorf("cat-file --batch-command: %w", err)
	}
	return p, nil
}

func (p *batchProc) kill() { _ = p.x.Process.Kill() }

// close ends the process as git expects: its input closed, it exits.
func (p *batchProc) close() {
	_ = p.in.Close()
	_ = p.x.Wait()
}

// readBatchInfo reads one `info` answer ("<id> <type> <size>", or missing).
func readBatchInfo(br *bufio.Reader) (batchObject, error) {
	o, size, err := readBatchHeader(br)
	o.size = int64(size)
	return o, err
}

// readBatchHeader reads the header line every batch answer starts with: "<id> <type>
// <size>", or "<spec> missing" / "ambiguous" (o.missing).
func readBatchHeader(br *bufio.Reader) (o batchObject, size int, err error) {
	header, err := br.ReadString('\n')
	if err != nil {
		return batchObject{}, 0, err
	}
	header = strings.TrimSuffix(header, "\n")
	if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") {
		return batchObject{missing: true}, 0, nil
	}
	f := strings.Fields(header)
	if len(f) != 3 {
		return batchObject{}, 0, fmt.Errorf("bad header %q", header)
	}
	n, err := strconv.ParseUint(f[2], 10, 63)
	if err != nil || n > math.MaxInt-1 {
		return batchObject{}, 0, fmt.Errorf("bad header %q", header)
	}
	return batchObject{id: f[0], typ: f[1]}, int(n), nil
}

// objectInfo asks git the type of every spec (as `cat-file --batch-check`, which
// answers as `cat-file -t` does), through the long-lived reader when r keeps one and
// it is free, else one process for the call; one loose object, where go-git opens the
// repository, is answered in process.
func objectInfo(ctx context.Context, r *Repository, specs []string, fn func(i int, o batchObject)) error {
	if len(specs) == 0 {
		return nil
	}
	if g, ok := r.objects.(*goGitStore); ok && len(specs) == 1 && !r.mayReplace() {
		// A loose object whose header reads: its answer, with no process.
		if typ, size, ok := g.loose().header(specs[0]); ok {
			fn(0, batchObject{id: specs[0], typ: typ, size: size})
			return nil
		}
	}
	return objectInfoGit(ctx, r, specs, fn)
}

// objectInfoGit is objectInfo asked of git.
func objectInfoGit(ctx context.Context, r *Repository, specs []string, fn func(i int, o batchObject)) error {
	if len(specs) == 0 {
		return nil
	}
	if b := r.shared(); b != nil {
		defer b.mu.Unlock()
		return b.request(ctx, r, "info", specs, fn)
	}
	return oneBatch(ctx, r, "--batch-check", specs, fn, readBatchInfo)
}

// tailBuffer keeps the last few kilobytes written to it: a long-lived process's
// stderr, for the error that ends it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 8 << 10

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}
