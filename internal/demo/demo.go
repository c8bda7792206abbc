// Package demo is `git atlas demo`, a front end of its own: it plays an interrupted
// graph run and its resume in a throwaway repository and prints them as a terminal
// session. The commands it shows run through the command line it is given
// (Options.Atlas); what it reads back for itself (the recovery snapshots) comes from
// the operations (package ops). Making the throwaway repository, an agent's commits
// and the worker it kills are git and process work, which only internal/git does.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ops"
)

// Options are how the demo plays.
type Options struct {
	// Dir is the directory to make the throwaway repository in ("": a new temporary
	// one, removed at the end unless Keep).
	Dir string
	// Keep keeps the throwaway repository and prints its path.
	Keep bool
	// Out receives the session.
	Out io.Writer
	// Atlas runs one git-atlas command line in-process (args without the program
	// name) and returns its exit code: the commands the session shows.
	Atlas func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// exitConflict is the exit code of a stale lease or receipt (docs/contract.md §4.6).
const exitConflict = 3

// demo runs git-atlas commands in-process against the throwaway repository and
// prints them like a terminal session.
type demo struct {
	w     io.Writer
	repo  string
	exe   string
	ctx   context.Context
	atlas func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// Play plays the demo.
func Play(ctx context.Context, opts Options) error {
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "git-atlas-demo-")
		if err != nil {
			return err
		}
		dir = tmp
		if !opts.Keep {
			defer func() { _ = os.RemoveAll(tmp) }()
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	d := &demo{w: opts.Out, repo: filepath.Join(dir, "repo"), exe: exe, ctx: ctx, atlas: opts.Atlas}
	if err := d.play(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if opts.Keep {
		fmt.Fprintf(opts.Out, "\nThe demo repository is kept at %s\n", d.repo)
	} else {
		fmt.Fprintf(opts.Out, "\nThe throwaway repository is deleted now; `git atlas demo --keep` keeps it to look around.\n")
	}
	return nil
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.w, "\n# "+format+"\n", args...)
}

// run runs one git-atlas command in-process, prints it and its output, and returns
// stdout and the exit code.
func (d *demo) run(args ...string) (string, int) {
	fmt.Fprintf(d.w, "$ git atlas %s\n", strings.Join(quoteArgs(args), " "))
	var out, errb bytes.Buffer
	code := d.atlas(append([]string{"-C", d.repo}, args...), strings.NewReader(""), &out, &errb)
	for _, s := range []string{out.String(), errb.String()} {
		for line := range strings.SplitSeq(strings.TrimRight(s, "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(d.w, "  %s\n", line)
			}
		}
	}
	if code != 0 {
		fmt.Fprintf(d.w, "  (exit %d)\n", code)
	}
	return out.String(), code
}

func (d *demo) must(args ...string) string {
	out, code := d.run(args...)
	if code != 0 {
		panic(demoFailure(fmt.Sprintf("git atlas %s: exit %d", strings.Join(args, " "), code)))
	}
	return out
}

// quiet runs a command without printing it (the demo reads its JSON).
func (d *demo) quiet(args ...string) string {
	var out, errb bytes.Buffer
	if code := d.atlas(append([]string{"-C", d.repo}, args...), strings.NewReader(""), &out, &errb); code != 0 {
		panic(demoFailure(fmt.Sprintf("git atlas %s: exit %d: %s", strings.Join(args, " "), code, errb.String())))
	}
	return out.String()
}

type demoFailure string

func quoteArgs(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " *'\"{}#") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return q
}

// commitAll is an agent's own commit of everything in its worktree (or, at the
// start, the throwaway repository's first commit).
func (d *demo) commitAll(dir, msg string) error {
	repo, err := git.Open(d.ctx, d.repo)
	if err != nil {
		return err
	}
	return repo.Worktree(dir).CommitAll(d.ctx, msg, demoIdentity)
}

var demoIdentity = []string{"GIT_AUTHOR_NAME=demo agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=demo agent", "GIT_COMMITTER_EMAIL=agent@example.com"}

// commitFile is an agent's work: write one file in its worktree and commit it.
func (d *demo) commitFile(worktree, name, content, msg string) error {
	if err := write(filepath.Join(worktree, name), content); err != nil {
		return err
	}
	return d.commitAll(worktree, msg)
}

func write(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func (d *demo) play() (err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(demoFailure)
			if !ok {
				panic(p)
			}
			err = fault.New(fault.ErrRefused, "%s", string(f))
		}
	}()
	if err := git.InitRepository(d.ctx, d.repo, demoIdentity); err != nil {
		return err
	}
	for name, content := range map[string]string{
		"api/server.go": "package api\n", "ui/app.js": "// ui\n", "docs/guide.md": "# Guide\n",
	} {
		if err := write(filepath.Join(d.repo, name), content); err != nil {
			return err
		}
	}
	if err := d.commitAll(d.repo, "initial"); err != nil {
		return err
	}

	d.say("A graph run with three nodes, each with its own scope.")
	d.must("start", "--id", "demo", "--graph", "--intent", "add a health endpoint, its UI and its docs", "--holder", "orchestrator", "--session", "demo-1")
	d.must("job", "add", "demo", "api", "--scope", "api/**", "--holder", "orchestrator", "--session", "demo-1")
	d.must("job", "add", "demo", "ui", "--scope", "ui/**", "--holder", "orchestrator", "--session", "demo-1")
	d.must("job", "add", "demo", "docs", "--scope", "docs/**", "--needs", "api", "--holder", "orchestrator", "--session", "demo-1")

	d.say("worker-1 takes api, works in its own worktree, commits and reports ok.")
	apiLease := d.claim("api", "worker-1")
	apiPath := strings.TrimSpace(d.must("worktree", "add", "demo", "api", "--lease", apiLease))
	if err := d.commitFile(apiPath, "api/health.go", "package api\n\nfunc Health() string { return \"ok\" }\n", "api: health endpoint"); err != nil {
		return err
	}
	d.must("job", "done", "demo", "api", "--lease", apiLease, "--status", "ok")

	d.say("worker-2 takes ui in a separate process, writes half its work... and is killed (SIGKILL).")
	uiLease, uiPath, err := d.killedWorker("ui", "worker-2")
	if err != nil {
		return err
	}

	d.say("worker-3 takes docs (its dependency api is done) and finishes.")
	docsLease := d.claim("docs", "worker-3")
	docsPath := strings.TrimSpace(d.must("worktree", "add", "demo", "docs", "--lease", docsLease))
	if err := d.commitFile(docsPath, "docs/health.md", "# Health\n\nGET /health answers ok.\n", "docs: health"); err != nil {
		return err
	}
	d.must("job", "done", "demo", "docs", "--lease", docsLease, "--status", "ok")

	d.say("The orchestrator's session is compacted. Its driver lease still lives, and nobody else\n# may write to the run; the same session id takes it back at once. At its next start:")
	d.must("resume", "--brief", "--session", "demo-1")
	d.must("resume", "--plan", "--session", "demo-1")

	d.say("Resume: ui goes back to PENDING (no attempt, no gas refund), the epoch goes up,\n# worker-2's dirty worktree is snapshotted, then recreated clean.")
	d.must("resume", "demo", "--session", "demo-1")
	d.must("recovery", "list", "demo")
	o, err := ops.Open(d.ctx, d.repo)
	if err != nil {
		return err
	}
	defer o.Close()
	list, err := o.RecoveryList(d.ctx, ops.RecoveryListRequest{Run: "demo"})
	if err != nil {
		return err
	}
	if len(list.Snapshots) == 0 {
		return fmt.Errorf("no recovery snapshot after resume")
	}
	if _, err := os.Stat(filepath.Join(uiPath, "ui/health.js")); err == nil {
		return fmt.Errorf("the recreated ui worktree still holds the dead worker's file")
	}
	fmt.Fprintf(d.w, "  (ui worktree %s is clean again)\n", uiPath)

	d.say("The dead worker's late receipt carries the old epoch: the fence rejects it (exit 3).")
	if _, code := d.run("job", "done", "demo", "ui", "--lease", uiLease, "--status", "ok"); code != exitConflict {
		return fmt.Errorf("stale receipt: exit %d, want %d", code, exitConflict)
	}

	d.say("Nothing worker-2 wrote is lost: the snapshot holds it.")
	d.must("recovery", "show", list.Snapshots[0].ID)

	d.say("worker-4 takes ui again, under the new epoch, and finishes.")
	uiLease2 := d.claim("ui", "worker-4")
	if err := d.commitFile(uiPath, "ui/health.js", "export const health = () => fetch('/health');\n", "ui: health"); err != nil {
		return err
	}
	d.must("job", "done", "demo", "ui", "--lease", uiLease2, "--status", "ok")

	d.say("The union integrates the three nodes on atlas/demo/union; your branch is untouched.")
	d.must("union", "demo", "--holder", "orchestrator", "--session", "demo-1")
	d.must("worktree", "list", "demo")
	d.must("finish", "demo", "--status", "completed", "--holder", "orchestrator", "--session", "demo-1")
	return nil
}

