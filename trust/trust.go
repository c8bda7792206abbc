// Package trust decides which commands carried by a run this repository may run
// (docs/contract.md §10, invariant 10): those it wrote itself, and those a person approved here.
// A run's verify commands travel with its ledger (push, pull, a shared remote, import),
// so running them on resume would run whatever another machine's author wrote, as
// soon as an agent resumes at session start; git never runs hooks that arrive with a
// clone, for the same reason.
//
// The record is local state, <git-common-dir>/atlas/trust/<run>: one sha256 per
// trusted command, never in the ledger and never pushed. A command is trusted when its
// hash (with the run id) is there, so a pulled run whose command changed is untrusted
// again. Only an Approved command runs (resume.RunVerify takes nothing else).
package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// WhereResumeWith is where a managed run's resume command is used (Command.Where).
const WhereResumeWith = "resume_with"

// WhereSetup is where the run's setup command is listed.
const WhereSetup = "setup"

// dir is the local state directory of the trust records.
const dir = "trust"

// Command is one command a run carries, where it is used, and whether it is trusted.
type Command struct {
	Where   string `json:"where"` // "run", "stage NAME", "job ID" or "resume_with"
	Command string `json:"command"`
	Trusted bool   `json:"trusted"`
}

// Commands lists every command run r carries: the run's verify (what `union
// --verify` and stages without their own run), each stage's and each job's verify.
func Commands(r *ledger.Run) []Command {
	var cmds []Command
	if r.Header.Verify != "" {
		cmds = append(cmds, Command{Where: "run", Command: r.Header.Verify})
	}
	for _, s := range r.Header.Stages {
		if s.Verify != "" {
			cmds = append(cmds, Command{Where: "stage " + s.Name, Command: s.Verify})
		}
	}
	for _, j := range r.State.Jobs {
		if j.Verify != "" {
			cmds = append(cmds, Command{Where: "job " + j.ID, Command: j.Verify})
		}
	}
	// The owner's resume command of a managed run is shown to an agent as a command
	// only when trusted here; one imported as a pattern to fill in is text, never a
	// command (docs/contract.md §6).
	if r.Header.Setup != "" {
		// Run in each new worktree (docs/contract.md §15): trusted like verify.
		cmds = append(cmds, Command{Where: WhereSetup, Command: r.Header.Setup})
	}
	if r.Header.ResumeWith != "" && !r.Header.ResumeWithText {
		cmds = append(cmds, Command{Where: WhereResumeWith, Command: r.Header.ResumeWith})
	}
	return cmds
}

// Digest is the sha256 of exactly what `trust --list RUN` shows of run h and what
// `trust RUN --yes --digest D` trusts: after a version line, the run id, the intent,
// every member of the header's free text (headerTexts, in their order) and the
// commands cmds in the canonical order (by where, then by command), each value
// length-prefixed. A header text or command changed after a person read them changes
// it. Trust or no trust plays no part.
func Digest(h *ledger.Header, cmds []Command) string {
	sorted := slices.Clone(cmds)
	slices.SortFunc(sorted, func(a, b Command) int {
		if c := strings.Compare(a.Where, b.Where); c != 0 {
			return c
		}
		return strings.Compare(a.Command, b.Command)
	})
	hash := sha256.New()
	fmt.Fprintf(hash, "git-atlas trust digest 2\n%d:%s\n%d:%s\n", len(h.RunID), h.RunID, len(h.Intent), h.Intent)
	for _, m := range headerTexts(h) {
		fmt.Fprintf(hash, "%d:%s\n%d:%s\n", len(m.name), m.name, len(m.value), m.value)
	}
	fmt.Fprintf(hash, "commands\n")
	for _, c := range sorted {
		fmt.Fprintf(hash, "%d:%s\n%d:%s\n", len(c.Where), c.Where, len(c.Command), c.Command)
	}
	return hex.EncodeToString(hash.Sum(nil))
}

// hash is what the record keeps of a trusted command of run.
func hash(run, command string) string {
	h := sha256.Sum256([]byte("git-atlas trust 1\x00" + run + "\x00" + command))
	return hex.EncodeToString(h[:])
}

// Set is the trust record of one run.
type Set struct {
	run    string
	hashes map[string]bool
}

// Load reads run's trust record (empty when there is none).
func Load(ctx context.Context, repo *git.Repository, run string) (Set, error) {
	if err := ledger.ValidName("run", run); err != nil {
		return Set{}, err
	}
	data, err := repo.ReadLocal(dir + "/" + run)
	if err != nil {
		return Set{}, fmt.Errorf("read the trust record of run %s: %w", run, err)
	}
	s := Set{run: run, hashes: map[string]bool{}}
	for line := range strings.SplitSeq(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			s.hashes[line] = true
		}
	}
	return s, nil
}

// Trusts reports whether command may run for this set's run.
func (s Set) Trusts(command string) bool { return s.hashes[hash(s.run, command)] }

// Len is the number of trusted commands.
func (s Set) Len() int { return len(s.hashes) }

