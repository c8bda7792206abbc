package ledger

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// graph is a run with jobs a, b (needs a), c (needs b) and d (independent).
func graph(t *testing.T) (*Header, *State) {
	t.Helper()
	h := &Header{RunID: "r", Kind: KindGraph, MaxAttempts: 2}
	s := &State{RunID: "r", Status: RunRunning}
	if err := AddJobs(s, []JobSpec{{ID: "a"}, {ID: "b", Needs: []string{"a"}}, {ID: "c", Needs: []string{"b"}}, {ID: "d"}}); err != nil {
		t.Fatal(err)
	}
	return h, s
}

func claim(t *testing.T, h *Header, s *State, id string) string {
	t.Helper()
	g, err := Claim(h, s, id, "w", t0, time.Minute, "5eed")
	if err != nil || g.Job == nil {
		t.Fatalf("claim %s: %+v, %v", id, g, err)
	}
	return g.Lease
}

func done(t *testing.T, h *Header, s *State, id, tok, status string) {
	t.Helper()
	if _, err := Done(h, s, id, tok, status, nil); err != nil {
		t.Fatalf("done %s %s: %v", id, status, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

type jobWant struct {
	state    string
	attempts int
	lease    string
}

// TestJobMachine checks every row of docs/contract.md §5.3, and that every refused action leaves
// the state byte for byte as it was.
func TestJobMachine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, h *Header, s *State)
		act     func(h *Header, s *State) error
		wantErr error // fault kind; nil = success
		jobs    map[string]jobWant
		gas     int // gas spent afterwards
		epoch   int
	}{
		{
			name: "claim: PENDING -> RUNNING, one gas, attempts unchanged, token job#attempts@epoch.nonce",
			act: func(h *Header, s *State) error {
				g, err := Claim(h, s, "", "w1", t0, time.Minute, "5eed")
				if err == nil && (g.Job.ID != "a" || g.Lease != "a#0@0.5eed" || g.ExpiresAt != Stamp(t0.Add(time.Minute)) || g.Job.Holder != "w1") {
					return errors.New("bad grant " + js(g))
				}
				return err
			},
			jobs: map[string]jobWant{"a": {JobRunning, 0, "a#0@0.5eed"}, "b": {JobPending, 0, ""}},
			gas:  1,
		},
		{
			name:  "claim: the token carries attempts and epoch",
			setup: func(t *testing.T, h *Header, s *State) { s.Epoch = 3; s.Job("d").Attempts = 1 },
			act:   func(h *Header, s *State) error { _, err := Claim(h, s, "d", "", t0, time.Minute, "5eed"); return err },
			jobs:  map[string]jobWant{"d": {JobRunning, 1, "d#1@3.5eed"}},
			gas:   1, epoch: 3,
		},
		{
			name:    "claim: a job whose needs are not DONE is refused",
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "b", "", t0, time.Minute, "5eed"); return err },
			wantErr: fault.ErrRefused,
		},
		{
			name:    "claim: a RUNNING job is refused",
			setup:   func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "a", "", t0, time.Minute, "5eed"); return err },
			wantErr: fault.ErrRefused,
		},
		{
			name:    "claim: a DONE job is refused",
			setup:   func(t *testing.T, h *Header, s *State) { done(t, h, s, "a", claim(t, h, s, "a"), ReceiptOK) },
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "a", "", t0, time.Minute, "5eed"); return err },
			wantErr: fault.ErrRefused,
		},
		{
			name:    "claim: a job past its attempt limit is refused",
			setup:   func(t *testing.T, h *Header, s *State) { s.Job("d").Attempts = 2 },
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "d", "", t0, time.Minute, "5eed"); return err },
			wantErr: fault.ErrRefused,
		},
		{
			name:    "claim: unknown job",
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "zz", "", t0, time.Minute, "5eed"); return err },
			wantErr: fault.ErrNotFound,
		},
		{
			name:    "claim: ttl must be positive",
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "", "", t0, 0, "5eed"); return err },
			wantErr: fault.ErrUsage,
		},
		{
			name:    "claim: a named job with no gas left is refused",
			setup:   func(t *testing.T, h *Header, s *State) { h.Gas = 1; s.GasSpent = 1 },
			act:     func(h *Header, s *State) error { _, err := Claim(h, s, "a", "", t0, time.Minute, "5eed"); return err },
			wantErr: fault.ErrRefused,
		},
		{
			// b would be ready; d still runs, but no claim can ever be granted again.
			name: "claim: no gas grants nothing, reason gas_exhausted (before waiting)",
			setup: func(t *testing.T, h *Header, s *State) {
				h.Gas = 2
				done(t, h, s, "a", claim(t, h, s, "a"), ReceiptOK)
				claim(t, h, s, "d")
			},
			act:  func(h *Header, s *State) error { return wantReason(h, s, ReasonGasExhausted) },
			gas:  2,
			jobs: map[string]jobWant{"a": {JobDone, 0, ""}, "b": {JobPending, 0, ""}, "d": {JobRunning, 0, "d#0@0.5eed"}},
		},
		{
			name:  "claim: nothing ready while jobs run: waiting",
			setup: func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a"); claim(t, h, s, "d") },
			act:   func(h *Header, s *State) error { return wantReason(h, s, ReasonWaiting) },
			gas:   2,
		},
		{
			name: "claim: every job ended (DONE or FAILED): finished, not halted",
			setup: func(t *testing.T, h *Header, s *State) {
				done(t, h, s, "a", claim(t, h, s, "a"), ReceiptFailed)
				done(t, h, s, "d", claim(t, h, s, "d"), ReceiptOK)
			},
			act:  func(h *Header, s *State) error { return wantReason(h, s, ReasonFinished) },
			gas:  2,
			jobs: map[string]jobWant{"a": {JobFailed, 0, ""}, "b": {JobFailed, 0, ""}, "c": {JobFailed, 0, ""}, "d": {JobDone, 0, ""}},
		},
		{
			name:  "receipt ok: RUNNING -> DONE, lease cleared, dependents ready",
			setup: func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act: func(h *Header, s *State) error {
				if _, err := Done(h, s, "a", "a#0@0.5eed", ReceiptOK, json.RawMessage(`{"sha":"1"}`)); err != nil {
					return err
				}
				if r := Ready(h, s); strings.Join(r, ",") != "b,d" || string(s.Job("a").Result) != `{"sha":"1"}` {
					return errors.New("ready after a: " + strings.Join(r, ","))
				}
				return nil
			},
			jobs: map[string]jobWant{"a": {JobDone, 0, ""}},
			gas:  1,
		},
		{
			name:  "receipt timeout under the limit: RUNNING -> PENDING, attempts + 1, no gas refund",
			setup: func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act: func(h *Header, s *State) error {
				_, err := Done(h, s, "a", "a#0@0.5eed", ReceiptTimeout, nil)
				return err
			},
			jobs: map[string]jobWant{"a": {JobPending, 1, ""}},
			gas:  1,
		},
		{
			name: "receipt timeout at the limit: RUNNING -> FAILED, dependents fail too",
			setup: func(t *testing.T, h *Header, s *State) {
				done(t, h, s, "a", claim(t, h, s, "a"), ReceiptTimeout)
				claim(t, h, s, "a")
			},
			act: func(h *Header, s *State) error {
				_, err := Done(h, s, "a", "a#1@0.5eed", ReceiptTimeout, nil)
				return err
			},
			jobs: map[string]jobWant{"a": {JobFailed, 2, ""}, "b": {JobFailed, 0, ""}, "c": {JobFailed, 0, ""}, "d": {JobPending, 0, ""}},
			gas:  2,
		},
		{
			name:  "max attempts 1: the first timeout fails the job",
			setup: func(t *testing.T, h *Header, s *State) { h.MaxAttempts = 1; claim(t, h, s, "d") },
			act: func(h *Header, s *State) error {
				_, err := Done(h, s, "d", "d#0@0.5eed", ReceiptTimeout, nil)
				return err
			},
			jobs: map[string]jobWant{"d": {JobFailed, 1, ""}},
			gas:  1,
		},
		{
			name:  "receipt failed: RUNNING -> FAILED at any attempt",
			setup: func(t *testing.T, h *Header, s *State) { claim(t, h, s, "d") },
			act: func(h *Header, s *State) error {
				_, err := Done(h, s, "d", "d#0@0.5eed", ReceiptFailed, nil)
				return err
			},
			jobs: map[string]jobWant{"d": {JobFailed, 0, ""}},
			gas:  1,
		},
		{
			name: "stale token (older attempt) changes nothing",
			setup: func(t *testing.T, h *Header, s *State) {
				done(t, h, s, "a", claim(t, h, s, "a"), ReceiptTimeout)
				claim(t, h, s, "a")
			},
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "a", "a#0@0.5eed", ReceiptOK, nil); return err },
			wantErr: fault.ErrConflict,
		},
		{
			name: "stale token (older epoch) changes nothing",
			setup: func(t *testing.T, h *Header, s *State) {
				claim(t, h, s, "a")
				ResumeReset(s)
				s.Epoch++
				claim(t, h, s, "a")
			},
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "a", "a#0@0.5eed", ReceiptOK, nil); return err },
			wantErr: fault.ErrConflict,
		},
		{
			name:    "a receipt for a PENDING job is stale",
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "a", "a#0@0.5eed", ReceiptOK, nil); return err },
			wantErr: fault.ErrConflict,
		},
		{
			name:  "a second receipt with the same token is stale",
			setup: func(t *testing.T, h *Header, s *State) { done(t, h, s, "d", claim(t, h, s, "d"), ReceiptOK) },
			act: func(h *Header, s *State) error {
				_, err := Done(h, s, "d", "d#0@0.5eed", ReceiptFailed, nil)
				return err
			},
			wantErr: fault.ErrConflict,
		},
		{
			name:    "another job's token is stale",
			setup:   func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a"); claim(t, h, s, "d") },
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "a", "d#0@0.5eed", ReceiptOK, nil); return err },
			wantErr: fault.ErrConflict,
		},
		{
			name:    "malformed token",
			setup:   func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "a", "a#0", ReceiptOK, nil); return err },
			wantErr: fault.ErrUsage,
		},
		{
			name:    "receipt for an unknown job",
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "zz", "zz#0@0.5eed", ReceiptOK, nil); return err },
			wantErr: fault.ErrNotFound,
		},
		{
			name:    "unknown receipt status",
			setup:   func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act:     func(h *Header, s *State) error { _, err := Done(h, s, "a", "a#0@0.5eed", "maybe", nil); return err },
			wantErr: fault.ErrUsage,
		},
		{
			name:  "renew extends the current lease",
			setup: func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act: func(h *Header, s *State) error {
				if err := Renew(s, "a", "a#0@0.5eed", t0.Add(time.Hour), time.Minute); err != nil {
					return err
				}
				if s.Job("a").ExpiresAt != Stamp(t0.Add(time.Hour+time.Minute)) {
					return errors.New("not renewed")
				}
				return nil
			},
			jobs: map[string]jobWant{"a": {JobRunning, 0, "a#0@0.5eed"}},
			gas:  1,
		},
		{
			name: "renew with a stale token changes nothing",
			setup: func(t *testing.T, h *Header, s *State) {
				done(t, h, s, "a", claim(t, h, s, "a"), ReceiptTimeout)
				claim(t, h, s, "a")
			},
			act:     func(h *Header, s *State) error { return Renew(s, "a", "a#0@0.5eed", t0, time.Minute) },
			wantErr: fault.ErrConflict,
		},
		{
			name:    "renew needs a positive ttl",
			setup:   func(t *testing.T, h *Header, s *State) { claim(t, h, s, "a") },
			act:     func(h *Header, s *State) error { return Renew(s, "a", "a#0@0.5eed", t0, -time.Second) },
			wantErr: fault.ErrUsage,
		},
		{
			name: "reap: an expired lease takes the timeout transition, a live one is kept",
			setup: func(t *testing.T, h *Header, s *State) {
				claim(t, h, s, "a")
				if _, err := Claim(h, s, "d", "", t0, time.Hour, "5eed"); err != nil {
					t.Fatal(err)
				}
			},
			act: func(h *Header, s *State) error {
				out := Reap(h, s, t0.Add(time.Minute)) // exactly at a's expiry
				if len(out) != 1 || out[0].ID != "a" || out[0].Lease != "a#0@0.5eed" || out[0].To != JobPending {
					return errors.New("reaped " + js(out))
				}
				return nil
			},
			jobs: map[string]jobWant{"a": {JobPending, 1, ""}, "d": {JobRunning, 0, "d#0@0.5eed"}},
			gas:  2,
		},
		{
			name: "reap at the attempt limit fails the job and its dependents",
			setup: func(t *testing.T, h *Header, s *State) {
				done(t, h, s, "a", claim(t, h, s, "a"), ReceiptTimeout)
				claim(t, h, s, "a")
			},
			act: func(h *Header, s *State) error {
				out := Reap(h, s, t0.Add(time.Hour))
				if len(out) != 1 || strings.Join(out[0].Cascaded, ",") != "b,c" {
					return errors.New("reaped " + js(out))
				}
				return nil
			},
			jobs: map[string]jobWant{"a": {JobFailed, 2, ""}, "b": {JobFailed, 0, ""}, "c": {JobFailed, 0, ""}},
			gas:  2,
		},
		{
			name: "resume reset: RUNNING -> PENDING, lease cleared, attempts and gas unchanged",
			setup: func(t *testing.T, h *Header, s *State) {
				s.Job("d").Attempts = 1
				claim(t, h, s, "a")
				claim(t, h, s, "d")
			},
			act: func(h *Header, s *State) error {
				if ids := ResumeReset(s); strings.Join(ids, ",") != "a,d" {
					return errors.New("reset " + strings.Join(ids, ","))
				}
				s.Epoch++
				return nil
			},
			jobs:  map[string]jobWant{"a": {JobPending, 0, ""}, "d": {JobPending, 1, ""}},
			gas:   2,
			epoch: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, s := graph(t)
			if tc.setup != nil {
				tc.setup(t, h, s)
			}
			before := mustJSON(t, s)
			err := tc.act(h, s)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
			} else {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want kind %v", err, tc.wantErr)
				}
				if after := mustJSON(t, s); after != before {
					t.Fatalf("a refused action changed the state:\nbefore %s\nafter  %s", before, after)
				}
				return
			}
			for id, w := range tc.jobs {
				j := s.Job(id)
				if j.State != w.state || j.Attempts != w.attempts || j.Lease != w.lease {
					t.Errorf("job %s = %s attempts %d lease %q, want %s %d %q", id, j.State, j.Attempts, j.Lease, w.state, w.attempts, w.lease)
				}
				if j.State != JobRunning && (j.Holder != "" || j.ExpiresAt != "") {
					t.Errorf("job %s is %s but keeps holder %q / expiry %q", id, j.State, j.Holder, j.ExpiresAt)
				}
			}
			if s.GasSpent != tc.gas {
				t.Errorf("gas spent %d, want %d", s.GasSpent, tc.gas)
			}
			if s.Epoch != tc.epoch {
				t.Errorf("epoch %d, want %d", s.Epoch, tc.epoch)
			}
		})
	}
}

