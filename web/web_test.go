package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/cli"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/internal/text"
	"github.com/git-atlas/git-atlas/ops"
	"github.com/git-atlas/git-atlas/web"
)

func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }

// atlas runs git-atlas in this process, in repo, and returns its stdout.
func atlas(t testing.TB, repo string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("git atlas %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// hostile is ledger text that would run if a page did not escape it.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)> javascript:alert(3)`

// fixture is a repository with an interrupted run (the oldest), a hostile single run
// with a snapshot, and a graph run with an expansion.
func fixture(t testing.TB) string {
	t.Helper()
	repo := testenv.Repo(t)
	atlas(t, repo, "start", "--id", "old-stopped", "--stages", "a", "--intent", "stopped long ago")
	atlas(t, repo, "transition", "old-stopped", "a", "dispatched")
	atlas(t, repo, "finish", "old-stopped", "--status", "stopped", "--reason", "the machine rebooted")

	atlas(t, repo, "start", "--id", "evil", "--stages", "plan,code", "--intent", hostile, "--criterion", hostile)
	atlas(t, repo, "transition", "evil", "plan", "dispatched", "--reason", hostile, "--thread-id", "javascript:alert-4") // a thread id is a plain token now; this one is still a URL scheme
	atlas(t, repo, "event", "evil", "note", "--stage", "plan", "--data", `{"msg":"`+strings.ReplaceAll(hostile, `"`, `\"`)+`","url":"javascript:alert(5)"}`)
	if err := os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("hello from the snapshot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	atlas(t, repo, "recover", "evil", "--stage", "plan")
	if err := os.Remove(filepath.Join(repo, "hello.txt")); err != nil {
		t.Fatal(err)
	}

	atlas(t, repo, "start", "--id", "dag", "--graph", "--intent", "a graph", "--holder", "drv", "--ttl", "1h", "--criterion", "it works")
	atlas(t, repo, "job", "add", "dag", "a", "--holder", "drv", "--criterion", "it works")
	atlas(t, repo, "job", "add", "dag", "b", "--needs", "a", "--holder", "drv")
	var claim struct {
		Lease string `json:"lease"`
	}
	if err := json.Unmarshal([]byte(atlas(t, repo, "job", "claim", "dag", "--holder", "w1", "--json")), &claim); err != nil {
		t.Fatal(err)
	}
	kids := filepath.Join(t.TempDir(), "kids.json")
	if err := os.WriteFile(kids, []byte(`[{"id":"a1"},{"id":"a2","needs":["a1"]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	atlas(t, repo, "job", "done", "dag", "a", "--lease", claim.Lease, "--status", "ok", "--children", kids)
	atlas(t, repo, "job", "claim", "dag", "--holder", "w2")
	return repo
}

func server(t testing.TB, repo, token string) *web.Server {
	t.Helper()
	r, err := git.Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	return web.New(ops.New(r), token, 0)
}

// get serves one request and returns the response.
func get(s http.Handler, method, target, host string, cookie *http.Cookie) *http.Response {
	req := httptest.NewRequest(method, target, nil)
	req.Host = host
	if cookie != nil {
		req.AddCookie(cookie)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w.Result()
}

func body(t testing.TB, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSecurityRules(t *testing.T) {
	t.Parallel()
	repo := testenv.Repo(t)
	s := server(t, repo, "sekrit")
	good := &http.Cookie{Name: web.CookieName, Value: "sekrit"}

	// No token, a wrong token, a wrong cookie: refused.
	for _, c := range []struct {
		target string
		cookie *http.Cookie
	}{{"/", nil}, {"/?token=wrong", nil}, {"/api/runs", &http.Cookie{Name: web.CookieName, Value: "wrong"}}, {"/events", nil}} {
		if r := get(s, "GET", c.target, "127.0.0.1:8080", c.cookie); r.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s (cookie %v): status %d, want 403", c.target, c.cookie, r.StatusCode)
		}
	}
	// The token sets an HttpOnly SameSite=Strict cookie and leaves the address.
	r := get(s, "GET", "/runs/x?token=sekrit&at=2", "localhost:1", nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/runs/x?at=2" {
		t.Errorf("token visit: status %d, location %q", r.StatusCode, r.Header.Get("Location"))
	}
	cs := r.Cookies()
	if len(cs) != 1 || cs[0].Value != "sekrit" || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("token visit set cookies %+v", cs)
	}
	// The redirect stays on this server: a path of "//host" is not another host's.
	for _, target := range []string{"//evil.example/?token=sekrit", "///evil.example/x?token=sekrit"} {
		r := get(s, "GET", target, "localhost:1", nil)
		if loc := r.Header.Get("Location"); r.StatusCode != http.StatusSeeOther || strings.HasPrefix(loc, "//") || !strings.HasPrefix(loc, "/") {
			t.Errorf("token visit of %s: status %d, location %q", target, r.StatusCode, loc)
		}
	}
	// The cookie is enough, on every loopback name and port.
	for _, host := range []string{"127.0.0.1:8080", "localhost", "LOCALHOST:9", "[::1]:8080", "[::1]"} {
		if r := get(s, "GET", "/", host, good); r.StatusCode != http.StatusOK {
			t.Errorf("Host %s: status %d, want 200", host, r.StatusCode)
		}
	}
	// Any other Host is refused, token or not: DNS rebinding included.
	for _, host := range []string{"attacker.example:8080", "127.0.0.1.nip.io", "localhost.attacker.example", "127.0.0.2", "0.0.0.0:80", "[::2]:1", ""} {
		if r := get(s, "GET", "/?token=sekrit", host, good); r.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: status %d, want 421", host, r.StatusCode)
		}
	}
	// Only GET and HEAD.
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		r := get(s, m, "/api/runs", "127.0.0.1", good)
		if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: status %d, Allow %q", m, r.StatusCode, r.Header.Get("Allow"))
		}
	}
	if r := get(s, "HEAD", "/", "127.0.0.1", good); r.StatusCode != http.StatusOK {
		t.Errorf("HEAD: status %d", r.StatusCode)
	}
	// Every response, refusals included, carries the headers.
	for _, r := range []*http.Response{get(s, "GET", "/", "127.0.0.1", good), get(s, "GET", "/", "evil.example", nil), get(s, "POST", "/", "127.0.0.1", good)} {
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("X-Content-Type-Options %q", r.Header.Get("X-Content-Type-Options"))
		}
	}
	// Without a token (--no-token), the other rules still hold.
	open := server(t, repo, "")
	if r := get(open, "GET", "/", "127.0.0.1", nil); r.StatusCode != http.StatusOK {
		t.Errorf("no token: status %d", r.StatusCode)
	}
	if r := get(open, "GET", "/", "rebind.example", nil); r.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("no token, foreign Host: status %d", r.StatusCode)
	}
}

// TestHostileTextIsEscaped: a run whose every free-text field holds markup and
// javascript: URLs renders them as text, on every page.
func TestHostileTextIsEscaped(t *testing.T) {
	t.Parallel()
	repo := fixture(t)
	s := server(t, repo, "")
	pages := []string{"/", "/runs/evil", "/runs/evil?at=2", "/runs/evil?type=note", "/runs/dag"}
	for _, p := range pages {
		r := get(s, "GET", p, "127.0.0.1", nil)
		b := body(t, r)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, r.StatusCode, b)
		}
		for _, bad := range []string{"<script>alert", "<img", `href="javascript:`, "onerror=alert"} {
			if strings.Contains(b, bad) && (bad != "onerror=alert" || !strings.Contains(b, "&lt;img src=x onerror=alert")) {
				t.Errorf("GET %s: the page holds %q unescaped", p, bad)
			}
		}
		if strings.Count(b, "<script") != 1 || !strings.Contains(b, `<script src="/static/app.js" defer></script>`) {
			t.Errorf("GET %s: a script element other than the page's own", p)
		}
	}
	b := body(t, get(s, "GET", "/runs/evil", "127.0.0.1", nil))
	if !strings.Contains(b, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the run page does not show the intent as text:\n%s", b)
	}
}

// TestAPIDocumentsAreTheCommands: /api/ serves the documents the commands print
// with --json.
func TestAPIDocumentsAreTheCommands(t *testing.T) {
	t.Parallel()
	repo := fixture(t)
	s := server(t, repo, "")
	s.Spell(cli.Spelling) // as `git atlas web` does: the documents read as the command line's
	for _, c := range []struct {
		path string
		args []string
	}{
		{"/api/runs", []string{"list", "--all"}},
		{"/api/runs/evil", []string{"show", "evil"}},
		{"/api/runs/evil?at=2", []string{"show", "evil", "--at", "2"}},
		{"/api/runs/evil/log", []string{"log", "evil"}},
		{"/api/runs/dag/log?type=job_claimed", []string{"log", "dag", "--type", "job_claimed"}},
		{"/api/runs/dag/graph", []string{"graph", "dag"}},
		{"/api/runs/dag/plan", []string{"resume", "--plan", "dag"}},
		{"/api/runs/evil/plan", []string{"resume", "--plan", "evil"}},
	} {
		r := get(s, "GET", c.path, "127.0.0.1", nil)
		got := body(t, r)
		if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("%s: %d %s %s", c.path, r.StatusCode, r.Header.Get("Content-Type"), got)
		}
		// The command, run here with -C, prints its steps with -C for its asker
		// (docs/contract.md §11.13); the dashboard's are those of a command run in the
		// repository, without it.
		want := strings.ReplaceAll(atlas(t, repo, append([]string{"--json"}, c.args...)...), "git atlas -C "+text.ShellQuote(repo)+" ", "git atlas ")
		var g, w any
		if err := json.Unmarshal([]byte(got), &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s differs from git atlas --json %s:\n%s\nwant:\n%s", c.path, strings.Join(c.args, " "), got, want)
		}
	}
	if r := get(s, "GET", "/api/runs/nope", "127.0.0.1", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("a run that does not exist: status %d", r.StatusCode)
	}
	// The step an error's hint names is written as the command line writes it.
	if got := body(t, get(s, "GET", "/api/runs/nope", "127.0.0.1", nil)); !strings.Contains(got, "`git atlas list --all` shows every run") {
		t.Errorf("a run that does not exist: %s", got)
	}
}

// TestRunsPage: interrupted runs first, then newest first; each row shows the run's
// kind, status, current stage (a single run) or job counts by state (a graph run),
// verdict, driver and lease expiry, live or interrupted, and the last event's age;
// ?status= filters. /api/runs carries a graph run's job counts and verdict.
func TestRunsPage(t *testing.T) {
	t.Parallel()
	repo := fixture(t)
	// A graph run whose driver's lease ran out: interrupted, the newest run.
	atlas(t, repo, "start", "--id", "lost", "--graph", "--holder", "gone", "--ttl", "1ms")
	// In process the next command can begin within the lease's millisecond (seen under
	// strace, where it was refused as the live driver's): let it run out first.
	time.Sleep(5 * time.Millisecond)
	atlas(t, repo, "job", "add", "lost", "x")
	s := server(t, repo, "")
	b := body(t, get(s, "GET", "/", "127.0.0.1", nil))
	order := []string{}
	rows := map[string]string{}
	for _, part := range strings.Split(b, `data-run="`)[1:] {
		id := part[:strings.IndexByte(part, '"')]
		order = append(order, id)
		rows[id] = part[:strings.Index(part, "</tr>")]
	}
	cell := func(run, col string) string {
		row := rows[run]
		i := strings.Index(row, `<td class="`+col+`">`)
		if i < 0 {
			t.Errorf("run %s: no %s column", run, col)
			return ""
		}
		c := row[i+len(`<td class="`+col+`">`):]
		return c[:strings.Index(c, "</td>")]
	}
	for _, c := range []struct{ run, col, want string }{
		{"dag", "kind", "graph"},
		{"dag", "status", ">running<"},
		{"dag", "stage", `4 jobs · <span class="state-DONE">1 done</span> · <span class="state-RUNNING">1 running</span> · <span class="state-PENDING">2 pending</span>`},
		{"dag", "verdict", `<span class="badge verdict-unverified">unverified</span>`},
		{"dag", "driver", "drv"},
		{"dag", "lease", " left"},
		{"dag", "live", `<span class="badge live">live</span>`},
		{"dag", "last-event", " ago"},
		{"evil", "kind", "single"},
		{"evil", "status", ">running<"},
		{"evil", "stage", "plan"},
		{"evil", "verdict", "–"},
		{"evil", "live", `<span class="badge interrupted">interrupted</span>`},
		{"evil", "last-event", " ago"},
		{"old-stopped", "status", ">stopped<"},
		{"old-stopped", "stage", "a"},
		{"lost", "kind", "graph"},
		{"lost", "stage", `1 jobs · <span class="state-PENDING">1 pending</span>`},
		{"lost", "verdict", "–"},
		{"lost", "driver", "gone"},
		{"lost", "lease", "expired "},
		{"lost", "live", `<span class="badge interrupted">interrupted</span>`},
	} {
		if got := cell(c.run, c.col); !strings.Contains(got, c.want) {
			t.Errorf("run %s, column %s: %q, want %q in it", c.run, c.col, got, c.want)
		}
	}
	var api struct {
		Runs []struct {
			RunID string         `json:"run_id"`
			Jobs  map[string]int `json:"jobs"`
			Verd  *struct {
				Verdict    string   `json:"verdict"`
				Unverified []string `json:"unverified"`
			} `json:"verdict"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(body(t, get(s, "GET", "/api/runs", "127.0.0.1", nil))), &api); err != nil {
		t.Fatal(err)
	}
	for _, r := range api.Runs {
		switch r.RunID {
		case "dag":
			want := map[string]int{"total": 4, "pending": 2, "running": 1, "done": 1, "failed": 0}
			if !reflect.DeepEqual(r.Jobs, want) || r.Verd == nil || r.Verd.Verdict != "unverified" || !reflect.DeepEqual(r.Verd.Unverified, []string{"it works"}) {
				t.Errorf("/api/runs: dag has jobs %v, verdict %+v", r.Jobs, r.Verd)
			}
		case "lost":
			if r.Jobs["pending"] != 1 || r.Verd != nil {
				t.Errorf("/api/runs: lost has jobs %v, verdict %+v", r.Jobs, r.Verd)
			}
		default:
			if r.Jobs != nil || r.Verd != nil {
				t.Errorf("/api/runs: single run %s has jobs %v, verdict %+v", r.RunID, r.Jobs, r.Verd)
			}
		}
	}
	// Interrupted first (lost's lease expired, evil has no driver, old-stopped was
	// stopped), each part newest first.
	if want := []string{"lost", "evil", "old-stopped", "dag"}; !reflect.DeepEqual(order, want) {
		t.Errorf("runs in order %v, want %v", order, want)
	}
	if !strings.Contains(b, `class="badge interrupted"`) {
		t.Error("the stopped run is not marked interrupted")
	}
	b = body(t, get(s, "GET", "/?status=running", "127.0.0.1", nil))
	if strings.Contains(b, `data-run="old-stopped"`) || !strings.Contains(b, `data-run="dag"`) {
		t.Errorf("?status=running lists:\n%s", b)
	}
	b = body(t, get(s, "GET", "/?status=interrupted", "127.0.0.1", nil))
	if !strings.Contains(b, `data-run="old-stopped"`) || !strings.Contains(b, `data-run="evil"`) || strings.Contains(b, `data-run="dag"`) {
		t.Errorf("?status=interrupted lists:\n%s", b)
	}
}

// TestRunPage: a graph run's DAG as SVG with each job's state and its expansion
// grouped; a single run's stages, snapshot files and diff; the state at an event.
func TestRunPage(t *testing.T) {
	t.Parallel()
	repo := fixture(t)
	s := server(t, repo, "")
	b := body(t, get(s, "GET", "/runs/dag", "127.0.0.1", nil))
	for _, want := range []string{`<svg class="dag"`, `data-job="a" data-state="DONE"`, `data-job="a1" data-state="PENDING"`,
		`data-job="b" data-state="RUNNING"`, `data-job="a2" data-state="PENDING"`, `children of a`, `class="edge"`, `<dt>driver</dt><dd>drv, lease expires`} {
		if !strings.Contains(b, want) {
			t.Errorf("the DAG page lacks %q", want)
		}
	}
	b = body(t, get(s, "GET", "/runs/evil", "127.0.0.1", nil))
	for _, want := range []string{`class="stage status-dispatched"`, `class="stage status-pending"`, `hello.txt`,
		`<span class="add">&#43;hello from the snapshot</span>`, `Next action`, `type=note`} {
		if !strings.Contains(b, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	b = body(t, get(s, "GET", "/runs/evil?at=1", "127.0.0.1", nil))
	if !strings.Contains(b, "As it was right after event 1") || !strings.Contains(b, `class="stage status-pending"`) || strings.Contains(b, `status-dispatched`) {
		t.Errorf("the state at event 1:\n%s", b)
	}
	if r := get(s, "GET", "/runs/nope", "127.0.0.1", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("a missing run: status %d", r.StatusCode)
	}
}

// TestEventsOnRefChange: /events sends an event when a ledger write changes a ref
// under refs/atlas/.
func TestEventsOnRefChange(t *testing.T) {
	t.Parallel()
	repo := testenv.Repo(t)
	atlas(t, repo, "start", "--id", "one", "--stages", "a")
	r, err := git.Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(web.New(ops.New(r), "", 5*time.Millisecond))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	rd := bufio.NewReader(resp.Body)
	// The stream says it listens once the watcher has its first look.
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ": listening") {
			break
		}
	}
	atlas(t, repo, "start", "--id", "two", "--stages", "a")
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("no event after a ledger write: %v", err)
		}
		if line == "event: refs\n" {
			break
		}
	}
}
