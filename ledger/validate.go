package ledger

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/internal/gitid"
)

// CheckDocuments fails when a run's documents hold a value no write of git-atlas
// makes: a run, stage, job or node name ValidName refuses (docs/contract.md §3), a run's,
// stage's or job's status outside its state machine (docs/contract.md §5), a branch or
// recovery ref git would refuse, a snapshot id that is not a file name, a time that
// is not one (ValidStamp), a lease token ParseLeaseToken refuses. Every read
// applies it (sameRun), so a run pulled from elsewhere, hand-edited, or written by an
// older release with such a value is unreadable, with the value named; nothing reads,
// lists, grants or hands such a value to git or the file system. Empty optional
// fields pass. h or st may be nil (a listing of states alone). An object id (a
// baseline, a head, a snapshot commit) is a gitid.OID, which decoding already refused
// unless it was a full hex id (decodeDoc names the member).
func CheckDocuments(h *Header, st *State) error {
	c := &checker{}
	if h != nil {
		c.name("run", at("run.json run_id"), h.RunID)
		c.stamp(at("run.json created_at"), h.CreatedAt)
		c.session(at("run.json session"), h.Session)
		if c.err == nil && h.ConfigHash != "" && !isConfigHash(h.ConfigHash) {
			c.fail(at("run.json config_hash"), h.ConfigHash, "not sha256:<64 hex digits>")
		}
		if c.err == nil {
			if err := h.CheckMode(); err != nil {
				c.refuse("run.json pipeline_mode", err)
			}
		}
		for i, s := range h.Stages {
			c.node("stage", item("run.json stages", i, ".name"), s.Name)
			if s.ReworkTo != "" {
				c.node("stage", item("run.json stages", i, ".rework_to"), s.ReworkTo)
			}
		}
	}
	if st != nil {
		c.name("run", at("state.json run_id"), st.RunID)
		c.oneOf(at("state.json status"), st.Status, runStatuses)
		c.stamp(at("state.json updated_at"), st.UpdatedAt)
		if d := st.Driver; d != nil {
			c.stamp(at("driver expires_at"), d.ExpiresAt)
			c.session(at("driver session"), d.Session)
		}
		for i, s := range st.Stages {
			c.node("stage", item("stages", i, ".name"), s.Name)
			c.oneOf(member("stage", s.Name, " status"), s.Status, StageStatuses)
			c.stamp(member("stage", s.Name, " updated_at"), s.UpdatedAt)
			c.verify(member("stage", s.Name, " verify"), s.Verify)
			for j, a := range s.Attempts {
				where := func(tail string) place {
					return func() string { return "stage " + s.Name + " attempts[" + strconv.Itoa(j) + "]" + tail }
				}
				c.agent(where(""), a.Agent, a.ThreadID)
				c.stamp(where(" started_at"), a.StartedAt)
				c.stamp(where(" heartbeat_at"), a.HeartbeatAt)
				c.lease(where(" lease"), a.Lease)
			}
		}
		for i, j := range st.Jobs {
			c.node("job", item("jobs", i, ".id"), j.ID)
			c.oneOf(member("job", j.ID, " state"), j.State, jobStates)
			for _, n := range j.Needs {
				c.node("job", member("job", j.ID, " needs"), n)
			}
			if j.Parent != "" {
				c.node("job", member("job", j.ID, " parent"), j.Parent)
			}
			c.agent(member("job", j.ID, ""), j.Agent, j.ThreadID)
			c.lease(member("job", j.ID, " lease"), j.Lease)
			c.stamp(member("job", j.ID, " expires_at"), j.ExpiresAt)
			c.verify(member("job", j.ID, " verify_result"), j.VerifyResult)
		}
		for i, w := range st.Worktrees {
			c.name("node", item("worktrees", i, ".node"), w.Node)
			c.optName("stage", member("worktree", w.Node, " stage"), w.Stage)
			c.branch(member("worktree", w.Node, " branch"), w.Branch)
			for _, p := range w.Ports {
				if p < 1 || p > 65535 {
					c.fail(member("worktree", w.Node, " ports"), strconv.Itoa(p), "a port is 1-65535")
				}
			}
			if s := w.Setup; s != nil && s.Outcome != SetupOK && s.Outcome != SetupFailed && s.Outcome != SetupTimedOut && s.Outcome != SetupUntrusted {
				c.fail(member("worktree", w.Node, " setup outcome"), s.Outcome, "an outcome is ok, failed, timed-out or skipped-untrusted")
			}
			if s := w.Setup; s != nil {
				c.stamp(member("worktree", w.Node, " setup at"), s.At)
			}
		}
		for i, s := range st.Snapshots {
			c.snapshotID(item("snapshots", i, ".id"), s.ID)
			c.optName("node", item("snapshots", i, ".node"), s.Node)
			c.optName("stage", item("snapshots", i, ".stage"), s.Stage)
			if s.Commit.IsZero() {
				c.fail(item("snapshots", i, ".commit"), "", "a snapshot names its commit")
			}
			if want := RecoveryPrefix + st.RunID + "/" + s.ID; s.Ref != want {
				c.fail(item("snapshots", i, ".ref"), s.Ref, "a snapshot's ref is "+want)
			}
			c.stamp(item("snapshots", i, ".created_at"), s.CreatedAt)
		}
		if u := st.Union; u != nil {
			c.stamp(at("union at"), u.At)
			c.verify(at("union verify"), u.Verify)
			for _, n := range u.Integrated {
				c.name("node", at("union integrated"), n)
			}
			for n := range u.Conflicted {
				c.name("node", at("union conflicted"), n)
			}
			for n := range u.OutsideScope {
				c.name("job", at("union outside_scope"), n)
			}
			for n := range u.AllowedOutsideScope {
				c.name("job", at("union allowed_outside_scope"), n)
			}
		}
		for i, r := range st.Replays {
			c.name("stage", item("replays", i, ".stage"), r.Stage)
			c.branch(item("replays", i, ".branch"), r.Branch)
			if r.Snapshot != "" {
				c.snapshotID(item("replays", i, ".snapshot"), r.Snapshot)
			}
		}
		if m := st.Resuming; m != nil {
			for _, j := range m.ResetJobs {
				c.name("job", at("resuming reset_jobs"), j)
			}
		}
	}
	return c.err
}

