package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A push the remote declines by policy (its pre-receive hook, an update hook)
// is ErrPushDeclined with the remote's message, not ErrPushRejected (a lost lease,
// which a writer retries); a stale lease stays ErrPushRejected with the hook in place.
func TestPushAtomicDeclined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	remote := filepath.Join(t.TempDir(), "remote.git")
	g("", "init", "-q", "--bare", remote)
	g("", "remote", "add", "origin", remote)
	first := g("", "rev-parse", "HEAD")
	if err := r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: first}}); err != nil {
		t.Fatal(err)
	}
	g("", "commit", "-q", "--allow-empty", "-m", "second")
	second := g("", "rev-parse", "HEAD")

	// A stale lease is a race even where a hook would decline: git rejects it first.
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'closed: ask the owner' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: second, Expect: second}})
	if !errors.Is(err, ErrPushRejected) || errors.Is(err, ErrPushDeclined) {
		t.Fatalf("stale lease: err = %v, want ErrPushRejected", err)
	}
	err = r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: second, Expect: first}, {Name: "refs/atlas/runs/b", ID: first}})
	var d *PushDeclinedError
	if !errors.As(err, &d) || errors.Is(err, ErrPushRejected) {
		t.Fatalf("hook: err = %v, want a PushDeclinedError", err)
	}
	if d.Message != "closed: ask the owner" || len(d.Refs) != 2 || !strings.Contains(d.Refs[0], "pre-receive hook declined") {
		t.Fatalf("declined: %+v", d)
	}

	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	// An update hook that declines one ref of two: the other fails with the atomic
	// push, and the push is declined.
	update := filepath.Join(remote, "hooks", "update")
	if err := os.WriteFile(update, []byte("#!/bin/sh\n[ \"$1\" = refs/atlas/runs/b ] && { echo 'b is protected' >&2; exit 1; }\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: second, Expect: first}, {Name: "refs/atlas/runs/b", ID: first}})
	if !errors.As(err, &d) || !strings.HasPrefix(d.Message, "b is protected\n") {
		t.Fatalf("update hook: err = %v, want a PushDeclinedError saying b is protected", err)
	}
	if got, _ := r.LsRemote(ctx, "origin", "refs/atlas/"); len(got) != 1 || got[0].ID != first {
		t.Fatalf("after declined pushes the remote has %v, want only a at %s", got, first)
	}
}

// byPolicy: git's own rejections and a remote's lock or transaction failures are
// races; every other refusal of the remote is its policy.
func TestPushByPolicy(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]bool{
		"[rejected] (stale info)":                            false,
		"[rejected] (fetch first)":                           false,
		"[rejected] (non-fast-forward)":                      false,
		"[rejected] (atomic push failed)":                    false,
		"[remote rejected] (failed to update ref)":           false,
		"[remote rejected] (atomic transaction failed)":      false,
		"[remote rejected] (atomic push failure)":            false,
		"[remote rejected] (pre-receive hook declined)":      true,
		"[remote rejected] (hook declined)":                  true,
		"[remote rejected] (protected branch hook declined)": true,
		"[remote rejected] (deletion prohibited)":            true,
		"[remote rejected] (deny updating a hidden ref)":     true,
	} {
		if got := byPolicy(status); got != want {
			t.Errorf("byPolicy(%q) = %v, want %v", status, got, want)
		}
	}
}