// wantReason claims with nothing to grant and checks the reason and that the state
// did not change.
func wantReason(h *Header, s *State, reason string) error {
	before, _ := json.Marshal(s)
	g, err := Claim(h, s, "", "", t0, time.Minute, RandomNonce())
	if err != nil {
		return err
	}
	after, _ := json.Marshal(s)
	if g.Job != nil || g.Lease != "" || g.Reason != reason || string(before) != string(after) {
		return errors.New("claim gave " + js(g) + ", want reason " + reason)
	}
	return nil
}

func TestAddJobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		specs   []JobSpec
		wantErr error
	}{
		{"independent and dependent", []JobSpec{{ID: "x"}, {ID: "y", Needs: []string{"x", "a"}}}, nil},
		{"a batch may name later jobs", []JobSpec{{ID: "y", Needs: []string{"x"}}, {ID: "x"}}, nil},
		{"duplicate of an existing job", []JobSpec{{ID: "a"}}, fault.ErrConflict},
		{"duplicate within the batch", []JobSpec{{ID: "x"}, {ID: "x"}}, fault.ErrConflict},
		{"a job needing itself", []JobSpec{{ID: "x", Needs: []string{"x"}}}, fault.ErrUsage},
		{"a cycle in the batch", []JobSpec{{ID: "x", Needs: []string{"z"}}, {ID: "y", Needs: []string{"x"}}, {ID: "z", Needs: []string{"y", "a"}}}, fault.ErrUsage},
		{"unknown need", []JobSpec{{ID: "x", Needs: []string{"nope"}}}, fault.ErrNotFound},
		{"invalid name", []JobSpec{{ID: "x/y"}}, fault.ErrUsage},
		{"invalid need name", []JobSpec{{ID: "x", Needs: []string{"a..b"}}}, fault.ErrUsage},
		{"a need named twice", []JobSpec{{ID: "x", Needs: []string{"a", "a"}}}, fault.ErrUsage},
		{"a need on a FAILED job", []JobSpec{{ID: "x", Needs: []string{"failed"}}}, fault.ErrRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, s := graph(t)
			if err := AddJobs(s, []JobSpec{{ID: "failed"}}); err != nil {
				t.Fatal(err)
			}
			done(t, h, s, "failed", claim(t, h, s, "failed"), ReceiptFailed)
			before := mustJSON(t, s)
			err := AddJobs(s, tc.specs)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Jobs) != 5+len(tc.specs) {
					t.Fatalf("%d jobs", len(s.Jobs))
				}
				for _, j := range s.Jobs[5:] {
					if j.State != JobPending || j.Needs == nil {
						t.Fatalf("added %+v", j)
					}
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want kind %v", err, tc.wantErr)
			}
			if mustJSON(t, s) != before {
				t.Fatal("a refused add changed the state")
			}
		})
	}
}

