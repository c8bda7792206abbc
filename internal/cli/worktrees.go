package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/worktrees"
)

// WorktreeCmd is `git atlas worktree`.
type WorktreeCmd struct {
	Add    WorktreeAddCmd    `cmd:"" help:"Give a node its managed worktree (locked, on its own branch); prints the path."`
	List   WorktreeListCmd   `cmd:"" help:"List managed worktrees: branch, HEAD, commits ahead, clean, dirty or missing."`
	Remove WorktreeRemoveCmd `cmd:"" help:"Remove a managed worktree, snapshotting it first when anything could be lost."`
}

// WorktreeAddCmd is `git atlas worktree add RUN NODE`.
type WorktreeAddCmd struct {
	RunID    string `arg:"" name:"run" help:"The run."`
	Node     string `arg:"" help:"The node: a stage or job name (\"union\" is reserved)."`
	Baseline string `help:"The commit the node starts from (default: the run's baseline)." placeholder:"REV"`
	Lease    string `help:"Your lease token on the node's job (graph runs): required while the job is RUNNING; a stale one is refused (exit 3). With it, the write is the worker's: it never touches the driver lease." placeholder:"TOKEN"`
	DriverFlags
}

// worktreeView is a managed worktree in JSON (SPEC §4.7).
type worktreeView struct {
	RunID     string `json:"run_id"`
	Node      string `json:"node"`
	Stage     string `json:"stage,omitempty"`
	Path      string `json:"path"`
	Branch    string `json:"branch"`
	Baseline  string `json:"baseline"`
	Head      string `json:"head"`
	Created   bool   `json:"created"`
	Recreated bool   `json:"recreated"`
	// Reattached: the node's worktree had been removed; the new one is on its kept
	// branch, at its tip.
	Reattached bool `json:"reattached"`
}

// Run adds (or finds, or recreates) the worktree.
func (c *WorktreeAddCmd) Run(env *Env) error {
	store, err := c.addStore(env)
	if err != nil {
		return err
	}
	res, err := worktrees.Add(env.Ctx, store, c.RunID, c.Node, worktrees.AddOptions{Baseline: c.Baseline, Lease: c.Lease,
		// A checkout a killed process left half-made may hold an agent's work:
		// snapshotted (always) and removed before it is made again.
		Preserve: func(ctx context.Context, run, node, reason string) error {
			_, err := resume.PreserveWorktree(ctx, store, run, node, "worktree add: "+reason, true)
			return err
		}})
	if err != nil {
		return err
	}
	rec := res.Rec
	if res.Recreated && !env.JSON {
		fmt.Fprintf(env.Stderr, "recreated %s: its directory was gone\n", rec.Path)
	}
	if res.Reattached && !env.JSON {
		fmt.Fprintf(env.Stderr, "reattached %s to its branch %s, whose commits it keeps\n", rec.Path, rec.Branch)
	}
	view := worktreeView{RunID: c.RunID, Node: rec.Node, Stage: rec.Stage, Path: rec.Path, Branch: rec.Branch,
		Baseline: rec.Baseline, Head: rec.Head, Created: res.Created, Recreated: res.Recreated, Reattached: res.Reattached}
	return env.out(view, func(w io.Writer) { fmt.Fprintln(w, rec.Path) })
}

// addStore is the ledger as this add writes it: with a job lease, the worker's (it
// never touches the driver lease); else the driver's.
func (c *WorktreeAddCmd) addStore(env *Env) (*gitstate.Store, error) {
	if c.Lease != "" && !c.TakeOver {
		return WorkerFlags{Holder: c.Holder}.store(env)
	}
	return c.DriverFlags.store(env)
}

// WorktreeListCmd is `git atlas worktree list [RUN]`.
type WorktreeListCmd struct {
	RunID string `arg:"" optional:"" name:"run" help:"Only this run's worktrees (default: every run's)."`
}

