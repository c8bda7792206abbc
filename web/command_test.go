package web_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/cli"
	"github.com/git-atlas/git-atlas/internal/testenv"
)

// TestCommandServesUntilInterrupted: `git atlas web --json` prints {"url": ...} on
// 127.0.0.1 with a token; the token visit leads to the runs page; a next action reads
// as the command line's; SIGINT and SIGTERM end it with exit 0.
func TestCommandServesUntilInterrupted(t *testing.T) {
	t.Parallel()
	repo := testenv.Repo(t)
	atlas(t, repo, "start", "--id", "r1", "--stages", "a")
	bin := testenv.Command(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(bin, "-C", repo, "web", "--json")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			URL string `json:"url"`
		}
		if err := json.NewDecoder(bufio.NewReader(out)).Decode(&doc); err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("web --json printed no document: %v (%s)", err, stderr.String())
		}
		u, err := url.Parse(doc.URL)
		if err != nil || u.Hostname() != "127.0.0.1" || len(u.Query().Get("token")) != 32 {
			_ = cmd.Process.Kill()
			t.Fatalf("url %q: want 127.0.0.1 with a 128-bit token", doc.URL)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		resp, err := c.Get(doc.URL)
		if err != nil {
			_ = cmd.Process.Kill()
			t.Fatal(err)
		}
		b := body(t, resp)
		if resp.StatusCode != http.StatusOK || !strings.Contains(b, `data-run="r1"`) || resp.Request.URL.RawQuery != "" {
			t.Errorf("the token visit: %d at %s", resp.StatusCode, resp.Request.URL)
		}
		// The next action reads as the command line writes it, as on a terminal.
		plan := u.ResolveReference(&url.URL{Path: "/api/runs/r1/plan"})
		if resp, err := c.Get(plan.String()); err != nil {
			t.Errorf("the plan: %v", err)
		} else if b := body(t, resp); !strings.Contains(b, `"template": "git atlas transition r1 a dispatched --holder <holder>"`) {
			t.Errorf("the plan's next action is not the command line's:\n%s", b)
		}
		u.RawQuery = ""
		if resp, err := http.Get(u.String()); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("without the token: %v %v", resp, err)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("after %v: %v (want exit 0); stderr: %s", sig, err, stderr.String())
		}
	}
}

// TestCommandRefusesABadPort: --port outside 0..65535 is a usage error (exit 2).
func TestCommandRefusesABadPort(t *testing.T) {
	t.Parallel()
	repo := testenv.Repo(t)
	for _, p := range []string{"-1", "65536"} {
		var out, errb strings.Builder
		if code := cli.Main([]string{"-C", repo, "web", "--port=" + p}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "--port") {
			t.Errorf("--port %s: exit %d, %q", p, code, errb.String())
		}
	}
}

// TestOpenCallsTheBrowser: --open hands the printed URL, token included, to the
// browser `git web--browse` chooses (here a stand-in, through git's own
// web.browser and browser.<tool>.cmd: no real browser runs); a browser that fails
// is reported on stderr, and the dashboard serves all the same until interrupted.
func TestOpenCallsTheBrowser(t *testing.T) {
	t.Parallel()
	repo := testenv.Repo(t)
	atlas(t, repo, "start", "--id", "r1", "--stages", "a")
	bin := testenv.Command(t)
	opened := filepath.Join(t.TempDir(), "opened")
	if err := syscall.Mkfifo(opened, 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(key, value string) {
		t.Helper()
		testenv.Git(t, repo, "", "config", key, value)
	}
	config("web.browser", "atlastest")
	for _, c := range []struct {
		name, cmd string
		fails     bool
	}{
		{"opens", "printf '%s\\n' >'" + opened + "'", false},
		{"fails", "echo no display here >&2; exit 3; :", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			config("browser.atlastest.cmd", c.cmd)
			cmd := exec.Command(bin, "-C", repo, "web", "--open", "--json")
			cmd.Env = append(os.Environ(), "DISPLAY=") // whatever happens, no real browser
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			errOut, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			var doc struct {
				URL string `json:"url"`
			}
			if err := json.NewDecoder(out).Decode(&doc); err != nil {
				t.Fatalf("web --open --json printed no document: %v", err)
			}
			// What the stand-in browser was given, and the lines of stderr, as they come.
			var given chan string // nil, never ready, when the stand-in fails
			lines := make(chan string, 16)
			if !c.fails {
				given = make(chan string, 1)
				go func() {
					b, _ := os.ReadFile(opened) // blocks until the stand-in writes
					given <- strings.TrimSpace(string(b))
				}()
			}
			go func() {
				sc := bufio.NewScanner(errOut)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			select {
			case u := <-given:
				if c.fails || u != doc.URL || !strings.Contains(u, "?token=") {
					t.Errorf("the browser was given %q, want the printed URL %q with its token", u, doc.URL)
				}
			case line := <-lines:
				if !c.fails || !strings.Contains(line, "cannot open a browser") || !strings.Contains(line, "no display here") {
					t.Errorf("stderr says %q, want a warning that says why the browser failed", line)
				}
			case <-time.After(time.Minute):
				t.Fatal("--open neither ran the browser nor said why it could not")
			}
			jar, _ := cookiejar.New(nil)
			resp, err := (&http.Client{Jar: jar}).Get(doc.URL)
			if err != nil {
				t.Fatal(err)
			}
			if b := body(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(b, `data-run="r1"`) {
				t.Errorf("after --open the dashboard answers %d", resp.StatusCode)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for l := range lines {
				rest = append(rest, l)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("after SIGINT: %v (want exit 0); stderr: %s", err, rest)
			}
			if !c.fails && len(rest) > 0 {
				t.Errorf("a browser that opened left a warning: %s", rest)
			}
		})
	}
}