func TestGasLimit(t *testing.T) {
	t.Parallel()
	h, s := graph(t)
	if got := GasLimit(h, s); got != 4*2+4 {
		t.Fatalf("default gas %d, want 12", got)
	}
	h.MaxAttempts = 0 // default 2
	if got := GasLimit(h, s); got != 12 {
		t.Fatalf("default gas with default attempts %d", got)
	}
	h.Gas = 3
	s.GasSpent = 5 // more than the limit: remaining is 0, never negative
	if GasLimit(h, s) != 3 || GasRemaining(h, s) != 0 || Ready(h, s) != nil {
		t.Fatalf("limit %d remaining %d ready %v", GasLimit(h, s), GasRemaining(h, s), Ready(h, s))
	}
}

func TestLeaseToken(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"a#0@0", "job.x-1_2#3@14", "a#0@0.1f2e3d4c", "job.x-1_2#3@14.0"} {
		job, at, ep, nonce, err := ParseLeaseToken(tok)
		if err != nil || LeaseToken(job, at, ep, nonce) != tok {
			t.Fatalf("%s: %q %d %d %q %v", tok, job, at, ep, nonce, err)
		}
	}
	for _, tok := range []string{"", "a", "a#1", "a@1", "a#1@", "#1@1", "a#01@1", "a#1@-1", "a#+1@1", "a#1@1x", "a/b#1@1", "a# 1@1", "a#b#1@2", "a@b#1@2",
		"a#1@1.", "a#1@.ab", "a#1@1.AB", "a#1@1.xyz", "a#1@1.ab.cd", "a#1@1.ab cd", "a#1@1." + strings.Repeat("a", 33)} {
		if _, _, _, _, err := ParseLeaseToken(tok); !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%q: %v, want a usage error", tok, err)
		}
	}
}