// worktreeItem is one row of `worktree list --json` (SPEC §4.7).
type worktreeItem struct {
	RunID    string `json:"run_id"`
	Node     string `json:"node"`
	Stage    string `json:"stage,omitempty"`
	Path     string `json:"path"`
	Branch   string `json:"branch"`
	Head     string `json:"head"`
	Baseline string `json:"baseline"`
	Ahead    int    `json:"ahead"`
	Dirty    bool   `json:"dirty"`
	Missing  bool   `json:"missing"`
	Locked   bool   `json:"locked"`
	OnBranch bool   `json:"on_branch"`
	// Untrusted: the post-checkout hook saw its HEAD leave its branch (resume
	// snapshots and recreates it).
	Untrusted bool `json:"untrusted"`
	// Making: "in_progress" while a git-atlas process checks it out, "half_made" when
	// the process that began it died (the next resume or add snapshots it first).
	Making string `json:"making,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Run lists the worktrees, checking them in parallel; a worktree that cannot be
// checked is listed with its error, and the command then fails, after the others.
func (c *WorktreeListCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	runs, err := loadRuns(env, store, c.RunID)
	if err != nil {
		return err
	}
	var recs []gitstate.WorktreeRec
	var owners []string
	for _, r := range runs {
		for _, w := range r.State.Worktrees {
			recs, owners = append(recs, w), append(owners, r.Header.RunID)
		}
	}
	repo, err := env.Repo()
	if err != nil {
		return err
	}
	infos, errs, inspectErr := worktrees.InspectAll(env.Ctx, repo, recs)
	if infos == nil {
		return inspectErr
	}
	items := make([]worktreeItem, 0, len(recs))
	for i, rec := range recs {
		in := infos[i]
		it := worktreeItem{RunID: owners[i], Node: rec.Node, Stage: rec.Stage, Path: rec.Path, Branch: rec.Branch,
			Head: in.Head, Baseline: rec.Baseline, Ahead: in.Ahead, Dirty: in.Dirty, Missing: in.Missing,
			Locked: in.Locked, OnBranch: in.OnBranch(rec), Untrusted: rec.Untrusted}
		if it.Head == "" {
			it.Head = rec.Head // missing: what the ledger last recorded
		}
		if errs[i] != nil {
			it.Error = errs[i].Error()
		}
		switch inProgress, halfMade, _ := worktrees.Making(rec.Path); {
		case inProgress:
			it.Making = "in_progress"
		case halfMade:
			it.Making = "half_made"
		}
		items = append(items, it)
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].RunID < items[b].RunID })
	err = env.out(map[string]any{"worktrees": items}, func(w io.Writer) {
		if len(items) == 0 {
			fmt.Fprintln(w, "no worktrees")
			return
		}
		t := newTable(w, "RUN", "NODE", "STATE", "AHEAD", "HEAD", "BRANCH", "PATH")
		for _, it := range items {
			t.row(it.RunID, it.Node, worktreeState(it), fmt.Sprint(it.Ahead), dash(short(it.Head)), it.Branch, it.Path)
		}
		t.flush()
	})
	if err != nil {
		return err
	}
	return inspectErr
}

func worktreeState(it worktreeItem) string {
	var s []string
	switch {
	case it.Error != "":
		s = append(s, "error")
	case it.Missing:
		s = append(s, "missing")
	case it.Dirty:
		s = append(s, "dirty")
	default:
		s = append(s, "clean")
	}
	if !it.Missing && it.Error == "" && !it.OnBranch {
		s = append(s, "off-branch")
	}
	if it.Locked {
		s = append(s, "locked")
	}
	if it.Making != "" {
		s = append(s, strings.ReplaceAll(it.Making, "_", "-"))
	}
	return strings.Join(s, ",")
}

// UnionCmd is `git atlas union RUN`.
type UnionCmd struct {
	RunID string   `arg:"" name:"run" help:"The run."`
	Nodes []string `help:"Integrate these nodes, in this order (repeatable, or comma-separated; default: the run's done nodes, in dependency order)." placeholder:"a,b"`
	Force bool     `help:"Move the union branch even if someone committed on it (its old tip stays in the branch's reflog)."`
	// Verify runs the run's --verify in the union worktree and records the result.
	Verify        bool          `help:"Run the run's verify command in the union worktree and record the result (exit 6 if it fails)."`
	VerifyTimeout time.Duration `name:"verify-timeout" default:"10m" help:"Time limit of --verify." placeholder:"DUR"`
	DriverFlags
}

// unionView is the JSON of `union`.
type unionView struct {
	RunID      string              `json:"run_id"`
	Head       string              `json:"head"`
	Baseline   string              `json:"baseline"`
	Branch     string              `json:"branch"`
	Path       string              `json:"path"`
	Integrated []string            `json:"integrated"`
	Conflicted map[string][]string `json:"conflicted"`
	Missing    []string            `json:"missing"`
	Changed    bool                `json:"changed"`
	At         string              `json:"at"`
	// Verify is the run's verify on this union, when --verify ran it.
	Verify *gitstate.VerifyResult `json:"verify,omitempty"`
	// Verdict is a graph run's verdict on its criteria (none without criteria).
	Verdict *gitstate.Verdict `json:"verdict,omitempty"`
}

// Run builds the union and reports what integrated and what conflicted, where.
func (c *UnionCmd) Run(env *Env) error {
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	var r *gitstate.Run
	if c.Verify {
		// Refuse before building: a run without a verify command has nothing to run.
		if r, err = store.Load(env.Ctx, c.RunID); err != nil {
			return err
		}
		if r.Header.Verify == "" {
			return fault.Usage("run %s has no verify command: `union --verify` runs the one given to `start --verify`", c.RunID)
		}
	}
	res, err := worktrees.BuildUnion(env.Ctx, store, c.RunID, worktrees.UnionOptions{Nodes: c.Nodes, Force: c.Force, Progress: env.progress()})
	if err != nil {
		return err
	}
	var vr *gitstate.VerifyResult
	if c.Verify {
		if vr, err = resume.NodeVerify(env.Ctx, store.Repo, r, r.Header.Verify, res.Rec.Path, c.VerifyTimeout); err != nil {
			return err
		}
		if err := worktrees.RecordUnionVerify(env.Ctx, store, c.RunID, res.Union.Head, vr); err != nil {
			return err
		}
	}
	v := unionView{RunID: c.RunID, Head: res.Union.Head, Baseline: res.Rec.Baseline, Branch: res.Rec.Branch, Path: res.Rec.Path,
		Integrated: res.Union.Integrated, Conflicted: res.Union.Conflicted, Missing: res.Missing, Changed: res.Changed, At: res.Union.At}
	if v.Conflicted == nil {
		v.Conflicted = map[string][]string{}
	}
	v.Verify = vr
	if r, err = store.Load(env.Ctx, c.RunID); err != nil {
		return err
	}
	v.Verdict = gitstate.RunVerdict(&r.Header, &r.State)
	if err := env.out(v, func(w io.Writer) {
		state := "built"
		if !res.Changed {
			state = "up to date"
		}
		fmt.Fprintf(w, "union of run %s %s at %s on %s\n", c.RunID, state, short(v.Head), v.Branch)
		fmt.Fprintf(w, "  integrated  %s\n", dash(strings.Join(v.Integrated, ", ")))
		nodes := make([]string, 0, len(v.Conflicted))
		for n := range v.Conflicted {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		for _, n := range nodes {
			fmt.Fprintf(w, "  conflicted  %s: %s\n", n, dash(strings.Join(v.Conflicted[n], ", ")))
		}
		if len(v.Missing) > 0 {
			fmt.Fprintf(w, "  no branch   %s\n", strings.Join(v.Missing, ", "))
		}
		fmt.Fprintf(w, "worktree %s\n", v.Path)
		if vr != nil {
			fmt.Fprintf(w, "verify %s: %s\n", vr.Command, resume.Outcome(vr, c.VerifyTimeout))
		}
		printVerdict(w, v.Verdict)
	}); err != nil {
		return err
	}
	if vr != nil && !vr.Passed {
		return &fault.Error{Kind: fault.ErrVerifyFailed, Msg: "verify of the union of run " + c.RunID + " " + resume.Outcome(vr, c.VerifyTimeout)}
	}
	return nil
}
