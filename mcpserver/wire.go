package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP wire is input from outside (docs: "Shared data is hostile"): one line a
// client sends may be anything. The Go SDK's stdio transport ends the connection on
// the first line it cannot decode, with no answer (modelcontextprotocol/go-sdk#1209),
// and every later request goes unanswered. lineTransport reads the newline-delimited
// JSON-RPC 2.0 of the stdio transport itself: each line is checked (checkLine) before
// the SDK sees it, a bad one is answered with a JSON-RPC parse error (-32700) or
// invalid request (-32600) and the server reads on (docs/contract.md §12).

// maxLine bounds one line of input (the SDK's own bound).
const maxLine = mcp.DefaultMaxLineLength

// lineTransport is the server's stdio transport: newline-delimited JSON-RPC 2.0 on
// in and out, every line checked.
type lineTransport struct {
	in  io.ReadCloser
	out io.WriteCloser
	max int // longest line read (0: maxLine)
}

// Connect starts reading in.
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.max
	if max <= 0 {
		max = maxLine
	}
	c := &lineConn{in: t.in, out: t.out, incoming: make(chan incoming), closed: make(chan struct{})}
	go c.readLoop(max)
	return c, nil
}

type incoming struct {
	msg jsonrpc.Message
	err error
}

// lineConn is one connection of lineTransport.
type lineConn struct {
	in       io.ReadCloser
	out      io.WriteCloser
	incoming chan incoming
	closed   chan struct{}

	writeMu   sync.Mutex // one message per line: the SDK's writes and our answers
	closeOnce sync.Once
	closeErr  error
}

// readLoop reads lines until the input ends: a good one goes to Read, a bad one is
// answered here.
func (c *lineConn) readLoop(max int) {
	r := bufio.NewReaderSize(c.in, 64*1024)
	for {
		line, tooLong, err := readLine(r, max)
		if len(line) > 0 || tooLong {
			var msg jsonrpc.Message
			var answer []byte
			if tooLong {
				answer = errorResponse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("a message is one line of at most %d bytes", max))
			} else {
				msg, answer = checkLine(line)
			}
			if answer != nil {
				if werr := c.writeLine(answer); werr != nil {
					c.deliver(incoming{err: werr})
					return
				}
			} else if msg != nil && !c.deliver(incoming{msg: msg}) {
				return
			}
		}
		if err != nil {
			c.deliver(incoming{err: err})
			return
		}
	}
}

// deliver hands one message (or the end of input) to Read; false once the connection
// is closed.
func (c *lineConn) deliver(in incoming) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// readLine reads one line without its line ending. A line longer than max is read to
// its end and dropped (tooLong). err is the reader's (io.EOF at the end, after the
// last line).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, ferr := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(ferr, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, tooLong, ferr
	}
}

// checkLine turns one line into a message for the SDK, or into the answer to send
// instead: -32700 when it is not JSON, -32600 when it is JSON but not a JSON-RPC 2.0
// request, notification or response (a batch included: MCP has none since
// 2025-06-18). A blank line is neither.
func checkLine(line []byte) (jsonrpc.Message, []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !json.Valid(line) {
		return nil, errorResponse(nil, jsonrpc.CodeParseError, "the line is not JSON")
	}
	if line[0] != '{' {
		what := "a JSON-RPC message is a JSON object"
		if line[0] == '[' {
			what = "JSON-RPC batches are not supported: send one message per line"
		}
		return nil, errorResponse(nil, jsonrpc.CodeInvalidRequest, what)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil {
		return nil, errorResponse(nil, jsonrpc.CodeParseError, "the line is not JSON")
	}
	id, idErr := messageID(members["id"])
	var answerID json.RawMessage // the request's id, when it has a usable one
	if idErr == nil && id.IsValid() {
		answerID = members["id"]
	}
	invalid := func(msg string) (jsonrpc.Message, []byte) {
		return nil, errorResponse(answerID, jsonrpc.CodeInvalidRequest, msg)
	}
	var version string
	if json.Unmarshal(members["jsonrpc"], &version) != nil || version != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if idErr != nil {
		return invalid(idErr.Error())
	}
	method, hasMethod := members["method"]
	if hasMethod {
		var name string
		if json.Unmarshal(method, &name) != nil || name == "" {
			return invalid(`"method" must be a non-empty string`)
		}
		if p, ok := members["params"]; ok && !isObject(p) {
			return invalid(`"params" must be an object`)
		}
	} else {
		_, result := members["result"]
		_, failure := members["error"]
		if !id.IsValid() || result == failure {
			return invalid(`a message without "method" must be a response: an "id" and one of "result" or "error"`)
		}
		if failure && !isObject(members["error"]) {
			return invalid(`"error" must be an object`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return invalid("not a JSON-RPC message: " + err.Error())
	}
	return msg, nil
}

// messageID is a request's id: absent (a notification), a string or an integer.
func messageID(raw json.RawMessage) (jsonrpc.ID, error) {
	if raw == nil || string(raw) == "null" {
		return jsonrpc.ID{}, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return jsonrpc.ID{}, errors.New(`"id" is not JSON`)
	}
	switch v := v.(type) {
	case string:
		return jsonrpc.MakeID(v)
	case json.Number:
		if n, err := v.Int64(); err == nil && float64(n) < 1<<53 && float64(n) > -(1<<53) {
			return jsonrpc.MakeID(float64(n))
		}
	}
	return jsonrpc.ID{}, errors.New(`"id" must be a string or an integer`)
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// errorResponse is a JSON-RPC error response for id (null when the request's id is
// unknown), as one line.
func errorResponse(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(b)
	return err
}

// Read returns the next good message.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in := <-c.incoming:
		return in.msg, in.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write sends one message as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.writeLine(append(b, '\n'))
}

// Close closes both streams; a Read waiting for input returns.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		err := c.in.Close()
		if werr := c.out.Close(); err == nil {
			err = werr
		}
		c.closeErr = err
	})
	return c.closeErr
}

// SessionID is empty: a stdio connection is one session.
func (c *lineConn) SessionID() string { return "" }