// Two clones that claim the same job from the same ledger before they sync hold two
// different tokens; once one side's ledger is kept, only its holder's receipt counts.
func TestLeaseTokensOfTwoClonesDiffer(t *testing.T) {
	t.Parallel()
	h := &Header{RunID: "g", Kind: KindGraph}
	s := &State{RunID: "g", Status: RunRunning}
	if err := AddJobs(s, []JobSpec{{ID: "x"}}); err != nil {
		t.Fatal(err)
	}
	mine, theirs := cloneState(t, s), cloneState(t, s)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gMine, err := Claim(h, mine, "", "me", now, time.Hour, RandomNonce())
	if err != nil {
		t.Fatal(err)
	}
	gTheirs, err := Claim(h, theirs, "", "them", now, time.Hour, RandomNonce())
	if err != nil {
		t.Fatal(err)
	}
	if gMine.Lease == gTheirs.Lease {
		t.Fatalf("both clones got lease %s", gMine.Lease)
	}
	if !strings.HasPrefix(gMine.Lease, "x#0@0.") {
		t.Fatalf("lease %s lost its readable prefix", gMine.Lease)
	}
	// The remote's ledger (theirs) is kept: my worker's receipt is stale there.
	if _, err := Done(h, theirs, "x", gMine.Lease, ReceiptOK, nil); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("the other clone's receipt: %v, want a conflict", err)
	}
	if _, err := Done(h, theirs, "x", gTheirs.Lease, ReceiptOK, nil); err != nil {
		t.Fatalf("the real holder's receipt: %v", err)
	}
}

