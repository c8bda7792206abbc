package web_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/git-atlas/git-atlas/internal/cli"
	"github.com/git-atlas/git-atlas/internal/testenv"
)

// TestCommandServesUntilInterrupted: `git atlas web --json` prints {"url": ...} on
// 127.0.0.1 with a token; the token visit leads to the runs page; SIGINT and SIGTERM
// end it with exit 0.
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