// Approved is a command cleared to run here. Only this package makes one: through a
// Set that trusts it, or Once for a person's answer at the terminal.
type Approved struct{ command string }

// Command is the command to run.
func (a Approved) Command() string { return a.command }

// Approve returns command cleared to run when the set trusts it.
func (s Set) Approve(command string) (Approved, bool) {
	if !s.Trusts(command) {
		return Approved{}, false
	}
	return Approved{command}, true
}

// Gate is the one check every path makes before it runs a command run carries (a
// stage's verify on resume or on passed, a job's verify on its receipt or owed, the
// run's verify on the union): the command cleared to run when run's record trusts
// it here, else ok false, and then it is never run (docs/contract.md §10). A record
// that cannot be read is an error: nothing runs.
func Gate(ctx context.Context, repo *git.Repository, run, command string) (a Approved, ok bool, err error) {
	s, err := Load(ctx, repo, run)
	if err != nil {
		return Approved{}, false, err
	}
	a, ok = s.Approve(command)
	return a, ok, nil
}

// Once clears command for one run because a person at the terminal said so; nothing
// is recorded.
func Once(command string) Approved { return Approved{command} }

// Check returns r's commands with whether each is trusted here.
func Check(ctx context.Context, repo *git.Repository, r *ledger.Run) ([]Command, error) {
	s, err := Load(ctx, repo, r.Header.RunID)
	if err != nil {
		return nil, err
	}
	cmds := Commands(r)
	for i := range cmds {
		cmds[i].Trusted = s.Trusts(cmds[i].Command)
	}
	return cmds, nil
}

// Record trusts commands of run here: this repository wrote them (`start`, `job add
// --verify`) or a person approved them (`trust`). The record is durable when it
// returns (git.Repository.WriteLocal).
func Record(ctx context.Context, repo *git.Repository, run string, commands ...string) error {
	_, err := Add(ctx, repo, run, "", commands...)
	return err
}

// Added is what Add newly trusted (what was trusted before is not in it).
type Added struct {
	run    string
	hashes []string
}

// Add is Record, and with a non-empty intent trusts the run's intent too (the run
// was started here, or a person read it here): only a trusted intent reaches an
// agent's context (docs/contract.md §6, §11 invariant 11). A write that records the trust of its
// own commands before the ledger commit that carries them (so that no crash leaves
// them untrusted) gives what Add returns to Forget when that commit fails.
func Add(ctx context.Context, repo *git.Repository, run, intent string, commands ...string) (Added, error) {
	var text *ledger.Header
	if intent != "" {
		text = &ledger.Header{RunID: run, Intent: intent}
	}
	return add(ctx, repo, run, intent, text, false, commands)
}

// AddRun is Add for a run started in this clone, h its header as this clone writes
// it: it trusts the run's own free text as it stands, whatever its intent (empty
// too), so that Intents.Trusts holds for it and its state may reach an agent here; of
// its header, each member of free text as h has it (Intents.Header); of the events
// and jobs, only those this clone wrote (their MAC, gitstate's textmac.go) do
// (docs/contract.md §6).
func AddRun(ctx context.Context, repo *git.Repository, h *ledger.Header, commands ...string) (Added, error) {
	return add(ctx, repo, h.RunID, h.Intent, h, false, commands)
}

// AddPerson is AddRun for a run a person read and trusted here (`git atlas trust
// RUN`), h its header as it stands: Intents.Vouched holds for it too, and all of its
// free text may reach an agent here, whichever clone wrote it (docs/contract.md §6).
func AddPerson(ctx context.Context, repo *git.Repository, h *ledger.Header, commands ...string) (Added, error) {
	return add(ctx, repo, h.RunID, h.Intent, h, true, commands)
}

// add records commands of run; with text (a header of run: only its intent when Add
// gives it) the intent and each member of the header's free text too.
func add(ctx context.Context, repo *git.Repository, run, intent string, text *ledger.Header, person bool, commands []string) (Added, error) {
	var want []string
	for _, c := range commands {
		want = append(want, hash(run, c))
	}
	if text != nil {
		want = append(want, intentHash(run, intent))
		texts := headerTexts(text)
		for _, m := range texts {
			want = append(want, headerHash(run, m.name, m.value))
		}
		want = append(want, membersHash(run, texts))
	}
	if person {
		want = append(want, personHash(run, intent))
	}
	added := Added{run: run}
	if len(want) == 0 {
		return added, nil
	}
	err := update(ctx, repo, run, func(s Set) {
		for _, h := range want {
			if !s.hashes[h] {
				s.hashes[h] = true
				added.hashes = append(added.hashes, h)
			}
		}
	})
	if err != nil {
		return Added{run: run}, err
	}
	return added, nil
}

// Forget untrusts what Add added (for a ledger write that failed).
func Forget(ctx context.Context, repo *git.Repository, a Added) error {
	if len(a.hashes) == 0 {
		return nil
	}
	return update(ctx, repo, a.run, func(s Set) {
		for _, h := range a.hashes {
			delete(s.hashes, h)
		}
	})
}

