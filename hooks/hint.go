package hooks

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
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
		t, err := ledger.ParseStamp(e.Run.State.Driver.ExpiresAt)
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
	h := Hint{Expires: expires}
	for _, r := range uniq(root, git.RealPath(root)) {
		if r = strings.TrimSuffix(r, "/"); !hintValue(r) {
			h.Ask = true
			continue
		}
		h.Roots = append(h.Roots, r)
	}
	if len(cands) > 0 {
		if line, ok := interruptedPlain(cands); ok {
			h.Say = append(h.Say, line)
		} else {
			h.Ask = true
		}
	}
	open := map[string]bool{}
	for _, e := range entries {
		if e.Run != nil && !ledger.RunTerminal(e.Run.State.Status) {
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
			if hintValue(p) {
				h.Worktrees = append(h.Worktrees, HintWorktree{Ref: ref, Path: p})
			}
		}
	}
	data := h.Encode()
	// What the script will read must be what was meant: a hint that does not decode
	// back to itself is not written (the hook then asks git-atlas).
	if back, err := ParseHint(data); err != nil || !back.Equal(h) {
		return nil, nil, fmt.Errorf("the hint would not read back as written: %w", err)
	}
	return data, cands, nil
}

// Hint is what the hint file says (the format above), as the script reads it.
type Hint struct {
	// Expires is the earliest second a live run's driver lease ends (0: none).
	Expires int64
	// Roots are the managed worktrees' root, as configured and resolved.
	Roots []string
	// Say are the lines the hook prints: only text git-atlas composes from run ids
	// (never a run's free text: docs/contract.md §11 invariant 11).
	Say []string
	// Ask: the hook must ask git-atlas rather than say anything.
	Ask bool
	// Worktrees are the managed worktrees and the branch each HEAD must be on.
	Worktrees []HintWorktree
}

// HintWorktree is one `wt` line: Ref "-" for a worktree marked untrusted already.
type HintWorktree struct{ Ref, Path string }

// Equal reports whether h and o say the same.
func (h Hint) Equal(o Hint) bool {
	return h.Expires == o.Expires && h.Ask == o.Ask && slices.Equal(h.Roots, o.Roots) &&
		slices.Equal(h.Say, o.Say) && slices.Equal(h.Worktrees, o.Worktrees)
}

// Encode writes the hint in the file's format.
func (h Hint) Encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nexpires %d\n", hintMagic, h.Expires)
	for _, r := range h.Roots {
		fmt.Fprintf(&b, "root %s\n", r)
	}
	for _, s := range h.Say {
		fmt.Fprintf(&b, "say %s\n", s)
	}
	if h.Ask {
		b.WriteString("ask\n")
	}
	b.WriteString("end\n")
	if len(h.Worktrees) > 0 {
		for _, w := range h.Worktrees {
			fmt.Fprintf(&b, "wt %s %s\n", w.Ref, w.Path)
		}
		b.WriteString("wtend\n")
	}
	return b.Bytes()
}

