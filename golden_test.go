package gitatlas_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// updateGolden rewrites the goldens of TestGolden from what the commands print now:
//
//	go test . -run TestGolden -update
//
// then read the diff (git diff testdata/golden): every changed line is a change of the
// JSON contract (docs/contract.md §4.7), which must only ever add fields.
var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.json from the commands' output")

// TestGolden pins the --json output of every command, byte for byte, on one fixed
// fixture (testdata/golden/commands.txtar: the same dirty repository as the transcripts,
// author, committer and dates pinned). It is the safety net of refactors that move code
// between packages: the JSON contract must come out the same for the same inputs.
// Its git-atlas is the test binary, built with the race detector when the tests are:
// the one pass of every command under it (TestScript's transcripts run the plain build).
//
// `golden NAME` compares the last command's stdout with testdata/golden/NAME.json;
// `golden -stderr NAME` its stderr (the JSON error of a refusal). Only what cannot be
// the same from one run to the next is rewritten before the comparison, and nothing
// else (see normaliseGolden):
//
//   - the transcript's work directory (a new temporary directory each time) -> $WORK;
//   - the ids of commits dated by the clock (ledger commits, snapshot commits: their
//     committer date is not before the transcript started; a commit with the pinned
//     date keeps its id) -> <REF@N>: the N-th commit, oldest first, of the first ref
//     by name that reaches it (refs/ left off: <atlas/runs/r1@3>);
//   - timestamps written from the clock (RFC 3339 with a Z) -> <time>, except the
//     pinned commit date 2026-01-01T00:00:00Z, which is kept;
//   - the random nonce of a lease token (<job>#<attempt>@<epoch>.<nonce>) -> <nonce>;
//   - the host name recorded with a pid -> <host>;
//   - a run's age in seconds ("age_seconds", wall clock minus its last write) -> 0;
//   - gc's "unreachable_bytes" (compressed objects dated by the clock vary in size) -> 0.
func TestGolden(t *testing.T) {
	t.Parallel() // its own work directory and environment, like every transcript
	p := scriptParams(t, "testdata/golden", "")
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		// A commit dated at or after this moment was dated by a clock, not pinned.
		env.Values[goldenKey{}] = &goldenState{names: map[string]string{}, since: time.Now().Unix() - 1}
		return nil
	}
	p.Cmds["golden"] = cmdGolden
	testscript.Run(t, p)
}

type goldenKey struct{}

// goldenState remembers every ledger commit the transcript has seen, so that a run's
// commits keep their names after gc deletes its ref.
type goldenState struct {
	names map[string]string // commit id -> <ref@n>
	since int64             // the transcript's start, in seconds
	tips  map[string]string // ref -> the tip learnClockCommits last walked from
}

var (
	goldenTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	goldenNonce = regexp.MustCompile(`(#\d+@\d+)\.[0-9a-f]{8}\b`)
	goldenHost  = regexp.MustCompile(`("host": )"[^"]*"`)
	goldenAge   = regexp.MustCompile(`("age_seconds": |"unreachable_bytes": )\d+`)
	goldenHex   = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	// A keyed MAC (of a session, of text this clone wrote) is under a random local key.
	goldenMAC = regexp.MustCompile(`hmac-sha256:[0-9a-f]{64}`)
)

const goldenPinnedDate = "2026-01-01T00:00:00Z"

