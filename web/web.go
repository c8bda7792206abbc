// Package web is `git atlas web`: a read-only dashboard of the repository's runs,
// served on loopback (docs/contract.md §16). It is a front end beside internal/cli and mcpserver:
// every document it shows comes from an operation of package ops (list, show, log,
// graph, the resume plan, worktree list, recovery list and show), and the API under
// /api/ marshals the same result types the commands print with --json.
//
// Safe by default (docs/contract.md §16): it listens on 127.0.0.1 only, every request needs the
// random token (?token=, which sets an HttpOnly SameSite=Strict cookie) unless the
// server was started without one, a Host that is not a loopback name is refused (DNS
// rebinding), only GET and HEAD are answered, every response carries a strict
// Content-Security-Policy, and every ledger string goes through html/template.
// Nothing is loaded from elsewhere: the HTML, CSS and JavaScript are embedded.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ops"
)

// CookieName is the cookie the first visit with the token sets.
const CookieName = "atlas_token"

// Options configure the server.
type Options struct {
	Ops *ops.Ops
	// Port is the port on 127.0.0.1 (0: a free one).
	Port int
	// NoToken serves without a token (loopback and Host checks still hold).
	NoToken bool
	// Ready is called once the server listens, with the URL to open (token included).
	Ready func(url string) error
	// Poll is how often the ref watcher looks at the refs' directories (0: a second).
	Poll time.Duration
	// Spelling is how the front end that started the server writes steps and fields:
	// the results (a next action) and the errors' hints read as that front end's
	// (the command line's for `git atlas web`), as its --json documents do.
	Spelling fault.Spelling
}

// Server is the dashboard's handler with its token.
type Server struct {
	ops   *ops.Ops
	token string
	mux   *http.ServeMux
	watch *watcher
	step  func(fault.Step) string
}

// Spell makes the server write the steps and fields its results and its errors'
// hints name as sp does (Options.Spelling).
func (s *Server) Spell(sp fault.Spelling) {
	s.step = sp.Step
	s.ops.Spelling = sp
}

// NewToken is a random token of 128 bits, hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// New is the dashboard for o; token "" serves without one. poll is the ref
// watcher's period (0: a second).
func New(o *ops.Ops, token string, poll time.Duration) *Server {
	if poll <= 0 {
		poll = time.Second
	}
	s := &Server{ops: o, token: token, watch: newWatcher(o.CommonDir(), poll)}
	s.mux = s.routes()
	return s
}

// Serve listens on 127.0.0.1 and serves until ctx ends (SIGINT, SIGTERM), then
// returns nil.
func Serve(ctx context.Context, opt Options) error {
	token := ""
	if !opt.NoToken {
		t, err := NewToken()
		if err != nil {
			return err
		}
		token = t
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opt.Port)))
	if err != nil {
		return fmt.Errorf("cannot listen on 127.0.0.1:%d: %w", opt.Port, err)
	}
	s := New(opt.Ops, token, opt.Poll)
	s.Spell(opt.Spelling)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	u := "http://" + ln.Addr().String() + "/"
	if token != "" {
		u += "?token=" + token
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if opt.Ready != nil {
		if err := opt.Ready(u); err != nil {
			_ = srv.Close()
			return err
		}
	}
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // event streams end with ctx (BaseContext)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// loopbackHost reports whether the Host header names this machine's loopback by a
// name no DNS answer can change: 127.0.0.1, localhost or [::1], with any port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	switch strings.ToLower(h) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// csp is the Content-Security-Policy of every response: nothing but this origin's
// own script and style, no frames, no forms elsewhere, no plugins.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP applies the rules every request meets (docs/contract.md §16), then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !loopbackHost(r.Host) {
		http.Error(w, "refused: the Host is not 127.0.0.1, localhost or [::1]", http.StatusMisdirectedRequest)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if s.token != "" {
		if q := r.URL.Query().Get("token"); q != "" {
			if !s.tokenIs(q) {
				http.Error(w, "forbidden: wrong token", http.StatusForbidden)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			// The token leaves the address bar (and the history) at once.
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			// A path of "//host/..." would be read as another host's address: the
			// redirect stays on this server, whatever the path.
			path := "/" + strings.TrimLeft(u.Path, "/")
			http.Redirect(w, r, (&url.URL{Path: path, RawQuery: u.RawQuery}).String(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(CookieName)
		if err != nil || !s.tokenIs(c.Value) {
			http.Error(w, "forbidden: open the URL git atlas web printed (it carries the token)", http.StatusForbidden)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// op is the operations for one request: a fresh Ops over the same repository (an
// Ops keeps every store it made, and the server lives for hours), which reads the
// configuration and the worktrees afresh.
func (s *Server) op() *ops.Ops {
	return s.ops.Fresh()
}

func (s *Server) tokenIs(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1
}
