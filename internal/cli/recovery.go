package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/recovery"
)

// SnapshotFlags tune the snapshots a command takes.
type SnapshotFlags struct {
	IncludeIgnored bool   `name:"include-ignored" help:"Copy ignored files into the snapshot, up to --ignored-cap in total (they are always listed)."`
	IgnoredCap     string `name:"ignored-cap" default:"100MiB" help:"Size cap of the ignored files --include-ignored copies (e.g. 500KiB, 100MiB, 1GiB)." placeholder:"SIZE"`
}

func (f SnapshotFlags) options(reason, patchOut string) (recovery.Options, error) {
	n, err := parseSize(f.IgnoredCap)
	if err != nil {
		return recovery.Options{}, err
	}
	return recovery.Options{Reason: reason, IncludeIgnored: f.IncludeIgnored, IgnoredCap: n, PatchOut: patchOut}, nil
}

// parseSize reads 123, 10K, 10KiB, 5M, 5MB, 1G (binary multiples).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 {
		return 0, fault.Usage("invalid size %q: use a positive number of bytes, optionally with K, M or G", s)
	}
	return n * mult, nil
}

// snapshotView is a snapshot in JSON (SPEC §4.7 names id, run_id, node, stage, ref,
// patch, created_at).
type snapshotView struct {
	ID         string `json:"id"`
	RunID      string `json:"run_id"`
	Node       string `json:"node"`
	Stage      string `json:"stage"`
	Ref        string `json:"ref"`
	Commit     string `json:"commit"`
	Patch      string `json:"patch"`
	Source     string `json:"source,omitempty"`
	Reason     string `json:"reason,omitempty"`
	CreatedAt  string `json:"created_at"`
	Reused     bool   `json:"reused,omitempty"`
	Unrecorded bool   `json:"unrecorded,omitempty"`
}

func viewOf(run string, s gitstate.SnapshotRec) snapshotView {
	return snapshotView{ID: s.ID, RunID: run, Node: s.Node, Stage: s.Stage, Ref: s.Ref, Commit: s.Commit, Patch: s.Patch,
		Source: s.Source, Reason: s.Reason, CreatedAt: s.CreatedAt}
}

func resultView(run string, r *recovery.Result) *snapshotView {
	if r == nil {
		return nil
	}
	v := viewOf(run, r.Rec)
	v.Reused = r.Reused
	return &v
}

// WorktreeRemoveCmd is `git atlas worktree remove RUN NODE`.
type WorktreeRemoveCmd struct {
	RunID string `arg:"" name:"run" help:"The run."`
	Node  string `arg:"" help:"The node whose worktree to remove."`
	SnapshotFlags
	DriverFlags
}

// Run preserves, then removes.
func (c *WorktreeRemoveCmd) Run(env *Env) error {
	opt, err := c.options("worktree remove", "")
	opt.Progress = env.progress()
	if err != nil {
		return err
	}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	res, err := recovery.PreserveAndRemove(env.Ctx, store, c.RunID, c.Node, opt)
	if err != nil {
		if res != nil && res.Snapshot != nil {
			env.warn("snapshot %s was taken and kept", res.Snapshot.Rec.ID)
		}
		return err
	}
	reasons := res.Risk.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	v := map[string]any{"run_id": c.RunID, "node": c.Node, "path": res.Path, "removed": true, "reasons": reasons,
		"snapshot": resultView(c.RunID, res.Snapshot)}
	return env.out(v, func(w io.Writer) {
		if res.Snapshot != nil {
			fmt.Fprintf(w, "snapshot %s (%s)\n  ref   %s\n  patch %s\n", res.Snapshot.Rec.ID, strings.Join(reasons, ", "), res.Snapshot.Rec.Ref, res.Snapshot.Rec.Patch)
		}
		fmt.Fprintf(w, "removed %s\n", res.Path)
	})
}

// RecoverCmd is `git atlas recover RUN --stage S`.
type RecoverCmd struct {
	RunID    string `arg:"" name:"run" help:"The run."`
	Stage    string `required:"" help:"The stage to preserve and replay." placeholder:"STAGE"`
	Node     string `help:"The worktree's node (default: the stage's name; without one, the stage ran in your checkout)." placeholder:"NODE"`
	Worktree bool   `help:"Make a managed worktree on the replay branch."`
	Apply    bool   `help:"Put the snapshot into the replay worktree (implies --worktree)."`
	PatchOut string `name:"patch-out" type:"path" help:"Write the patch here (outside every working tree) instead of <git-common-dir>/atlas/recovery/<run>/<snapshot>.patch." placeholder:"FILE"`
	SnapshotFlags
	DriverFlags
}

