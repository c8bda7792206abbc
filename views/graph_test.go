package views

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ledger"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// dag8 is a fixed 8-node graph run: every job state, ready and waiting jobs, a holder
// with characters that are syntax in dot and Mermaid, names with '.' and '-', a union
// with one conflicted node, and an outer stage.
func dag8() *ledger.Run {
	job := func(id, state string, attempts int, needs ...string) ledger.Job {
		if needs == nil {
			needs = []string{}
		}
		return ledger.Job{ID: id, State: state, Attempts: attempts, Needs: needs}
	}
	jobs := []ledger.Job{
		job("api.v2", ledger.JobDone, 1),
		job("ui-shell", ledger.JobDone, 2),
		job("db_schema", ledger.JobDone, 1),
		job("auth", ledger.JobRunning, 0, "api.v2", "db_schema"),
		job("ui-login", ledger.JobPending, 0, "ui-shell"),
		job("reports", ledger.JobFailed, 2, "db_schema"),
		job("e2e.tests", ledger.JobPending, 0, "auth", "ui-login"),
		job("release-notes", ledger.JobPending, 0, "e2e.tests", "reports"),
	}
	jobs[3].Holder, jobs[3].Lease, jobs[3].ExpiresAt = `worker "7" <a&b>`, "auth#0@1", "2026-01-01T00:10:00Z"
	jobs[5].Reason = "attempts"
	return &ledger.Run{
		Header: ledger.Header{RunID: "demo.run-1", Kind: ledger.KindGraph, Baseline: testenv.HexOID(strings.Repeat("a", 40)),
			Stages: []ledger.StageDef{{Name: "integrate", Gate: "human", MaxRetries: 1}}},
		State: ledger.State{RunID: "demo.run-1", Status: ledger.RunRunning, Seq: 21, Epoch: 1, GasSpent: 7, Jobs: jobs,
			Stages: []ledger.StageState{{Name: "integrate", Status: ledger.StagePending}},
			Union: &ledger.UnionRec{Head: testenv.HexOID(strings.Repeat("b", 40)), Integrated: []string{"api.v2", "db_schema"},
				Conflicted: map[string][]string{"ui-shell": {"ui/app.go"}}}},
	}
}

