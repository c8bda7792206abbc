package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RefMessage is a ref with what the ledger's listing needs of its commit: the
// commit's tree and its whole message.
type RefMessage struct {
	Ref
	Type    string // the object's type, "" when it is missing; Tree and Message are set for "commit" only
	Tree    string
	Message []byte // the raw message, subject line first
}

// CommitMessages reads the commit every ref points to with one `git cat-file
// --batch` (which, unlike for-each-ref's %(contents), answers "missing" for a missing
// object instead of dying) and calls fn with refs[i]'s RefMessage, in order, as the
// answers arrive. Each Message is its own slice: fn may keep it.
func (r *Repository) CommitMessages(ctx context.Context, refs []Ref, fn func(i int, m RefMessage)) error {
	specs := make([]string, len(refs))
	for i, ref := range refs {
		specs[i] = ref.ID
	}
	return catFile(ctx, r, specs, func(i int, o batchObject) {
		m := RefMessage{Ref: refs[i], Type: o.typ}
		if o.typ == "commit" {
			// Headers (tree first), a blank line, the message.
			headers, msg, _ := bytes.Cut(o.data, []byte("\n\n"))
			if tree, ok := bytes.CutPrefix(headers, []byte("tree ")); ok {
				if j := bytes.IndexByte(tree, '\n'); j >= 0 {
					tree = tree[:j]
				}
				m.Tree = string(tree)
			}
			m.Message = msg
		}
		fn(i, m)
	})
}

// refMessagesFormat prints a header line, then exactly %(contents:size) bytes of
// message, then a NUL that proves the reader kept its place.
const refMessagesFormat = "--format=%(refname) %(objectname) %(objecttype) %(tree) %(contents:size)%0a%(contents)%00"

// RefMessages calls fn for every ref under prefix, in ref order, with its commit's
// tree and message, as one `git for-each-ref` streams them: no object reads of our
// own, the fastest way to read every ledger tip's message. Unlike ListRefs it needs
// every target object: for-each-ref dies on the first ref whose object is missing or
// unparsable, and then this call fails, possibly after fn saw some refs; a caller
// that must still list the healthy refs starts over with ListRefs and
// CommitMessages. Few refs whose objects are all whole and loose are read in process
// (refMessagesLocal). Each Message is its own slice: fn may keep it.
func (r *Repository) RefMessages(ctx context.Context, prefix string, fn func(RefMessage)) error {
	if r.noRefsUnder(prefix) {
		return nil
	}
	if r.refMessagesLocal(prefix, fn) {
		return nil
	}
	return r.refMessagesGit(ctx, prefix, fn)
}

// refMessagesGit is RefMessages through one for-each-ref.
func (r *Repository) refMessagesGit(ctx context.Context, prefix string, fn func(RefMessage)) error {
	x := command(ctx, r.CommonDir, nil, "for-each-ref", refMessagesFormat, prefix)
	var stderr bytes.Buffer
	x.Stderr = &stderr
	out, err := x.StdoutPipe()
	if err != nil {
		return err
	}
	if err := x.Start(); err != nil {
		return err
	}
	readErr := readRefMessages(bufio.NewReaderSize(out, 256<<10), fn)
	if readErr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	if err := x.Wait(); err != nil {
		return &Error{Args: []string{"for-each-ref", prefix}, Stderr: stderr.String(), Err: err}
	}
	if readErr != nil {
		return fmt.Errorf("for-each-ref %s: %w", prefix, readErr)
	}
	return nil
}

func readRefMessages(br *bufio.Reader, fn func(RefMessage)) error {
	for {
		header, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) && header == "" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("truncated record %q", header)
		}
		f := strings.Split(strings.TrimSuffix(header, "\n"), " ")
		if len(f) != 5 {
			return fmt.Errorf("bad record header %q", header)
		}
		size := 0
		if f[4] != "" {
			if size, err = strconv.Atoi(f[4]); err != nil || size < 0 {
				return fmt.Errorf("bad record header %q", header)
			}
		}
		// The message, the NUL the format ends with, the newline for-each-ref adds.
		body := make([]byte, size+2)
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("truncated message of %s: %w", f[0], err)
		}
		if body[size] != 0 || body[size+1] != '\n' {
			return fmt.Errorf("message of %s is not %d bytes long", f[0], size)
		}
		m := RefMessage{Ref: Ref{Name: f[0], ID: f[1]}, Type: f[2]}
		if m.Type == "commit" {
			m.Tree, m.Message = f[3], body[:size:size]
		}
		fn(m)
	}
}