func cloneState(t *testing.T, s *State) *State {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var c State
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestCheckOverlap(t *testing.T) {
	t.Parallel()
	files := []string{"README", "docs.txt", "src/a.go", "src/b.go", "src/sub/c.go", "web/x.js"}
	scope := func(g ...string) []string {
		c, err := CanonicalScope(g)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s := &State{RunID: "r"}
	if err := AddJobs(s, []JobSpec{{ID: "src", Scope: scope("src/*.go")}, {ID: "any"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		scope []string
		want  string // "" = allowed; else a substring of the error
	}{
		{scope("web"), ""},
		{scope("src/sub"), ""},                    // src/*.go does not reach into sub/
		{nil, ""},                                 // an unscoped job claims no files
		{scope("lib/**"), ""},                     // matches no baseline file at all
		{scope("src/a.go"), "src/a.go"},           // bare file: canonicalised, still overlaps
		{scope("src"), "src/a.go, src/b.go"},      // bare dir: everything under it
		{scope("**/*.go"), "job src on files of"}, // names the other job
		{scope("{README,src/b.go}"), "src/b.go"},  // brace alternation
		{scope("src/{a,b}.go", "web/*"), "src/a.go"},
	}
	for _, tc := range tests {
		err := CheckOverlap(s, JobSpec{ID: "new", Scope: tc.scope}, files)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.scope, err)
			}
			continue
		}
		if !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want refused naming %q", tc.scope, err, tc.want)
		}
	}
	// At most ten paths are named.
	var many []string
	for i := range 25 {
		many = append(many, "src/f"+string(rune('a'+i))+".go")
	}
	err := CheckOverlap(s, JobSpec{ID: "new", Scope: scope("src")}, many)
	if err == nil || strings.Count(err.Error(), ".go") != 10 || !strings.Contains(err.Error(), "…") {
		t.Fatalf("%v", err)
	}
}