// Run preserves and replays.
func (c *RecoverCmd) Run(env *Env) error {
	opt, err := c.options("recover", c.PatchOut)
	opt.Progress = env.progress()
	if err != nil {
		return err
	}
	store, err := c.DriverFlags.store(env)
	if err != nil {
		return err
	}
	// The user's checkout, wherever recover runs from: a managed worktree is not it.
	checkout, err := recovery.UserCheckout(env.Ctx, store, store.Repo.TopLevel)
	if err != nil {
		return err
	}
	res, err := recovery.Recover(env.Ctx, store, c.RunID, recovery.RecoverRequest{Stage: c.Stage, Node: c.Node,
		CheckoutPath: checkout, Worktree: c.Worktree, Apply: c.Apply, Options: opt})
	if err != nil {
		return err
	}
	replay := map[string]any{"branch": res.Replay.Branch, "baseline": res.Replay.Baseline, "worktree": nullable(res.Replay.Worktree), "node": nullable(res.Node)}
	v := map[string]any{"run_id": c.RunID, "stage": c.Stage, "source": nullable(res.Source), "snapshot": resultView(c.RunID, res.Snapshot),
		"replay": replay, "applied": res.Applied}
	if res.Source == recovery.SourceCheckout {
		v["checkout"] = checkout
	}
	return env.out(v, func(w io.Writer) {
		if res.Snapshot != nil {
			what := "worktree of " + res.Snapshot.Manifest.Node
			if res.Source == recovery.SourceCheckout {
				what = "your checkout " + checkout + " (unchanged)"
			}
			fmt.Fprintf(w, "snapshot %s of %s\n  ref   %s\n  patch %s\n", res.Snapshot.Rec.ID, what, res.Snapshot.Rec.Ref, res.Snapshot.Rec.Patch)
		} else {
			fmt.Fprintf(w, "no snapshot: the stage's worktree is gone\n")
		}
		fmt.Fprintf(w, "replay branch %s at %s\n", res.Replay.Branch, short(res.Replay.Baseline))
		if res.Replay.Worktree != "" {
			applied := ""
			if res.Applied {
				applied = " (snapshot applied)"
			}
			fmt.Fprintf(w, "worktree %s%s\n", res.Replay.Worktree, applied)
		}
	})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// RecoveryGroup is `git atlas recovery ...`.
type RecoveryGroup struct {
	List    RecoveryListCmd    `cmd:"" help:"List recovery snapshots."`
	Show    RecoveryShowCmd    `cmd:"" help:"Show what a snapshot holds."`
	Restore RecoveryRestoreCmd `cmd:"" help:"Restore a snapshot into a new directory or worktree."`
}

// RecoveryListCmd is `git atlas recovery list [RUN]`.
type RecoveryListCmd struct {
	RunID string `arg:"" optional:"" name:"run" help:"Only this run's snapshots."`
}

// Run lists snapshots.
func (c *RecoveryListCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	list, err := recovery.List(env.Ctx, store, c.RunID)
	if err != nil {
		return err
	}
	views := make([]snapshotView, 0, len(list))
	for _, e := range list {
		v := viewOf(e.RunID, e.SnapshotRec)
		v.Unrecorded = e.Unrecorded
		views = append(views, v)
	}
	now := gitstate.Now()
	return env.out(map[string]any{"snapshots": views}, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "no snapshots")
			return
		}
		t := newTable(w, "SNAPSHOT", "RUN", "NODE", "STAGE", "SOURCE", "TAKEN", "REASON")
		for _, v := range views {
			t.row(v.ID, v.RunID, dash(v.Node), dash(v.Stage), dash(v.Source), dash(ageOrEmpty(v.CreatedAt, now)), dash(v.Reason))
		}
		t.flush()
	})
}

// RecoveryShowCmd is `git atlas recovery show SNAPSHOT`.
type RecoveryShowCmd struct {
	Snapshot string `arg:"" help:"The snapshot: <id> or <run>/<id>."`
}

type changeView struct {
	Status string `json:"status"`
	recovery.Name
}

func changes(list []git.NameStatus) []changeView {
	out := make([]changeView, 0, len(list))
	for _, c := range list {
		out = append(out, changeView{Status: c.Status, Name: recovery.NameOf(c.Path)})
	}
	return out
}