// intentHash is what the record keeps of a run's trusted intent (a hash domain of its
// own: no command hashes the same).
func intentHash(run, intent string) string {
	h := sha256.Sum256([]byte("git-atlas trust intent 1\x00" + run + "\x00" + intent))
	return hex.EncodeToString(h[:])
}

// personHash is what the record keeps of a run a person trusted here with intent (a
// hash domain of its own).
func personHash(run, intent string) string {
	h := sha256.Sum256([]byte("git-atlas trust person 1\x00" + run + "\x00" + intent))
	return hex.EncodeToString(h[:])
}

// TrustsPerson reports whether a person trusted run here, with intent as it carries
// it now.
func (s Set) TrustsPerson(intent string) bool { return s.hashes[personHash(s.run, intent)] }

// TrustsIntent reports whether intent, as run carries it, was written or read here:
// the run was started in this clone, or a person trusted it here with this intent.
func (s Set) TrustsIntent(intent string) bool { return s.hashes[intentHash(s.run, intent)] }

// Intents says which runs' intents may reach an agent here; it reads each run's
// record once. The zero value trusts none.
type Intents struct {
	repo *git.Repository
	sets map[string]Set
}

// NewIntents reads trust records of repo as they are asked for.
func NewIntents(repo *git.Repository) *Intents {
	return &Intents{repo: repo, sets: map[string]Set{}}
}

// Shown is intent when run's record trusts it, else "" (a record that cannot be read
// trusts nothing).
func (in *Intents) Shown(ctx context.Context, run, intent string) string {
	if intent == "" || !in.Trusts(ctx, run, intent) {
		return ""
	}
	return intent
}

// Trusts is the one decision of whether run's free text (its intent, reasons, notes,
// event data) may reach an agent's context here: the run was started in this clone,
// or a person trusted it here, with intent as it carries it now (docs/contract.md
// §6); of its header's other text, only the members Header proves do. A record that
// cannot be read trusts nothing.
func (in *Intents) Trusts(ctx context.Context, run, intent string) bool {
	s := in.set(ctx, run)
	return s.hashes != nil && s.TrustsIntent(intent)
}

// set is run's record, read once (empty when it cannot be read).
func (in *Intents) set(ctx context.Context, run string) Set {
	if in == nil || in.repo == nil {
		return Set{}
	}
	s, ok := in.sets[run]
	if !ok {
		var err error
		if s, err = Load(ctx, in.repo, run); err != nil {
			s = Set{}
		}
		in.sets[run] = s
	}
	return s
}

// Vouched reports whether a person trusted run here (`git atlas trust RUN`), with
// intent as it carries it now: then every item of its free text may reach an agent
// here, whichever clone wrote it; for a run merely started here, only the events and
// jobs this clone wrote do (docs/contract.md §6). A record that cannot be read vouches
// for nothing.
func (in *Intents) Vouched(ctx context.Context, run, intent string) bool {
	return in.Trusts(ctx, run, intent) && in.sets[run].TrustsPerson(intent)
}

// TrustsCommand reports whether command, as run carries it, is trusted here (this
// clone wrote it, or a person approved it here); a record that cannot be read trusts
// nothing.
func (in *Intents) TrustsCommand(ctx context.Context, run, command string) bool {
	s := in.set(ctx, run)
	return s.hashes != nil && s.Trusts(command)
}

// Revoke forgets every trusted command of run.
func Revoke(ctx context.Context, repo *git.Repository, run string) error {
	if err := ledger.ValidName("run", run); err != nil {
		return err
	}
	defer repo.Mutex(ctx, "trust/"+run, 10*time.Second)()
	if err := repo.RemoveLocal(dir + "/" + run); err != nil {
		return fmt.Errorf("revoke the trust of run %s: %w", run, err)
	}
	return nil
}

// Runs lists the runs that have a trust record here.
func Runs(ctx context.Context, repo *git.Repository) ([]string, error) {
	names, err := repo.ListLocal(dir)
	if err != nil {
		return nil, fmt.Errorf("list trust records: %w", err)
	}
	var runs []string
	for _, n := range names {
		if ledger.ValidName("run", n) == nil {
			runs = append(runs, n)
		}
	}
	slices.Sort(runs)
	return runs, nil
}

// update changes run's record under its lock (read, change, write whole).
func update(ctx context.Context, repo *git.Repository, run string, change func(Set)) error {
	if err := ledger.ValidName("run", run); err != nil {
		return err
	}
	defer repo.Mutex(ctx, "trust/"+run, 10*time.Second)()
	s, err := Load(ctx, repo, run)
	if err != nil {
		return err
	}
	change(s)
	lines := make([]string, 0, len(s.hashes))
	for h := range s.hashes {
		lines = append(lines, h)
	}
	slices.Sort(lines)
	if err := repo.WriteLocal(dir+"/"+run, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		return fmt.Errorf("record the trust of run %s: %w", run, err)
	}
	return nil
}