// checkEvent is CheckDocuments for event.json: the stage and job it names, and its
// data's shape for its type (payload.go).
func checkEvent(ev *Event) error {
	c := &checker{}
	c.optName("stage", at("event.json stage"), ev.Stage)
	c.optName("job", at("event.json job"), ev.Job)
	c.stamp(at("event.json time"), ev.Time)
	if c.err == nil {
		if err := CheckPayload(ev); err != nil {
			c.err = &DocumentError{Where: "event.json data", msg: err.Error(), err: err}
		}
	}
	return c.err
}

// place is where a checked value sits in its document, spelled out only when a check
// fails: every read checks every member of every run, and formatting each place
// before its check was most of the checking (BenchmarkCheckDocuments).
type place func() string

// at is a place whose name needs no formatting.
func at(name string) place { return func() string { return name } }

// item is the i-th element of a list: "list[i]tail".
func item(list string, i int, tail string) place {
	return func() string { return list + "[" + strconv.Itoa(i) + "]" + tail }
}

// member is a member of the named stage, job or worktree: "kind name tail".
func member(kind, name, tail string) place {
	return func() string { return kind + " " + name + tail }
}

// DocumentError is CheckDocuments' and CheckEvent's refusal: a member of a run's
// documents holds a value no write of git-atlas makes. Its message, for a person,
// quotes the value; what an agent reads names the member only (Withheld): the
// value is pulled text, and may be written to be read as an instruction.
type DocumentError struct {
	// Where is the member, in git-atlas's words and names already checked.
	Where string
	msg   string // Where and what is wrong, quoting the value
	err   error  // the check's own error (its kind), when it made one
}

func (e *DocumentError) Error() string { return e.msg }
func (e *DocumentError) Unwrap() error { return e.err }

// Withheld is the message and the words an agent reads in its place.
func (e *DocumentError) Withheld() fault.Withheld {
	return fault.Withheld{Text: e.msg, Stand: e.Where + ": a value no write of git-atlas makes (withheld: the ledger's text)"}
}

// checker keeps the first failure of a document's checks.
type checker struct{ err error }

// refuse records err, a check's failure of the member at where (formatted).
func (c *checker) refuse(where string, err error) {
	c.err = &DocumentError{Where: where, msg: where + ": " + err.Error(), err: err}
}

func (c *checker) fail(where place, value, why string) {
	if c.err == nil {
		w := where()
		c.err = &DocumentError{Where: w, msg: fmt.Sprintf("%s %q: %s", w, clip(value), why)}
	}
}

// oneOf checks a status against the values its state machine has: anything else is
// no state git-atlas writes, and would reach a reader (an agent among them) as text.
func (c *checker) oneOf(where place, value string, valid []string) {
	if !slices.Contains(valid, value) {
		c.fail(where, value, "not one of "+strings.Join(valid, ", "))
	}
}

