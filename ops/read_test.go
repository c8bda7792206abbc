package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// list leaves finished runs out unless All, lists an unreadable run as such (hiding
// no other), newest first.
func TestListFinishedUnreadableAndOrder(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.startSession("s", "")
	f.startSession("done", "")
	if _, err := f.ops.Finish(f.ctx, FinishRequest{Run: "done", Status: ledger.RunCompleted, Driver: d1}); err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(f.git(f.dir, "rev-parse", "HEAD:README"))
	f.git(f.dir, "update-ref", "refs/atlas/runs/bad", blob)
	row := func(res *ListResult) string {
		var s []string
		for _, it := range res.Runs {
			if it.Unreadable {
				s = append(s, it.RunID+"!")
				if it.Error == "" || it.Status != "unreadable" {
					t.Errorf("unreadable row: %+v", it)
				}
				continue
			}
			s = append(s, it.RunID)
		}
		return strings.Join(s, ",")
	}
	res, err := f.ops.List(f.ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// (r1, made by the fixture without a creation time, and the unreadable run sort
	// after every run that has one.)
	if got := row(res); got != "s,bad!,r1" {
		t.Fatalf("list: %s", got)
	}
	if res, err = f.ops.List(f.ctx, ListRequest{All: true}); err != nil || row(res) != "done,s,bad!,r1" {
		t.Fatalf("list --all: %s, %v", row(res), err)
	}
}

// show --at is the run as it was right after that event.
func TestShowAt(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.dispatch("code")
	now, err := f.ops.Show(f.ctx, ShowRequest{Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	first := 1
	then, err := f.ops.Show(f.ctx, ShowRequest{Run: "r1", At: &first})
	if err != nil {
		t.Fatal(err)
	}
	if now.Stages[0].Status != ledger.StageDispatched || now.Stages[0].Lease == "" || then.Stages[0].Status != ledger.StagePending || then.Run.State.Seq != 1 {
		t.Fatalf("now %+v, at 1 %+v", now.Stages, then.Stages)
	}
	if now.Stages[0].Gate != "none" || len(now.Header) == 0 || len(now.State) == 0 {
		t.Fatalf("show: %+v", now)
	}
}

// log filters: heartbeats only when asked, by type and stage, the last N; a stage the
// run lacks is not found, a negative N is refused.
func TestLogFilters(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "code")
	f.dispatch("code")
	if _, err := f.ops.Heartbeat(f.ctx, HeartbeatRequest{Run: "r1", Stage: "code", Driver: d1}); err != nil {
		t.Fatal(err)
	}
	types := func(req LogRequest) string {
		t.Helper()
		req.Run = "r1"
		res, err := f.ops.Log(f.ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Events) != len(res.Kept) || res.RunID != "r1" {
			t.Fatalf("log: %+v", res)
		}
		var s []string
		for _, e := range res.Kept {
			s = append(s, string(e.Type))
		}
		return strings.Join(s, ",")
	}
	all := types(LogRequest{})
	if strings.Contains(all, "heartbeat") || !strings.HasPrefix(all, "run_started,") {
		t.Fatalf("default log: %s", all)
	}
	if got := types(LogRequest{Heartbeats: true}); got != all+",heartbeat" {
		t.Fatalf("with heartbeats: %s", got)
	}
	if got := types(LogRequest{Type: "heartbeat"}); got != "heartbeat" {
		t.Fatalf("--type heartbeat: %s", got)
	}
	if got := types(LogRequest{Last: 1, Heartbeats: true}); got != "heartbeat" {
		t.Fatalf("--last 1: %s", got)
	}
	if got := types(LogRequest{Stage: "code"}); got == "" || strings.Contains(got, "run_started") {
		t.Fatalf("--stage code: %s", got)
	}
	if _, err := f.ops.Log(f.ctx, LogRequest{Run: "r1", Stage: "nope"}); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("unknown stage: %v", err)
	}
	if _, err := f.ops.Log(f.ctx, LogRequest{Run: "r1", Last: -1}); !errors.Is(err, fault.ErrUsage) {
		t.Fatalf("negative --last: %v", err)
	}
}