// Run shows a snapshot.
func (c *RecoveryShowCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	d, err := recovery.Show(env.Ctx, store, c.Snapshot)
	if err != nil {
		return err
	}
	m := d.Snap.Manifest
	v := struct {
		snapshotView
		Head            string                  `json:"head"`
		Branch          string                  `json:"branch,omitempty"`
		Baseline        string                  `json:"baseline"`
		Tree            string                  `json:"tree"`
		IndexTree       string                  `json:"index_tree"`
		Staged          []changeView            `json:"staged"`
		Unstaged        []changeView            `json:"unstaged"`
		Changes         []changeView            `json:"changes"`
		Unmerged        []recovery.Name         `json:"unmerged"`
		Ignored         []recovery.IgnoredEntry `json:"ignored"`
		AssumeUnchanged []recovery.Name         `json:"assume_unchanged,omitempty"`
		Pending         map[string]string       `json:"pending,omitempty"`
		Embedded        []recovery.Name         `json:"embedded,omitempty"`
	}{
		snapshotView: viewOf(d.RunID, d.SnapshotRec), Head: m.Head, Branch: m.Branch, Baseline: m.Baseline,
		Tree: m.Tree, IndexTree: m.IndexTree, Staged: changes(d.Staged), Unstaged: changes(d.Unstaged), Changes: changes(d.Baseline),
		Unmerged: nonNil(m.Unmerged), Ignored: m.Ignored, AssumeUnchanged: m.AssumeUnchanged, Pending: m.Pending, Embedded: m.Embedded,
	}
	if v.Ignored == nil {
		v.Ignored = []recovery.IgnoredEntry{}
	}
	v.snapshotView.Unrecorded = d.Unrecorded
	return env.out(v, func(w io.Writer) {
		fmt.Fprintf(w, "snapshot  %s/%s\n", d.RunID, d.ID)
		fmt.Fprintf(w, "ref       %s (%s)\n", d.Ref, short(d.Commit))
		if m.Source == recovery.SourceCheckout {
			fmt.Fprintf(w, "source    the user's checkout (read-only)\n")
		} else {
			fmt.Fprintf(w, "source    worktree of node %s\n", m.Node)
		}
		fmt.Fprintf(w, "head      %s %s\n", dash(short(m.Head)), strings.TrimPrefix(m.Branch, "refs/heads/"))
		fmt.Fprintf(w, "baseline  %s\n", short(m.Baseline))
		if d.Patch != "" {
			fmt.Fprintf(w, "patch     %s\n", d.Patch)
		}
		section := func(title string, list []changeView) {
			if len(list) == 0 {
				return
			}
			fmt.Fprintf(w, "\n%s:\n", title)
			for _, c := range list {
				fmt.Fprintf(w, "  %s %s\n", c.Status, displayPath(c.String()))
			}
		}
		section("staged", v.Staged)
		section("unstaged and untracked", v.Unstaged)
		if len(m.Unmerged) > 0 {
			fmt.Fprintf(w, "\nunmerged:\n")
			for _, n := range m.Unmerged {
				fmt.Fprintf(w, "  %s\n", displayPath(n.String()))
			}
		}
		if len(m.Ignored) > 0 {
			fmt.Fprintf(w, "\nignored:\n")
			for _, e := range m.Ignored {
				fmt.Fprintf(w, "  %s  %d file(s), %d bytes, %d kept\n", displayPath(e.String()), e.Files, e.Size, e.Included)
			}
		}
	})
}

// displayPath quotes a path the way git does when it holds control characters or
// bytes that are not UTF-8, so one path stays on one line.
func displayPath(p string) string {
	if q := strconv.Quote(p); q != `"`+p+`"` {
		return q
	}
	return p
}

func nonNil(n []recovery.Name) []recovery.Name {
	if n == nil {
		return []recovery.Name{}
	}
	return n
}

// RecoveryRestoreCmd is `git atlas recovery restore SNAPSHOT --to PATH`.
type RecoveryRestoreCmd struct {
	Snapshot string `arg:"" help:"The snapshot: <id> or <run>/<id>."`
	To       string `required:"" type:"path" help:"A new (or empty) directory to restore into." placeholder:"PATH"`
	Worktree bool   `help:"Make PATH a git worktree (detached at the snapshot's HEAD) with the staged/unstaged split restored too."`
}

// Run restores a snapshot.
func (c *RecoveryRestoreCmd) Run(env *Env) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	e, err := recovery.Find(env.Ctx, store, c.Snapshot)
	if err != nil {
		return err
	}
	s, err := recovery.Restore(env.Ctx, store.Repo, e.Commit, c.To, c.Worktree)
	if err != nil {
		return err
	}
	return env.out(map[string]any{"snapshot": e.ID, "run_id": e.RunID, "path": c.To, "worktree": c.Worktree, "head": nullable(s.Manifest.Head)},
		func(w io.Writer) {
			what := "files"
			if c.Worktree {
				what = "worktree (index and files)"
			}
			fmt.Fprintf(w, "restored %s/%s into %s: %s, checked against the snapshot\n", e.RunID, e.ID, c.To, what)
		})
}
