// Command rounds times commands in interleaved rounds, for the bench scripts: every
// round runs each command once, in turn, so that the load of a shared machine falls on
// all of them alike, and medians are reported with each command's ratio against the
// first one (its floor), the median CPU time it took (user and system, its processes
// and every process they waited for) with its ratio against the floor's, the peak
// resident memory of its largest process and the processes it starts.
//
//	rounds [-n ROUNDS] [-warm N] [-dir DIR] [-procs SCRIPT] NAME=COMMAND...
//
// A COMMAND is words split on blanks ('single quotes' keep blanks), run directly, with
// no shell in between (a shell's fork would weigh on a 2 ms command); `a | b` is a
// pipeline whose stages are connected directly too; a last word `<FILE` is the
// command's standard input. Commands run in DIR (default: here), with
// stdin from /dev/null and their output discarded; a command that fails stops the
// benchmark (its stderr is shown). -pre NAME=COMMAND runs COMMAND (not timed) before
// each timed run of NAME: a cache deleted, a hook installed.
//
// -procs names bench/procs.sh: each command is then run once more before the rounds
// (after its -pre), every stage under that script, and the processes it starts,
// counted as `strace -f` counts execve, are printed beside its times ("-" without the
// script or strace). The count does not depend on the machine; the times do. Where the
// machine's cores are busy (a test suite on 2 cores), the CPU time is what a command
// takes from the others: a Go program's runtime threads spend CPU beside its wall time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type command struct {
	name   string
	stdin  string
	stages [][]string
	pre    [][]string
	wall   []time.Duration
	cpu    []time.Duration // user and system time of every stage, waited-for children included
	rss    int64           // KiB, the largest of any stage in any round
	procs  string          // processes started, or "-"
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	n := flag.Int("n", 31, "timed rounds")
	warm := flag.Int("warm", 3, "untimed rounds first")
	dir := flag.String("dir", "", "directory the commands run in")
	procs := flag.String("procs", "", "bench/procs.sh, to count the processes of each command")
	var pres multi
	flag.Var(&pres, "pre", "NAME=COMMAND run untimed before each run of NAME")
	flag.Parse()
	var cmds []*command
	for _, arg := range flag.Args() {
		name, line, ok := strings.Cut(arg, "=")
		if !ok {
			fatal("argument %q is not NAME=COMMAND", arg)
		}
		c := &command{name: name, stages: parse(line)}
		last := c.stages[len(c.stages)-1]
		if w := last[len(last)-1]; strings.HasPrefix(w, "<") {
			c.stdin, c.stages[len(c.stages)-1] = w[1:], last[:len(last)-1]
		}
		cmds = append(cmds, c)
	}
	if len(cmds) == 0 {
		fatal("usage: rounds [-n N] NAME=COMMAND...")
	}
	for _, p := range pres {
		name, line, _ := strings.Cut(p, "=")
		found := false
		for _, c := range cmds {
			if c.name == name {
				c.pre, found = parse(line), true
			}
		}
		if !found {
			fatal("-pre %s names no command", name)
		}
	}
	for _, c := range cmds {
		c.procs = "-"
		if *procs == "" {
			continue
		}
		if c.pre != nil {
			if _, err := run(*dir, c.pre, ""); err != nil {
				fatal("%s (pre): %v", c.name, err)
			}
		}
		n, err := count(*dir, *procs, c)
		if err != nil {
			fatal("%s: %v", c.name, err)
		}
		c.procs = n
	}
	for r := -*warm; r < *n; r++ {
		for _, c := range cmds {
			if c.pre != nil {
				if _, err := run(*dir, c.pre, ""); err != nil {
					fatal("%s (pre): %v", c.name, err)
				}
			}
			u, err := run(*dir, c.stages, c.stdin)
			if err != nil {
				fatal("%s: %v", c.name, err)
			}
			if r >= 0 {
				c.wall = append(c.wall, u.wall)
				c.cpu = append(c.cpu, u.cpu)
				c.rss = max(c.rss, u.rss)
			}
		}
	}
	floor, floorCPU := median(cmds[0].wall), median(cmds[0].cpu)
	fmt.Printf("%-28s %10s %8s %10s %8s %12s %6s\n", "", "median", "ratio", "CPU", "ratio", "peak RSS", "procs")
	for _, c := range cmds {
		m, cpu := median(c.wall), median(c.cpu)
		fmt.Printf("%-28s %7.2f ms %7.2fx %7.2f ms %7s %8.1f MiB %6s\n", c.name, ms(m), float64(m)/float64(floor),
			ms(cpu), ratio(cpu, floorCPU), float64(c.rss)/1024, c.procs)
	}
}

