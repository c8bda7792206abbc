package hooks

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/resume"
	"github.com/git-atlas/git-atlas/worktrees"
)

// The hint (<git-common-dir>/atlas/hint) lets the installed hook (Script) answer a
// checkout without starting git-atlas. One item a line:
//
//	git-atlas hint 1
//	expires <unix seconds>   the earliest a live run's driver lease ends (0: no live run)
//	root <path>              the managed worktrees' root (as configured, and resolved)
//	say <line>               what the hook prints on stderr (the interrupted runs)
//	ask                      (instead of say) the hook must ask git-atlas
//	end
//	wt <ref> <path>          a managed worktree and the branch its HEAD must be on
//	wt - <path>              ... or one marked untrusted already (nothing to record)
//	wtend                    (only when there are wt lines: a checkout anywhere but
//	                         in a managed worktree stops reading at end)
//
// It is derived data, written with git.Repository.WriteHint, whose stamp makes any
// later change to the ledger refs or the config visible to the hook as a file newer
// than the hint; a live run becomes interrupted with no write at all when its lease
// ends, which `expires` covers. Anything the script does not understand, a missing
// or stale hint, a managed (or locked, or possibly managed) worktree: it runs
// git-atlas, which re-derives the hint.
const hintMagic = "git-atlas hint 1"

// hintContent derives the hint and returns the interrupted runs it describes.
func hintContent(ctx context.Context, store *gitstate.Store, now time.Time) ([]byte, []resume.Candidate, error) {
	// The local ledger, as the hook sees it: no fetch, even after a write through a
	// remote.
	entries, err := store.List(ctx, gitstate.ListOptions{Depth: gitstate.ListStates, NoFetch: true})
	if err != nil {
		return nil, nil, err
	}
	cands, _ := resume.DetectIn(entries, now)
	var expires int64
	for _, e := range entries {
		if e.Run == nil || e.Run.Interrupted(now) || !e.Run.Live(now) {
			continue
		}
		t, err := gitstate.ParseStamp(e.Run.State.Driver.ExpiresAt)
		if err != nil {
			return nil, nil, err // Live parsed it: cannot happen
		}
		// A live run is interrupted from the moment its lease runs out, or sooner,
		// when its open attempt passes its idle budget without a heartbeat.
		if idle := e.Run.IdleDeadline(); !idle.IsZero() && idle.Before(t) {
			t = idle
		}
		// Whole seconds, rounded down: the hook asks git-atlas from that second on.
		s := max(int64(math.Floor(float64(t.UnixNano())/1e9)), 1)
		if expires == 0 || s < expires {
			expires = s
		}
	}
	root, err := worktrees.Root(ctx, store.Repo)
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nexpires %d\n", hintMagic, expires)
	for _, r := range uniq(root, git.RealPath(root)) {
		if !oneLine(r) {
			b.WriteString("ask\n")
			continue
		}
		fmt.Fprintf(&b, "root %s\n", strings.TrimSuffix(r, "/"))
	}
	if len(cands) > 0 {
		if line, ok := interruptedPlain(cands); ok {
			fmt.Fprintf(&b, "say %s\n", line)
		} else {
			b.WriteString("ask\n")
		}
	}
	b.WriteString("end\n")
	var wt bytes.Buffer
	open := map[string]bool{}
	for _, e := range entries {
		if e.Run != nil && !gitstate.RunTerminal(e.Run.State.Status) {
			open[e.ID] = true
		}
	}
	managed, err := worktrees.ManagedIn(ctx, store, root, func(run string) bool { return open[run] })
	if err != nil {
		return nil, nil, err
	}
	for _, m := range managed {
		ref := m.Branch
		if ref == "" {
			ref = "-"
		}
		for _, p := range uniq(m.Path, git.RealPath(m.Path)) {
			// The script compares the rest of the line with its $PWD, as read(1)
			// splits it: a path it would not read back whole is left out, and a
			// checkout there asks git-atlas.
			if oneLine(p) && strings.TrimSpace(p) == p {
				fmt.Fprintf(&wt, "wt %s %s\n", ref, p)
			}
		}
	}
	if wt.Len() > 0 {
		b.Write(wt.Bytes())
		b.WriteString("wtend\n")
	}
	return b.Bytes(), cands, nil
}

// InterruptedLine is the hook's line about interrupted runs ("" for none), with the
// newest run's id as name gives it (the command line escapes it for a terminal).
func InterruptedLine(cands []resume.Candidate, name func(string) string) string {
	switch len(cands) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("git-atlas: run %s was interrupted; `git atlas resume --detect` lists it", name(cands[0].RunID))
	}
	return fmt.Sprintf("git-atlas: %d interrupted runs (newest: %s); `git atlas resume --detect` lists them", len(cands), name(cands[0].RunID))
}

// interruptedPlain is InterruptedLine when the newest run's id needs no escaping (a
// valid name, as every run git-atlas writes has): the script prints it as it is.
func interruptedPlain(cands []resume.Candidate) (string, bool) {
	if gitstate.ValidName("run", cands[0].RunID) != nil {
		return "", false
	}
	return InterruptedLine(cands, func(s string) string { return s }), true
}

func oneLine(s string) bool { return s != "" && !strings.ContainsAny(s, "\n\r") }

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// RefreshHint re-derives the hint when the hook reads one (it exists), or always with
// force; it returns the interrupted runs it found (nil when it did not look). Any
// failure leaves no hint: the hook then asks git-atlas, which makes one again.
func RefreshHint(ctx context.Context, store *gitstate.Store, force bool) ([]resume.Candidate, error) {
	repo := store.Repo
	if !force && !repo.HintInUse() {
		return nil, nil
	}
	var cands []resume.Candidate
	err := repo.WriteHint(func() ([]byte, error) {
		data, c, err := hintContent(ctx, store, store.Now())
		cands = c
		return data, err
	})
	return cands, err
}

// KeepHint keeps the hint (when there is one) in step with a ledger write: it is the
// gitstate.Store.AfterWrite of every store a front end opens (ops.Ops.Store, the
// hook's own), whoever writes. A failure leaves no hint, never a failed write.
func KeepHint(ctx context.Context, s *gitstate.Store) { _, _ = RefreshHint(ctx, s, false) }