// A leased, atomic push moves every ref or none: one stale lease (the remote is not at
// the expected tip, or a must-not-exist ref exists) rejects the whole push.
func TestPushAtomicLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	remote := filepath.Join(t.TempDir(), "remote.git")
	g("", "init", "-q", "--bare", remote)
	g("", "remote", "add", "origin", remote)
	first := g("", "rev-parse", "HEAD")
	g("", "commit", "-q", "--allow-empty", "-m", "second")
	second := g("", "rev-parse", "HEAD")
	g("", "commit", "-q", "--allow-empty", "-m", "third")
	third := g("", "rev-parse", "HEAD")

	if err := r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: first}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.LsRemote(ctx, "origin", "refs/atlas/")
	if err != nil || len(got) != 1 || got[0].ID != first {
		t.Fatalf("LsRemote = %v, %v", got, err)
	}
	// b would be created, but a's lease says "must not exist": nothing moves.
	err = r.PushAtomic(ctx, "origin", []PushRef{
		{Name: "refs/atlas/runs/b", ID: first},
		{Name: "refs/atlas/runs/a", ID: second},
	})
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("stale must-not-exist lease: err = %v, want ErrPushRejected", err)
	}
	// A stale expected tip is rejected too.
	err = r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: third, Expect: second}})
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("stale lease: err = %v, want ErrPushRejected", err)
	}
	got, _ = r.LsRemote(ctx, "origin", "refs/atlas/")
	if len(got) != 1 || got[0].ID != first {
		t.Fatalf("after rejected pushes the remote has %v, want only a at %s", got, first)
	}
	// The right lease moves it.
	if err := r.PushAtomic(ctx, "origin", []PushRef{{Name: "refs/atlas/runs/a", ID: second, Expect: first}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.IsAncestor(ctx, mustOID(t, first), mustOID(t, second)); !ok || err != nil {
		t.Fatalf("IsAncestor(first, second) = %v, %v", ok, err)
	}
	if ok, _ := r.IsAncestor(ctx, mustOID(t, second), mustOID(t, first)); ok {
		t.Fatal("IsAncestor(second, first) = true")
	}
	if ok, err := r.IsAncestor(ctx, mustOID(t, "1111111111111111111111111111111111111111"), mustOID(t, first)); ok || err != nil {
		t.Fatalf("IsAncestor(missing, first) = %v, %v", ok, err)
	}
}

// Remotes reads `git remote`'s list from the configuration listing: the same names,
// order and duplicates dropped, and git is asked for a name git warns about.
func TestRemotesAgreeWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	for _, kv := range [][2]string{
		{"remote.origin.url", "/x"}, {"remote.origin.pushurl", "/y"}, {"remote.Up.fetch", "+refs/heads/*:refs/remotes/Up/*"},
		{"remote.a.b.url", "/z"}, {"remote.pushDefault", "origin"}, {"branch.main.remote", "origin"}, {"remote.-dash.skipDefaultUpdate", "true"},
	} {
		g("", "config", "--add", kv[0], kv[1])
	}
	r.ReloadConfig()
	r.configIn(ctx, r.CommonDir)
	before := Started()
	names, err := r.Remotes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if Started() != before {
		t.Fatal("Remotes asked git although the configuration was read")
	}
	if got, want := strings.Join(names, "\n"), g("", "remote"); got != want {
		t.Fatalf("Remotes = %q, git remote = %q", got, want)
	}
	g("", "config", "remote./odd.url", "/w")
	r.ReloadConfig()
	r.configIn(ctx, r.CommonDir)
	before = Started()
	names, err = r.Remotes(ctx)
	if err != nil || Started() == before {
		t.Fatalf("a name git warns about: %v, asked git %v", err, Started() != before)
	}
	if got, want := strings.Join(names, "\n"), g("", "remote"); got != want {
		t.Fatalf("Remotes = %q, git remote = %q", got, want)
	}
}

// Contains answers from loose commits as `merge-base --is-ancestor` does, over a
// history with a merge, and asks git where the walk is not certain: a packed commit,
// a shallow file. Not parallel: it counts git processes.
func TestContainsAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	root, commit := commits(t, r, g)
	a := commit("a", root)
	b := commit("b", root)
	m := commit("m", a, b)
	c := commit("c", m)
	all := []OID{root, a, b, m, c}
	for _, x := range all {
		for _, y := range all {
			_, err := runGit(r.CommonDir, nil, "", "merge-base", "--is-ancestor", x.String(), y.String())
			want := err == nil
			before := Started()
			got, gerr := r.Contains(ctx, y, x)
			if gerr != nil || got != want || Started() != before {
				t.Fatalf("Contains(%s, %s) = %v, %v with %d git processes; git says %v", y, x, got, gerr, Started()-before, want)
			}
		}
	}
	for _, c := range []struct {
		name string
		do   func()
	}{
		{"shallow", func() {
			if err := os.WriteFile(filepath.Join(r.CommonDir, "shallow"), []byte(root.String()+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"packed", func() {
			if err := os.Remove(filepath.Join(r.CommonDir, "shallow")); err != nil {
				t.Fatal(err)
			}
			g("", "update-ref", "refs/atlas/keep", c.String())
			g("", "repack", "-a", "-d", "-q")
		}},
	} {
		c.do()
		before := Started()
		if got, err := r.Contains(ctx, m, a); !got || err != nil || Started() == before {
			t.Fatalf("%s: Contains(m, a) = %v, %v, asked git %v", c.name, got, err, Started() != before)
		}
	}
}
