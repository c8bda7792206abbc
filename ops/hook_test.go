package ops

import (
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
)

// TestPostCheckout: the hook's operation ignores a file checkout, records a managed
// worktree's HEAD leaving its branch once (as an observer: the driver lease stays
// d1's), and elsewhere reports the interrupted runs.
func TestPostCheckout(t *testing.T) {
	t.Parallel()
	f := newWTFixture(t, ledger.KindSingle, "plan")
	wt := f.add("plan", "a.txt")
	repo, err := git.Open(f.ctx, wt.Path)
	if err != nil {
		t.Fatal(err)
	}
	in := New(repo)
	branch := []string{"x", "y", "1"}

	if res, err := in.PostCheckout(f.ctx, CheckoutRequest{Args: branch}); err != nil || res.Run != "r1" || res.Node != "plan" || res.Untrusted {
		t.Fatalf("on its branch: %+v, %v; want run r1 node plan, not marked", res, err)
	}
	f.git(wt.Path, "checkout", "-q", "--detach")
	if res, err := in.PostCheckout(f.ctx, CheckoutRequest{Args: []string{"x", "y", "0"}}); err != nil || res.Run != "" || res.Untrusted {
		t.Fatalf("a file checkout: %+v, %v; want nothing done", res, err)
	}
	if res, err := in.PostCheckout(f.ctx, CheckoutRequest{Args: branch}); err != nil || !res.Untrusted {
		t.Fatalf("HEAD off its branch: %+v, %v; want marked untrusted", res, err)
	}
	if res, err := in.PostCheckout(f.ctx, CheckoutRequest{Args: branch}); err != nil || res.Untrusted {
		t.Fatalf("marked already: %+v, %v; want it recorded once", res, err)
	}
	r, err := f.ops.Reader().Load(f.ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if rec := r.State.Worktree("plan"); rec == nil || !rec.Untrusted {
		t.Fatalf("the record: %+v; want untrusted", rec)
	}
	log, err := f.ops.Log(f.ctx, LogRequest{Run: "r1", Type: string(ledger.EventWorktreeUntrusted)})
	if err != nil || len(log.Kept) != 1 {
		t.Fatalf("worktree_untrusted events: %v, %v; want 1", log, err)
	}
	if r.State.Driver == nil || r.State.Driver.Holder != "d1" {
		t.Fatalf("driver %+v; want d1's lease untouched by the hook", r.State.Driver)
	}

	f.update(func(r *ledger.Run) { r.State.Driver = nil }) // no live driver: interrupted
	res, err := f.ops.PostCheckout(f.ctx, CheckoutRequest{Args: branch})
	if err != nil || res.Run != "" || len(res.Interrupted) != 1 || res.Interrupted[0].RunID != "r1" {
		t.Fatalf("in the main checkout: %+v, %v; want r1 interrupted", res, err)
	}
}