func single() *ledger.Run {
	return &ledger.Run{
		Header: ledger.Header{RunID: "fix-42", Kind: ledger.KindSingle, Stages: []ledger.StageDef{
			{Name: "plan", MaxRetries: 2}, {Name: "skip.me", MaxRetries: 2}, {Name: "code", MaxRetries: 2, Verify: "go test"},
			{Name: "check", Gate: "human", MaxRetries: 1}}},
		State: ledger.State{RunID: "fix-42", Status: ledger.RunRunning, Seq: 9, Stages: []ledger.StageState{
			{Name: "plan", Status: ledger.StageCompleted, Attempts: []ledger.Attempt{{N: 1}}},
			{Name: "skip.me", Status: ledger.StageSkipped},
			{Name: "code", Status: ledger.StageDispatched, Attempts: []ledger.Attempt{{N: 1}, {N: 2}}},
			{Name: "check", Status: ledger.StagePending}}},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func render(t *testing.T, r *ledger.Run, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	g := Build(r)
	switch format {
	case "txt":
		err = Text(&b, g, TextOptions{Width: 80})
	case "dot":
		err = Dot(&b, g)
	case "mmd":
		err = Mermaid(&b, g)
	case "json":
		err = json.NewEncoder(&b).Encode(g)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		run  *ledger.Run
	}{{"dag8", dag8()}, {"single", single()}} {
		for _, f := range []string{"txt", "dot", "mmd"} {
			t.Run(c.name+"."+f, func(t *testing.T) {
				t.Parallel()
				out := render(t, c.run, f)
				golden(t, c.name+"."+f, out)
				switch f {
				case "dot":
					checkDot(t, out)
				case "mmd":
					checkMermaid(t, out)
				case "txt":
					checkText(t, out, 80)
				}
			})
		}
	}
}

func TestJSONShape(t *testing.T) {
	t.Parallel()
	var g map[string]any
	if err := json.Unmarshal(render(t, dag8(), "json"), &g); err != nil {
		t.Fatal(err)
	}
	nodes := g["nodes"].([]any)
	auth := nodes[3].(map[string]any)
	if len(nodes) != 8 || auth["id"] != "auth" || auth["state"] != "RUNNING" || auth["holder"] != `worker "7" <a&b>` || auth["level"] != float64(1) {
		t.Fatalf("nodes: %v", nodes)
	}
	if len(g["edges"].([]any)) != 8 || g["gas_spent"] != float64(7) || g["ready"].([]any)[0] != "ui-login" {
		t.Fatalf("graph: %v", g)
	}
}

// TestTextFits30Nodes: 30 jobs with names at the length limit, long holders and many
// needs still fit in 80 columns, and a coloured drawing says the same once the colour
// is taken out.
func TestTextFits30Nodes(t *testing.T) {
	t.Parallel()
	r := dag8()
	r.State.Jobs = nil
	for i := range 30 {
		id := fmt.Sprintf("node-%02d.", i) + strings.Repeat("x", 55)
		j := ledger.Job{ID: id, State: ledger.JobPending, Needs: []string{}}
		for k := 0; k < i; k += 3 {
			j.Needs = append(j.Needs, r.State.Jobs[k].ID)
		}
		if i%4 == 1 {
			j.State, j.Holder = ledger.JobRunning, strings.Repeat("holder-é", 10)
		}
		r.State.Jobs = append(r.State.Jobs, j)
	}
	plain := render(t, r, "txt")
	checkText(t, plain, 80)
	if n := bytes.Count(plain, []byte("\n")); n < 30 {
		t.Fatalf("%d lines for 30 nodes:\n%s", n, plain)
	}
	var coloured bytes.Buffer
	if err := Text(&coloured, Build(r), TextOptions{Width: 80, Colour: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(coloured.Bytes(), []byte("\x1b[")) {
		t.Fatal("no colour asked for and given")
	}
	if stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAll(coloured.Bytes(), nil); !bytes.Equal(stripped, plain) {
		t.Fatalf("the coloured drawing says something else:\n%s\n---\n%s", stripped, plain)
	}
}

func checkText(t *testing.T, out []byte, width int) {
	t.Helper()
	if bytes.Contains(out, []byte("\x1b")) {
		t.Errorf("colour without asking:\n%s", out)
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(string(out), "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

// checkDot parses out with Graphviz when it is installed, and always with parseDot.
func checkDot(t *testing.T, out []byte) {
	t.Helper()
	if path, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(path, "-Tcanon")
		cmd.Stdin = bytes.NewReader(out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("dot rejects the output: %v\n%s", err, msg)
		}
	}
	if err := parseDot(string(out)); err != nil {
		t.Errorf("dot output does not parse: %v\n%s", err, out)
	}
}

// parseDot is a parser for the subset of the DOT language Dot writes: `digraph ID {`
// statements `}`, where a statement is `ID=ID;`, `node [attrs];`, `ID [attrs];` or
// `ID -> ID [attrs];`, and an ID is a bare word or a double-quoted string. Every
// edge's ends must be declared nodes.
func parseDot(src string) error {
	toks, err := dotTokens(src)
	if err != nil {
		return err
	}
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	expect := func(want string) error {
		if got := next(); got != want {
			return fmt.Errorf("token %d: got %q, want %q", i, got, want)
		}
		return nil
	}
	isID := func(s string) bool {
		return strings.HasPrefix(s, `"`) || regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(s)
	}
	attrs := func() error {
		for {
			k := next()
			if k == "]" {
				return nil
			}
			if !isID(k) {
				return fmt.Errorf("attribute name %q", k)
			}
			if err := expect("="); err != nil {
				return err
			}
			if v := next(); !isID(v) {
				return fmt.Errorf("attribute value %q", v)
			}
			if toks[i] == "," {
				i++
			}
		}
	}
	if err := expect("digraph"); err != nil {
		return err
	}
	if !isID(next()) {
		return fmt.Errorf("graph id")
	}
	if err := expect("{"); err != nil {
		return err
	}
	nodes := map[string]bool{}
	var edges [][2]string
	for {
		a := next()
		if a == "}" {
			break
		}
		if !isID(a) {
			return fmt.Errorf("statement starts with %q", a)
		}
		switch t := next(); t {
		case "=":
			if !isID(next()) {
				return fmt.Errorf("value of %s", a)
			}
			if err := expect(";"); err != nil {
				return err
			}
			continue
		case "->":
			b := next()
			if !isID(b) {
				return fmt.Errorf("edge end %q", b)
			}
			edges = append(edges, [2]string{a, b})
			t = next()
			if t == "[" {
				if err := attrs(); err != nil {
					return err
				}
				t = next()
			}
			if t != ";" {
				return fmt.Errorf("edge %s -> %s ends with %q", a, b, t)
			}
		case "[":
			if err := attrs(); err != nil {
				return err
			}
			if err := expect(";"); err != nil {
				return err
			}
			if a != "node" {
				if nodes[a] {
					return fmt.Errorf("node %s declared twice", a)
				}
				nodes[a] = true
			}
		default:
			return fmt.Errorf("after %s: %q", a, t)
		}
	}
	if i != len(toks) {
		return fmt.Errorf("text after the graph")
	}
	for _, e := range edges {
		if !nodes[e[0]] || !nodes[e[1]] {
			return fmt.Errorf("edge %s -> %s to an undeclared node", e[0], e[1])
		}
	}
	return nil
}

func dotTokens(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
				if j < len(src) && src[j] == '\n' {
					return nil, fmt.Errorf("raw newline in a string")
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string")
			}
			toks = append(toks, src[i:j+1])
			i = j + 1
		case strings.HasPrefix(src[i:], "->"):
			toks = append(toks, "->")
			i += 2
		case strings.ContainsRune("{}[]=;,", rune(c)):
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q", c)
			}
			toks = append(toks, src[i:j])
			i = j
		}
	}
	return toks, nil
}

// checkMermaid: every line is one of the statement shapes Mermaid writes, node ids are
// generated, labels hold no raw quote, and every edge joins declared nodes.
func checkMermaid(t *testing.T, out []byte) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if lines[0] != "flowchart LR" {
		t.Fatalf("first line %q", lines[0])
	}
	label := `"(?:[^"\n<>]|<br/>)*"`
	node := regexp.MustCompile(`^  ([js][0-9]+)\[` + label + `\]$|^  (union)\{\{` + label + `\}\}$`)
	edge := regexp.MustCompile(`^  ([js][0-9]+) (?:-->|-\.->|-\. conflict \.->) ([js][0-9]+|union)$`)
	other := regexp.MustCompile(`^  (?:%%.*|classDef \w+ [^;]+|class [js0-9,]+ \w+)$`)
	declared := map[string]bool{}
	for _, l := range lines[1:] {
		switch {
		case node.MatchString(l):
			m := node.FindStringSubmatch(l)
			declared[m[1]+m[2]] = true
		case edge.MatchString(l):
			m := edge.FindStringSubmatch(l)
			if !declared[m[1]] || !declared[m[2]] {
				t.Errorf("edge before its nodes: %q", l)
			}
		case other.MatchString(l):
		default:
			t.Errorf("not a Mermaid statement this writer makes: %q", l)
		}
	}
}
