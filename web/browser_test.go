package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/git-atlas/git-atlas/internal/cli"
	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/ops"
	"github.com/git-atlas/git-atlas/web"
)

// browser is the path of a Chromium or Chrome, or "" (the test is then skipped).
func browser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestInBrowser drives headless Chromium through the DevTools protocol over the
// dashboard of a fixture: what a person sees on the runs page and a graph run's
// page, a snapshot's diff, a page that updates after a write by another git-atlas
// process, and hostile ledger text that stays text (no dialog ever opens). With
// ATLAS_WEB_SCREENSHOTS set to a directory, it saves web-runs.png and web-run.png
// there.
func TestInBrowser(t *testing.T) {
	path := browser()
	if path == "" {
		t.Skip("no Chromium or Chrome found on PATH (Debian: apt-get install chromium): the browser test is skipped")
	}
	repo := fixture(t)
	r, err := git.Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	const token = "browsertoken"
	s := web.New(ops.New(r), token, 20*time.Millisecond)
	s.Spell(cli.Spelling) // as `git atlas web` does: a person sees the command line's steps
	ts := httptest.NewServer(s)
	defer ts.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	var dialogs atomic.Int32
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		}
	}); err != nil {
		t.Fatal(err)
	}
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	shot := func(name string) {
		t.Helper()
		dir := os.Getenv("ATLAS_WEB_SCREENSHOTS")
		if dir == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	value := func(a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	list := func(js string) []string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// The runs page: the token visit sets the cookie; interrupted runs first.
	run(chromedp.Navigate(ts.URL+"/?token="+token), chromedp.WaitVisible(`table.runs`))
	order := list(`Array.from(document.querySelectorAll("tr.run")).map(e => e.dataset.run)`)
	intent := value(chromedp.Text(`tr[data-run="evil"] td.intent`))
	cookieJS := value(chromedp.Evaluate[string](`document.cookie`))
	run(chromedp.WaitVisible(`#live-dot.on`)) // the event stream is open
	shot("web-runs.png")
	if strings.Join(order, " ") != "evil old-stopped dag" {
		t.Errorf("the runs page lists %v, want the interrupted evil and old-stopped first", order)
	}
	if intent != hostile {
		t.Errorf("the hostile intent shows as %q, want the text %q", intent, hostile)
	}
	if cookieJS != "" {
		t.Errorf("the token cookie is readable by scripts: %q", cookieJS)
	}

	// Another process writes the ledger: the page shows the new run without a reload.
	cmd := exec.Command(testenv.Command(t), "-C", repo, "start", "--id", "fresh", "--stages", "a", "--intent", "started elsewhere")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git atlas start: %v\n%s", err, out)
	}
	run(chromedp.WaitVisible(`tr[data-run="fresh"]`))
	if u, err := chromedp.Run(ctx, chromedp.AttributeValue(`body`, "data-updates")); err != nil || !u.Exists {
		t.Errorf("the new run appeared, but not through the live update (%v)", err)
	}

	// A graph run's page: the DAG's nodes with their states.
	run(chromedp.Navigate(ts.URL+"/runs/dag"), chromedp.WaitVisible(`svg.dag`))
	nodes := list(`Array.from(document.querySelectorAll("svg.dag g.node")).map(g => g.dataset.job + "=" + g.textContent)`)
	next := value(chromedp.Text(`pre.json`))
	shot("web-run.png")
	if !strings.Contains(next, "`git atlas resume dag --take-over --holder <holder>`") {
		t.Errorf("the next action does not read as the command line's: %q", next)
	}
	want := map[string]string{"a": "DONE", "b": "RUNNING", "a1": "PENDING (ready)", "a2": "PENDING"}
	if len(nodes) != len(want) {
		t.Errorf("the DAG draws %v", nodes)
	}
	for _, n := range nodes {
		id, text, _ := strings.Cut(n, "=")
		if w, ok := want[id]; !ok || !strings.Contains(text, w) {
			t.Errorf("node %s reads %q, want its state %q", id, text, w)
		}
	}

	// A run's snapshot: its diff is there; the hostile texts are text.
	run(chromedp.Navigate(ts.URL+"/runs/evil"), chromedp.WaitVisible(`pre.diff`))
	diff := value(chromedp.Text(`pre.diff`))
	reason := value(chromedp.Text(`li.stage.status-dispatched`))
	if !strings.Contains(diff, "+hello from the snapshot") {
		t.Errorf("the snapshot's diff reads %q", diff)
	}
	if !strings.Contains(reason, hostile) {
		t.Errorf("the stage's reason reads %q", reason)
	}
	if n := dialogs.Load(); n != 0 {
		t.Fatalf("%d dialogs opened: ledger text ran as script", n)
	}
	// The listener does see a dialog when one opens (the check above can fail).
	value(chromedp.Evaluate[string](`setTimeout(() => alert("probe"), 0); "ok"`))
	deadline := time.Now().Add(30 * time.Second)
	for dialogs.Load() == 0 && time.Now().Before(deadline) {
		value(chromedp.Evaluate[string](`"ok"`))
	}
	if dialogs.Load() != 1 {
		t.Errorf("the dialog listener saw %d dialogs after a probe alert", dialogs.Load())
	}
}
