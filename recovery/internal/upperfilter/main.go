// Command upperfilter is the recovery tests' filter process (filter.<driver>.process):
// clean makes ASCII letters upper case and smudge lower case, as `tr a-z A-Z` and
// `tr A-Z a-z` would, one process for each git command that converts files. A snapshot
// that went through it could not give the original text back. It is its own small
// program, not the race-built test binary under another name: that one takes about 110
// ms of CPU to start where this takes a few (bench/results/2026-12-07.md).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "upper-filter:", err)
		os.Exit(1)
	}
}

// serve speaks git's long-running filter protocol (version 2, clean and
// smudge) on r and w until git closes r.
func serve(r io.Reader, w io.Writer) error {
	in, out := bufio.NewReader(r), bufio.NewWriter(w)
	hello, err := readList(in)
	if err != nil {
		return err
	}
	if len(hello) < 2 || hello[0] != "git-filter-client" || hello[1] != "version=2" {
		return fmt.Errorf("unexpected handshake %q", hello)
	}
	if err := writeList(out, "git-filter-server", "version=2"); err != nil {
		return err
	}
	if _, err := readList(in); err != nil { // git's capabilities
		return err
	}
	if err := writeList(out, "capability=clean", "capability=smudge"); err != nil {
		return err
	}
	for {
		cmd, err := readList(in)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var content []byte
		for {
			p, err := readPacket(in)
			if err != nil {
				return err
			}
			if p == nil {
				break
			}
			content = append(content, p...)
		}
		var from, to byte = 'A', 'a' // smudge: lower case
		if len(cmd) > 0 && cmd[0] == "command=clean" {
			from, to = 'a', 'A'
		}
		for i, c := range content {
			if c >= from && c < from+26 {
				content[i] = c - from + to
			}
		}
		if err := writeList(out, "status=success"); err != nil {
			return err
		}
		for len(content) > 0 {
			n := min(len(content), 65516)
			if err := writePacket(out, content[:n]); err != nil {
				return err
			}
			content = content[n:]
		}
		if err := writeList(out); err != nil { // the content's end
			return err
		}
		if err := writeList(out); err != nil { // status unchanged
			return err
		}
	}
}

// readPacket reads one pkt-line: its payload, or nil for a flush packet.
func readPacket(r *bufio.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(head[:]), 16, 16)
	if err != nil {
		return nil, fmt.Errorf("pkt-line length %q: %w", head, err)
	}
	if n == 0 {
		return nil, nil
	}
	if n < 4 {
		return nil, fmt.Errorf("pkt-line length %d", n)
	}
	p := make([]byte, n-4)
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, err
	}
	return p, nil
}

// readList reads text packets up to a flush packet.
func readList(r *bufio.Reader) ([]string, error) {
	var list []string
	for {
		p, err := readPacket(r)
		if err != nil {
			return list, err
		}
		if p == nil {
			return list, nil
		}
		list = append(list, string(bytes.TrimSuffix(p, []byte("\n"))))
	}
}

func writePacket(w *bufio.Writer, p []byte) error {
	if _, err := fmt.Fprintf(w, "%04x", len(p)+4); err != nil {
		return err
	}
	_, err := w.Write(p)
	return err
}

// writeList writes lines as text packets, then a flush packet, and flushes w.
func writeList(w *bufio.Writer, lines ...string) error {
	for _, l := range lines {
		if err := writePacket(w, []byte(l+"\n")); err != nil {
			return err
		}
	}
	if _, err := w.WriteString("0000"); err != nil {
		return err
	}
	return w.Flush()
}
