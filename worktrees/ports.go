package worktrees

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// PortRangeConfig is the git config key of the ports nodes' blocks come from.
const PortRangeConfig = "atlas.portRange"

// Default port range (docs/contract.md §15).
const (
	DefaultPortLow  = 20000
	DefaultPortHigh = 29999
)

// portsMutex is the repository's lock under which blocks are handed out: runs share
// the range.
const portsMutex = "ports"

// PortRange reads atlas.portRange ("LOW-HIGH"), or the default.
func PortRange(ctx context.Context, repo *git.Repository) (lo, hi int, err error) {
	v := strings.TrimSpace(repo.Config(ctx, PortRangeConfig))
	if v == "" {
		return DefaultPortLow, DefaultPortHigh, nil
	}
	a, b, ok := strings.Cut(v, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fault.Usage("%s is %q: give LOW-HIGH, ports from 1 to 65535", PortRangeConfig, v)
	}
	return lo, hi, nil
}

// heldPorts are the ports recorded on the live nodes of the repository: worktree
// records of runs that are not finished, whose job (if any) is neither DONE nor
// FAILED. A removed worktree's record, a finished run and a settled job hold none.
// except is the node asking, whose own old block does not count against it.
func heldPorts(ctx context.Context, store *gitstate.Store, run, node string) (map[int]bool, error) {
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListFull})
	if err != nil {
		return nil, err
	}
	held := map[int]bool{}
	for _, e := range entries {
		if e.Err != nil || ledger.RunTerminal(e.Run.State.Status) {
			continue
		}
		for _, w := range e.Run.State.Worktrees {
			if e.Run.Header.RunID == run && w.Node == node {
				continue
			}
			if j := e.Run.State.Job(w.Node); j != nil && (j.State == ledger.JobDone || j.State == ledger.JobFailed) {
				continue
			}
			for _, p := range w.Ports {
				held[p] = true
			}
		}
	}
	return held, nil
}

// pickPorts chooses a block of n ports in [lo, hi] for run's node: the block its
// name hashes to, or the next free one after it, so that the same node gets the same
// ports while they are free.
func pickPorts(run, node string, n, lo, hi int, held map[int]bool) ([]int, error) {
	blocks := (hi - lo + 1) / n
	if blocks < 1 {
		return nil, fault.Usage("%s %d-%d holds no block of %d ports", PortRangeConfig, lo, hi, n)
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s", run, node)
	start := int(h.Sum64() % uint64(blocks))
	for i := range blocks {
		first := lo + ((start+i)%blocks)*n
		free := true
		for p := first; p < first+n; p++ {
			if held[p] {
				free = false
				break
			}
		}
		if free {
			ports := make([]int, n)
			for k := range ports {
				ports[k] = first + k
			}
			return ports, nil
		}
	}
	return nil, fault.Conflict("no free block of %d ports is left in %s %d-%d: live nodes hold them", n, PortRangeConfig, lo, hi).
		WithHint("finish the runs that are done, or remove the worktrees of nodes no longer worked on (`%s`), or widen %s",
			fault.Do("worktree remove", "run", fault.Placeholder("RUN"), "node", fault.Placeholder("NODE")), PortRangeConfig)
}

// Allocator hands out blocks of ports to a run's nodes under the repository's port
// lock, held from its look at the live nodes' blocks until Release, which comes after
// the caller recorded the blocks it picked (docs/contract.md §15): runs share the
// range.
type Allocator struct {
	run       string
	n, lo, hi int
	held      map[int]bool
	release   func()
}

// AllocatePorts takes the port lock to give run's nodes blocks of n ports; with n 0
// it takes nothing and Pick gives none. Release it once the blocks are recorded.
func AllocatePorts(ctx context.Context, store *gitstate.Store, run string, n int) (*Allocator, error) {
	a := &Allocator{run: run, n: n, release: func() {}}
	if n <= 0 {
		return a, nil
	}
	release, err := lockPorts(ctx, store.Repo)
	if err != nil {
		return nil, err
	}
	a.release = release
	if a.lo, a.hi, err = PortRange(ctx, store.Repo); err == nil {
		a.held, err = heldPorts(ctx, store, run, "")
	}
	if err != nil {
		a.Release()
		return nil, err
	}
	return a, nil
}

// Pick is node's block: the one its run and name hash to, or the next free one after
// it; nil when the run has no ports.
func (a *Allocator) Pick(node string) ([]int, error) {
	if a.n <= 0 {
		return nil, nil
	}
	return pickPorts(a.run, node, a.n, a.lo, a.hi, a.held)
}

// Release lets the next allocation in.
func (a *Allocator) Release() {
	a.release()
	a.release = func() {}
}

// portsWait is how long an allocation waits for the port lock (a variable: a test
// shortens it).
var portsWait = 30 * time.Second

// lockPorts takes the repository's port lock (released by the returned function).
// Unlike a ledger write's queue, the lock is what keeps two nodes from one block: an
// allocation that cannot take it fails rather than going on without it.
func lockPorts(ctx context.Context, repo *git.Repository) (func(), error) {
	return repo.Lock(ctx, portsMutex, portsWait)
}