func cmdGolden(ts *testscript.TestScript, neg bool, args []string) {
	src := "stdout"
	if len(args) > 0 && args[0] == "-stderr" {
		src, args = "stderr", args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: golden [-stderr] NAME")
	}
	st := ts.Value(goldenKey{}).(*goldenState)
	st.learnClockCommits(ts)
	out := ts.ReadFile(src)
	got := normaliseGolden(out, ts.Getenv("WORK"), st.names)
	file := filepath.Join("testdata", "golden", args[0]+".json")
	if *updateGolden {
		ts.Check(os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		ts.Fatalf("golden %s: %v (run go test . -run TestGolden -update)", args[0], err)
	}
	if src == "stdout" {
		runNextCommands(ts, out, args[0])
	}
	if got != string(want) {
		ts.Fatalf("golden %s: the %s differs from %s (go test . -run TestGolden -update rewrites it; read the diff):\n%s",
			args[0], src, file, lineDiff(string(want), got))
	}
}

// runNextCommands runs every command a next action of doc prints (next_action.command,
// and the pointer's driving.next_action.command), exactly as printed, through sh -c,
// and fails unless git-atlas accepts it (docs/contract.md §11.13: a printed command runs as
// printed for the one who asked). A template is run with a name put in for <holder>.
// Each runs on a copy of the repository as it is now (cp -a, the ledger and the
// managed worktrees with it), so the transcript's later goldens are not changed by it.
func runNextCommands(ts *testscript.TestScript, doc, name string) {
	var v struct {
		NextAction *nextCommand `json:"next_action"`
		Driving    *struct {
			NextAction *nextCommand `json:"next_action"`
		} `json:"driving"`
	}
	if json.Unmarshal([]byte(doc), &v) != nil {
		return
	}
	var lines []string
	for _, n := range []*nextCommand{v.NextAction, driving(v.Driving)} {
		switch {
		case n == nil:
		case n.Command != "":
			lines = append(lines, n.Command)
		case n.Template != "" && strings.Count(n.Template, "<") == 1:
			lines = append(lines, strings.ReplaceAll(n.Template, "<holder>", "golden-asker"))
		}
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, "git atlas ") {
			ts.Fatalf("golden %s: next action command %q is not a git-atlas command", name, line)
		}
		copyDir := filepath.Join(ts.Getenv("WORK"), fmt.Sprintf("next-%s-%d", name, i))
		repo := ts.MkAbs(".")
		script := "cp -a " + shQuote(repo) + " " + shQuote(copyDir) + " && cd " + shQuote(copyDir) + " && " + line
		if err := ts.Exec("sh", "-c", script); err != nil {
			ts.Fatalf("golden %s: next action command %q, run as printed, was refused: %v\n%s", name, line, err, ts.ReadFile("stderr"))
		}
		_ = os.RemoveAll(copyDir)
	}
}

// nextCommand is the part of a next action runNextCommands runs.
type nextCommand struct {
	Command  string `json:"command"`
	Template string `json:"template"`
}

func driving(d *struct {
	NextAction *nextCommand `json:"next_action"`
}) *nextCommand {
	if d == nil {
		return nil
	}
	return d.NextAction
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// learnClockCommits names every commit dated by the clock that a ref reaches now (names
// learnt earlier are kept: gc may have deleted the ref since). A ref whose tip has not
// moved since the last call is not walked again: it reaches the same commits, all of
// them named then, so the names come out as if every ref were walked every time.
func (st *goldenState) learnClockCommits(ts *testscript.TestScript) {
	git := func(args ...string) string {
		out, err := gitCmd(ts.MkAbs("."), append(os.Environ(), "HOME="+ts.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1"), "", args...)
		if err != nil {
			ts.Fatalf("golden: %v", err)
		}
		return string(out)
	}
	tips := map[string]string{}
	var refs []string
	for line := range strings.SplitSeq(strings.TrimSpace(git("for-each-ref", "--format=%(refname) %(objectname)")), "\n") {
		if ref, tip, ok := strings.Cut(line, " "); ok {
			tips[ref] = tip
			refs = append(refs, ref)
		}
	}
	sort.Strings(refs)
	if st.tips == nil {
		st.tips = map[string]string{}
	}
	for _, ref := range refs {
		if st.tips[ref] == tips[ref] {
			continue
		}
		st.tips[ref] = tips[ref]
		lines := strings.Split(strings.TrimSpace(git("rev-list", "--reverse", "--timestamp", ref)), "\n")
		for i, line := range lines {
			stamp, id, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			if _, named := st.names[id]; named {
				continue
			}
			if sec, err := strconv.ParseInt(stamp, 10, 64); err == nil && sec >= st.since {
				st.names[id] = fmt.Sprintf("<%s@%d>", strings.TrimPrefix(ref, "refs/"), i+1)
			}
		}
	}
}

func normaliseGolden(s, work string, ledger map[string]string) string {
	if work != "" {
		if real, err := filepath.EvalSymlinks(work); err == nil && real != work {
			s = strings.ReplaceAll(s, real, "$WORK")
		}
		s = strings.ReplaceAll(s, work, "$WORK")
	}
	s = goldenHex.ReplaceAllStringFunc(s, func(id string) string {
		if name, ok := ledger[id]; ok {
			return name
		}
		return id
	})
	s = goldenTime.ReplaceAllStringFunc(s, func(ts string) string {
		if ts == goldenPinnedDate {
			return ts
		}
		return "<time>"
	})
	s = goldenMAC.ReplaceAllString(s, "hmac-sha256:<mac>")
	s = goldenNonce.ReplaceAllString(s, "$1.<nonce>")
	s = goldenHost.ReplaceAllString(s, `$1"<host>"`)
	return goldenAge.ReplaceAllString(s, `${1}0`)
}

// lineDiff lists the lines of want and got that differ, with their line numbers.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}