// claim takes a job for holder and returns its lease token.
func (d *demo) claim(job, holder string) string {
	fmt.Fprintf(d.w, "$ git atlas job claim demo --job %s --holder %s\n", job, holder)
	out := d.quiet("job", "claim", "demo", "--job", job, "--holder", holder, "--json")
	var c struct {
		Lease string `json:"lease"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.Lease == "" {
		panic(demoFailure("claim " + job + ": no lease in " + out))
	}
	fmt.Fprintf(d.w, "  %s: lease %s\n", job, c.Lease)
	return c.Lease
}

// killedWorker runs a real worker process that claims job, makes its worktree, writes
// part of its work and then waits; the demo kills it with SIGKILL once the work is on
// disk (it says so on stdout: no sleeps).
func (d *demo) killedWorker(job, holder string) (lease, path string, err error) {
	script := `set -e
lease=$("$ATLAS" -C "$REPO" job claim demo --job "$JOB" --holder "$HOLDER" --json | grep -m1 '"lease"' | cut -d'"' -f4)
echo "$lease"
wt=$("$ATLAS" -C "$REPO" worktree add demo "$JOB" --lease "$lease")
echo "$wt"
mkdir -p "$wt/ui"
printf 'export const health = () => fetch(\x27/heal' > "$wt/ui/health.js"
echo '// half-edited' >> "$wt/ui/app.js"
echo ready
exec sleep 600
`
	var stderr bytes.Buffer
	sh := git.Shell{Script: script, Stderr: &stderr,
		Env: []string{"ATLAS=" + d.exe, "REPO=" + d.repo, "JOB=" + job, "HOLDER=" + holder}}
	fmt.Fprintf(d.w, "$ (worker-2) git atlas job claim demo --job %s --holder %s; git atlas worktree add demo %s --lease <token>; edit...\n", job, holder, job)
	worker, err := sh.Start(d.ctx)
	if err != nil {
		return "", "", err
	}
	sc := bufio.NewScanner(worker.Stdout)
	var lines []string
	for sc.Scan() {
		if sc.Text() == "ready" {
			break
		}
		lines = append(lines, sc.Text())
	}
	worker.Kill() // SIGKILL to its whole process group
	if len(lines) < 2 {
		return "", "", fmt.Errorf("worker did not start: %s", stderr.String())
	}
	fmt.Fprintf(d.w, "  lease %s, worktree %s\n  (worker-2 killed with SIGKILL mid-job)\n", lines[0], lines[1])
	return lines[0], lines[1], nil
}