// ParseHint decodes a hint file as the script reads it (`read -r k v`: the key up to
// the first blank, the value with its outer blanks dropped) and refuses what the
// script would not act on or what git-atlas never writes: a missing magic line,
// expires or end; an unknown key; wt lines before end or without wtend; a value with
// a control character (a say line is printed to a terminal and given to agents); a
// say line that is not one of git-atlas's own (InterruptedLine about a valid run id).
func ParseHint(data []byte) (Hint, error) {
	var h Hint
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		return h, fmt.Errorf("hint: not a whole file (no final newline)")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if lines[0] != hintMagic {
		return h, fmt.Errorf("hint: not a %q file", hintMagic)
	}
	var sawExpires, sawEnd, sawWtEnd bool
	for i, line := range lines[1:] {
		bad := func(why string) error { return fmt.Errorf("hint line %d: %s", i+2, why) }
		if sawWtEnd {
			return h, bad("text after wtend")
		}
		if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || r == utf8.RuneError }) {
			return h, bad("control character or invalid UTF-8")
		}
		// read -r k v: blanks around the key dropped, the value is the rest with its
		// outer blanks dropped.
		k, v := strings.TrimLeft(line, " \t"), ""
		if j := strings.IndexAny(k, " \t"); j >= 0 {
			k, v = k[:j], strings.Trim(k[j+1:], " \t")
		}
		switch wt := k == "wt" || k == "wtend"; {
		case wt && !sawEnd:
			return h, bad(k + " before end")
		case !wt && sawEnd:
			return h, bad(strconv.Quote(k) + " after end")
		}
		switch k {
		case "expires":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || sawExpires || strconv.FormatInt(n, 10) != v {
				return h, bad("bad expires")
			}
			h.Expires, sawExpires = n, true
		case "root":
			if !hintValue(v) {
				return h, bad("bad root")
			}
			h.Roots = append(h.Roots, v)
		case "say":
			if !sayLine(v) {
				return h, bad("a say line git-atlas does not write")
			}
			h.Say = append(h.Say, v)
		case "ask":
			if v != "" || h.Ask {
				return h, bad("bad ask")
			}
			h.Ask = true
		case "end":
			if v != "" || sawEnd {
				return h, bad("bad end")
			}
			sawEnd = true
		case "wt":
			ref, path, ok := strings.Cut(v, " ")
			if !ok || ref == "" || strings.ContainsAny(ref, " \t") || !hintValue(path) {
				return h, bad("bad wt")
			}
			h.Worktrees = append(h.Worktrees, HintWorktree{Ref: ref, Path: path})
		case "wtend":
			if v != "" || len(h.Worktrees) == 0 {
				return h, bad("bad wtend")
			}
			sawWtEnd = true
		default:
			return h, bad("unknown key " + strconv.Quote(k))
		}
	}
	switch {
	case !sawExpires:
		return h, fmt.Errorf("hint: no expires line")
	case !sawEnd:
		return h, fmt.Errorf("hint: no end line")
	case len(h.Worktrees) > 0 && !sawWtEnd:
		return h, fmt.Errorf("hint: wt lines without wtend")
	}
	return h, nil
}

// sayLine reports whether s is a line the hint may make the hook print:
// InterruptedLine about a valid run id, nothing else.
func sayLine(s string) bool {
	if rest, ok := strings.CutPrefix(s, "git-atlas: run "); ok {
		run, _, _ := strings.Cut(rest, " ")
		return ledger.ValidName("run", run) == nil && s == interruptedText(1, run)
	}
	rest, ok := strings.CutPrefix(s, "git-atlas: ")
	n, rest, ok2 := strings.Cut(rest, " interrupted runs (newest: ")
	run, _, _ := strings.Cut(rest, ")")
	count, err := strconv.Atoi(n)
	return ok && ok2 && err == nil && count >= 2 && ledger.ValidName("run", run) == nil && s == interruptedText(count, run)
}

// hintValue reports whether s can be a hint value the script reads back whole: one
// line, valid UTF-8, no control character, no blank at either end.
func hintValue(s string) bool {
	return s != "" && utf8.ValidString(s) && strings.TrimSpace(s) == s &&
		!strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError })
}

// InterruptedLine is the hook's line about interrupted runs ("" for none), with the
// newest run's id as name gives it (the command line escapes it for a terminal).
func InterruptedLine(cands []resume.Candidate, name func(string) string) string {
	if len(cands) == 0 {
		return ""
	}
	return interruptedText(len(cands), name(cands[0].RunID))
}

// interruptedText is InterruptedLine about n runs, the newest named newest.
func interruptedText(n int, newest string) string {
	if n == 1 {
		return fmt.Sprintf("git-atlas: run %s was interrupted; `git atlas resume --detect` lists it", newest)
	}
	return fmt.Sprintf("git-atlas: %d interrupted runs (newest: %s); `git atlas resume --detect` lists them", n, newest)
}

// interruptedPlain is InterruptedLine when the newest run's id needs no escaping (a
// valid name, as every run git-atlas writes has): the script prints it as it is.
func interruptedPlain(cands []resume.Candidate) (string, bool) {
	if ledger.ValidName("run", cands[0].RunID) != nil {
		return "", false
	}
	return InterruptedLine(cands, func(s string) string { return s }), true
}

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