// count runs c once with every stage under script (bench/procs.sh) and returns the
// processes its stages started, summed, or "-" when the script could not count them.
func count(dir, script string, c *command) (string, error) {
	tmp, err := os.MkdirTemp("", "rounds-procs")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	stages := make([][]string, len(c.stages))
	for i, s := range c.stages {
		stages[i] = append([]string{"bash", script, filepath.Join(tmp, strconv.Itoa(i))}, s...)
	}
	if _, err := run(dir, stages, c.stdin); err != nil {
		return "", err
	}
	total := 0
	for i := range stages {
		b, err := os.ReadFile(filepath.Join(tmp, strconv.Itoa(i)))
		if err != nil {
			return "", err
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return "-", nil
		}
		total += n
	}
	return strconv.Itoa(total), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a/b as the table prints it, or "-" when b is zero (a clock too coarse to
// see the floor's CPU).
func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	return s[len(s)/2]
}

// parse splits a command line into pipeline stages and words.
func parse(line string) [][]string {
	var stages [][]string
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ' || r == '\t':
			flush()
		case r == '|':
			flush()
			stages = append(stages, words)
			words = nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	stages = append(stages, words)
	for _, s := range stages {
		if len(s) == 0 {
			fatal("empty command in %q", line)
		}
	}
	return stages
}

// usage is what one run of a pipeline took.
type usage struct {
	wall time.Duration
	cpu  time.Duration // user and system time of its stages and what each waited for
	rss  int64         // KiB, its largest process's peak
}

// run runs one pipeline and returns what it took.
func run(dir string, stages [][]string, stdin string) (usage, error) {
	cmds := make([]*exec.Cmd, len(stages))
	stderr := make([]bytes.Buffer, len(stages)) // one each: stages write at once
	for i, s := range stages {
		c := exec.Command(s[0], s[1:]...)
		c.Dir = dir
		c.Stderr = &stderr[i]
		cmds[i] = c
	}
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			return usage{}, err
		}
		defer f.Close()
		cmds[0].Stdin = f
	}
	for i := 0; i+1 < len(cmds); i++ {
		r, w, err := os.Pipe()
		if err != nil {
			return usage{}, err
		}
		cmds[i].Stdout, cmds[i+1].Stdin = w, r
		defer r.Close()
		defer w.Close()
	}
	start := time.Now()
	for i, c := range cmds {
		if err := c.Start(); err != nil {
			return usage{}, err
		}
		// The parent's copies of the pipe ends go once the children have them.
		if i+1 < len(cmds) {
			cmds[i].Stdout.(*os.File).Close()
		}
		if i > 0 {
			cmds[i].Stdin.(*os.File).Close()
		}
	}
	var u usage
	var failed error
	for i, c := range cmds {
		if err := c.Wait(); err != nil && failed == nil {
			failed = fmt.Errorf("%s: %w: %s", strings.Join(c.Args, " "), err, stderr[i].String())
		}
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u.rss = max(u.rss, ru.Maxrss)
		}
		u.cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	}
	u.wall = time.Since(start)
	return u, failed
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "rounds: "+format+"\n", args...)
	os.Exit(1)
}