func (c *checker) name(what string, where place, name string) {
	if c.err == nil && !plainName(name) {
		if err := ValidName(what, name); err != nil {
			c.refuse(where(), err)
		}
	}
}

// session checks a session as the ledger keeps it, when there: sealed (its keyed
// hash, Seal), or a plain name an earlier release kept.
func (c *checker) session(where place, s string) {
	if c.err != nil || s == "" {
		return
	}
	if rest, ok := strings.CutPrefix(s, SealPrefix); ok {
		if !isHex(rest, 64) {
			c.fail(where, s, "not "+SealPrefix+"<64 hex digits>")
		}
		return
	}
	c.name("session", where, s)
}

// isConfigHash reports whether s is what ConfigHash writes: sha256:<64 hex digits>.
func isConfigHash(s string) bool {
	rest, ok := strings.CutPrefix(s, "sha256:")
	return ok && isHex(rest, 64)
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// node is name for a stage or job name: not one the worktree layout reserves either
// (CheckNodeName), as on write.
func (c *checker) node(what string, where place, name string) {
	c.name(what, where, name)
	if c.err == nil && mayBeReserved(name) {
		if err := CheckNodeName(what, name); err != nil {
			c.refuse(where(), err)
		}
	}
}

// mayBeReserved is false for a name CheckNodeName surely passes (of a valid name),
// without a regular expression or a copy: almost every name.
func mayBeReserved(name string) bool {
	return strings.EqualFold(name, "union") || len(name) > 7 && strings.EqualFold(name[:7], "replay-") || strings.IndexByte(name, '.') >= 0
}

func (c *checker) optName(what string, where place, name string) {
	if name != "" {
		c.name(what, where, name)
	}
}

// agent checks an attempt's or a job's agent and thread id, when there.
func (c *checker) agent(where place, agent, thread string) {
	if c.err == nil && agent != "" {
		if err := ValidAgent(agent); err != nil {
			c.refuse(where()+" agent", err)
		}
	}
	if c.err == nil && thread != "" {
		if err := ValidThreadID(thread); err != nil {
			c.refuse(where()+" thread_id", err)
		}
	}
}

// stamp checks a time, when there: anything but a time (ValidStamp) would reach a
// reader as text, and a decision (Run.Live, a lease's expiry) as no time at all.
func (c *checker) stamp(where place, s string) {
	if c.err == nil && s != "" && !ValidStamp(s) {
		c.fail(where, s, "not a time (RFC 3339, as git-atlas writes them)")
	}
}

// lease checks a job's or a stage attempt's lease token, when there (ParseLeaseToken).
func (c *checker) lease(where place, tok string) {
	if c.err == nil && tok != "" {
		if _, _, _, _, err := ParseLeaseToken(tok); err != nil {
			c.fail(where, tok, "not a lease token (<name>#<attempt>@<epoch>.<nonce>)")
		}
	}
}

// verify checks the time of a verify's outcome, when there.
func (c *checker) verify(where place, v *VerifyResult) {
	if v != nil {
		c.stamp(func() string { return where() + " at" }, v.At)
	}
}

func (c *checker) branch(where place, branch string) {
	if c.err == nil && branch != "" {
		if err := gitid.CheckRefFormat("refs/heads/" + branch); err != nil {
			c.fail(where, branch, "not a branch name git accepts")
		}
	}
}

// snapshotID is a snapshot's id: `<node>-<content id>`, a file name of the recovery
// directory and a ref component.
func (c *checker) snapshotID(where place, id string) {
	if c.err == nil && CheckSnapshotID(id) != nil {
		c.fail(where, id, "not a snapshot id")
	}
}

// CheckSnapshotID checks a snapshot id, from a ledger or a ref's name: the bytes of a
// name, at most 200 of them, and what git refuses in a ref component.
func CheckSnapshotID(id string) error {
	ok := id != "" && len(id) <= 200 && !strings.HasPrefix(id, ".") && !strings.HasPrefix(id, "-") &&
		!strings.Contains(id, "..") && !strings.HasSuffix(id, ".lock") && !strings.HasSuffix(id, ".")
	for i := 0; ok && i < len(id); i++ {
		ok = isNameByte(id[i])
	}
	if !ok {
		return errors.New("not a snapshot id")
	}
	return nil
}

// plainName is ValidName's verdict without a regular expression (a listing checks
// every stage of every run; FuzzPlainName holds them equal); false sends name to
// ValidName for its message.
func plainName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '.' || name[0] == '_' || name[0] == '-' || name[len(name)-1] == '.' ||
		strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-'
}

// clip keeps a bad value short in a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
