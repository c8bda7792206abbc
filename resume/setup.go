package resume

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
	"github.com/git-atlas/git-atlas/worktrees"
)

// DefaultSetupTimeout bounds a run's setup command when its start gave no
// --setup-timeout.
const DefaultSetupTimeout = 10 * time.Minute

// MaxSetupTimeout bounds every setup: the header's setup_timeout is the ledger's,
// which a pulled run may have changed under a command trusted here.
const MaxSetupTimeout = 2 * time.Hour

// NodeEnv is the environment a command run in the worktree at dir gets
// (docs/contract.md §15): ATLAS_RUN, ATLAS_NODE, ATLAS_WORKTREE, and ATLAS_PORT (the
// first) and ATLAS_PORTS (space-separated) when the node has ports. A directory that
// is no worktree of r gets ATLAS_RUN alone.
func NodeEnv(r *ledger.Run, dir string) []string {
	env := []string{"ATLAS_RUN=" + r.Header.RunID}
	for _, w := range r.State.Worktrees {
		if w.Path != dir {
			continue
		}
		env = append(env, "ATLAS_NODE="+w.Node, "ATLAS_WORKTREE="+w.Path)
		if len(w.Ports) > 0 {
			ports := make([]string, len(w.Ports))
			for i, p := range w.Ports {
				ports[i] = strconv.Itoa(p)
			}
			env = append(env, "ATLAS_PORT="+ports[0], "ATLAS_PORTS="+strings.Join(ports, " "))
		}
		break
	}
	return env
}

// SetupTimeout is the run's setup time limit.
func SetupTimeout(h *ledger.Header) time.Duration {
	if d, err := time.ParseDuration(h.SetupTimeout); err == nil && d > 0 {
		return min(d, MaxSetupTimeout)
	}
	return DefaultSetupTimeout
}

// Setup runs the run's setup command in the managed worktree of node and records
// its outcome on the worktree (`worktree_setup`, docs/contract.md §15): ok, failed,
// timed-out, or skipped-untrusted for a command that came with the run from
// elsewhere and was not trusted here (then nothing runs). A run without a setup
// command records nothing and returns nil. It runs only in a worktree git-atlas
// manages: nothing ever falls back to the user's checkout. The steps its errors name
// are the asker's: store's holder, with lease, their token on the node's job ("":
// none).
func Setup(ctx context.Context, store *gitstate.Store, run, node, lease string) (*ledger.SetupRec, error) {
	r, err := store.Load(ctx, run)
	if err != nil {
		return nil, err
	}
	command := r.Header.Setup
	if command == "" {
		return nil, nil
	}
	rec := r.State.Worktree(node)
	if rec == nil {
		return nil, fault.NotFound("run %s has no worktree for node %s", run, node).
			WithHint("make it with `%s`", AddStep(run, node, store.Writer.Holder, lease))
	}
	m, err := worktrees.Own(ctx, store.Repo, run, *rec)
	if err != nil {
		return nil, err
	}
	if m.Missing() {
		return nil, fault.NotFound("worktree %s of node %s is gone: setup runs only in it", rec.Path, node).
			WithHint("make it again with `%s`", AddStep(run, node, store.Writer.Holder, lease))
	}
	set, err := trust.Load(ctx, store.Repo, run)
	if err != nil {
		return nil, err
	}
	out := &ledger.SetupRec{Command: command, Outcome: ledger.SetupUntrusted, ExitCode: -1, At: ledger.Stamp(store.Now())}
	if approved, ok := set.Approve(command); ok {
		vr := runCommand(ctx, approved, m.Path, NodeEnv(r, m.Path), SetupTimeout(&r.Header), store.Now())
		out.ExitCode, out.Tail, out.At = vr.ExitCode, vr.Tail, vr.At
		switch {
		case vr.TimedOut:
			out.Outcome = ledger.SetupTimedOut
		case vr.Passed:
			out.Outcome = ledger.SetupOK
		default:
			out.Outcome = ledger.SetupFailed
		}
	}
	_, err = store.Update(ctx, run, func(r *ledger.Run) (*gitstate.Change, error) {
		w := r.State.Worktree(node)
		if w == nil || w.Path != rec.Path {
			return nil, fault.Conflict("the worktree of node %s of run %s was removed or changed while its setup ran", node, run).
				WithHint("run `%s` again", SetupStep(run, node, store.Writer.Holder, lease))
		}
		w.Setup = out
		about := ledger.About{Stage: w.Stage}
		if w.Stage == "" && r.State.Job(node) != nil {
			about.Job = node
		}
		data := ledger.WorktreeSetupData{Node: node, Command: out.Command, Outcome: out.Outcome, ExitCode: out.ExitCode, Tail: out.Tail}
		return &gitstate.Change{Event: ledger.WorktreeSetupEvent(about, data)}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AddStep is the step that makes the worktree of run's node (again), as the one who
// asked runs it (docs/contract.md §11.13): with their holder and, a job's worker, its
// lease token. The union's is built by union (worktree add refuses its reserved name).
func AddStep(run, node, holder, lease string) fault.Step {
	if node == worktrees.Union {
		return as(fault.Do("union", "run", run), holder, "")
	}
	return as(fault.Do("worktree add", "run", run, "node", node), holder, lease)
}

// SetupStep is the step that runs run's setup again in node's worktree, as the one
// who asked runs it: with their holder and lease token.
func SetupStep(run, node, holder, lease string) fault.Step {
	return as(fault.Do("worktree setup", "run", run, "node", node), holder, lease)
}

// as is s with the lease token and holder of whoever runs it, when they have them.
func as(s fault.Step, holder, lease string) fault.Step {
	if lease != "" {
		s = s.With("lease", lease)
	}
	if holder != "" {
		s = s.With("holder", holder)
	}
	return s
}
