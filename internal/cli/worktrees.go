package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/ops"
)

// WorktreeCmd is `git atlas worktree`.
type WorktreeCmd struct {
	Add    WorktreeAddCmd    `cmd:"" help:"Give a node its managed worktree (locked, on its own branch); prints the path."`
	List   WorktreeListCmd   `cmd:"" help:"List managed worktrees: branch, HEAD, commits ahead, clean, dirty or missing."`
	Remove WorktreeRemoveCmd `cmd:"" help:"Remove a managed worktree, snapshotting it first when anything could be lost."`
	Setup  WorktreeSetupCmd  `cmd:"" help:"Run the run's setup command again in a node's worktree (after it failed)."`
}

// WorktreeAddCmd is `git atlas worktree add RUN NODE`.
type WorktreeAddCmd struct {
	RunID    string `arg:"" name:"run" help:"${worktree_add_run}"`
	Node     string `arg:"" help:"${worktree_add_node}"`
	Baseline string `help:"${worktree_add_baseline}" placeholder:"REV"`
	Lease    string `help:"${worktree_add_lease}" placeholder:"TOKEN"`
	DriverFlags
}

// Run adds (or finds, or recreates) the worktree.
func (c *WorktreeAddCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, err := o.WorktreeAdd(env.Ctx, ops.WorktreeAddRequest{Run: c.RunID, Node: c.Node, Baseline: c.Baseline, Lease: c.Lease,
		Driver: c.ops()})
	if res == nil {
		return err
	}
	if err != nil {
		// Made, but its setup did not succeed: not a place to work yet. JSON says what
		// happened; the text prints the setup's output, not the path.
		if env.JSON {
			if outErr := env.out(res, nil); outErr != nil {
				return outErr
			}
		} else if s := res.Setup; s != nil && s.Tail != "" {
			fmt.Fprintln(env.Stderr, terminalSafe(s.Tail))
		}
		return err
	}
	if res.Recreated && !env.JSON {
		fmt.Fprintf(env.Stderr, "recreated %s: its directory was gone\n", res.Path)
	}
	if res.Reattached && !env.JSON {
		fmt.Fprintf(env.Stderr, "reattached %s to its branch %s, whose commits it keeps\n", res.Path, res.Branch)
	}
	return env.out(res, func(w io.Writer) { fmt.Fprintln(w, res.Path) })
}

// WorktreeListCmd is `git atlas worktree list [RUN]`.
type WorktreeListCmd struct {
	RunID string `arg:"" optional:"" name:"run" help:"${worktree_list_run}"`
}

// Run lists the worktrees, checking them in parallel; a worktree that cannot be
// checked is listed with its error, and the command then fails, after the others.
func (c *WorktreeListCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	res, listErr := o.WorktreeList(env.Ctx, ops.WorktreeListRequest{Run: c.RunID, ForAgent: env.forAgent()})
	if res == nil {
		return listErr
	}
	for _, e := range res.Unreadable {
		env.warn("%v", e)
	}
	if err := env.out(res, func(w io.Writer) {
		if len(res.Worktrees) == 0 {
			fmt.Fprintln(w, "no worktrees")
			return
		}
		t := newTable(w, "RUN", "NODE", "STATE", "AHEAD", "HEAD", "BRANCH", "PATH")
		for _, it := range res.Worktrees {
			t.row(it.RunID, it.Node, worktreeState(it), fmt.Sprint(it.Ahead), dash(short(it.Head)), it.Branch, it.Path)
		}
		t.flush()
	}); err != nil {
		return err
	}
	return listErr
}

func worktreeState(it ops.WorktreeItem) string {
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
	if it.State == ops.WorktreeNotReady {
		s = append(s, "not-ready")
	}
	return strings.Join(s, ",")
}

// UnionCmd is `git atlas union RUN`.
type UnionCmd struct {
	RunID string   `arg:"" name:"run" help:"${union_run}"`
	Nodes []string `help:"${union_nodes}" placeholder:"a,b"`
	Force bool     `help:"${union_force}"`
	// Verify runs the run's --verify in the union worktree and records the result.
	Verify        bool          `help:"${union_verify}"`
	VerifyTimeout time.Duration `name:"verify-timeout" help:"${union_verify_timeout}" placeholder:"DUR"`
	// docs/contract.md §5.3: integrating changes outside a job's scope is a person's step.
	AllowOutsideScope []string `name:"allow-outside-scope" help:"Integrate this job although its branch changed paths outside its scope: a person's step (a terminal, or --approved-by), recorded (repeatable)." placeholder:"JOB"`
	ApprovedBy        string   `name:"approved-by" help:"Without a terminal, the person approving --allow-outside-scope (recorded in the event)." placeholder:"NAME"`
	DriverFlags
}

// Run builds the union and reports what integrated and what conflicted, where.
func (c *UnionCmd) Run(env *Env) error {
	o, err := env.Ops()
	if err != nil {
		return err
	}
	v, unionErr := o.Union(env.Ctx, ops.UnionRequest{Run: c.RunID, Nodes: c.Nodes, Force: c.Force, Verify: c.Verify,
		VerifyTimeout: c.VerifyTimeout, Driver: c.ops(), AllowOutsideScope: c.AllowOutsideScope, Person: env.person(c.ApprovedBy), ForAgent: env.forAgent()})
	if v == nil {
		return unionErr
	}
	if err := env.out(v, func(w io.Writer) {
		state := "built"
		if !v.Changed {
			state = "up to date"
		}
		if v.Kept != nil {
			fmt.Fprintf(w, "kept %s, the commit the union branch held, under %s\n", short(v.Kept.Commit), v.Kept.Ref)
		}
		fmt.Fprintf(w, "union of run %s %s at %s on %s\n", c.RunID, state, short(v.Head), v.Branch)
		fmt.Fprintf(w, "  integrated  %s\n", dash(strings.Join(v.Integrated, ", ")))
		for _, n := range slices.Sorted(maps.Keys(v.Conflicted)) {
			fmt.Fprintf(w, "  conflicted  %s: %s\n", n, dash(strings.Join(v.Conflicted[n], ", ")))
		}
		if len(v.Missing) > 0 {
			fmt.Fprintf(w, "  no branch   %s\n", strings.Join(v.Missing, ", "))
		}
		printOutsideScope(w, "outside scope, left out", v.OutsideScope)
		printOutsideScope(w, "outside scope, allowed ", v.AllowedOutsideScope)
		fmt.Fprintf(w, "worktree %s\n", v.Path)
		if v.Verify != nil {
			fmt.Fprintf(w, "verify %s: %s\n", v.Verify.Command, ops.VerifyOutcome(v.Verify, c.VerifyTimeout))
		}
		printVerdict(w, v.Verdict)
	}); err != nil {
		return err
	}
	return unionErr
}