// docs/contract.md §15: a lease that ends other than DONE (a timeout receipt, a reap, a
// resume, a failed receipt, a failed verify) frees the job's block of ports in the
// same write; a job that ends DONE, or whose verify is still owed, keeps it.
func TestFencedLeaseReleasesPorts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fence func(h *Header, s *State, tok string)
		kept  bool
	}{
		{"timeout receipt", func(h *Header, s *State, tok string) { done(t, h, s, "a", tok, ReceiptTimeout) }, false},
		{"failed receipt", func(h *Header, s *State, tok string) { done(t, h, s, "a", tok, ReceiptFailed) }, false},
		{"reap", func(h *Header, s *State, _ string) { Reap(h, s, t0.Add(24*time.Hour)) }, false},
		{"resume", func(h *Header, s *State, _ string) { ResumeReset(s) }, false},
		{"failed verify", func(h *Header, s *State, tok string) {
			s.Job("a").Verify = "make test"
			done(t, h, s, "a", tok, ReceiptOK)
			if _, err := SettleVerify(h, s, "a", tok, &VerifyResult{Passed: false}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"ok receipt", func(h *Header, s *State, tok string) { done(t, h, s, "a", tok, ReceiptOK) }, true},
		{"verify owed", func(h *Header, s *State, tok string) {
			s.Job("a").Verify = "make test"
			done(t, h, s, "a", tok, ReceiptOK)
		}, true},
	} {
		h, s := graph(t)
		tok := claim(t, h, s, "a")
		s.Worktrees = []WorktreeRec{{Node: "a", Ports: []int{20000, 20001}}, {Node: "d", Ports: []int{20002, 20003}}}
		tc.fence(h, s, tok)
		if got := len(s.Worktree("a").Ports) > 0; got != tc.kept {
			t.Errorf("%s: a's ports %v, kept %v, want %v", tc.name, s.Worktree("a").Ports, got, tc.kept)
		}
		if len(s.Worktree("d").Ports) != 2 {
			t.Errorf("%s: d's ports went too: %v", tc.name, s.Worktree("d").Ports)
		}
	}
}
