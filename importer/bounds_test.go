package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// A source file that is not a regular file is refused, never read: a symbolic link
// to /dev/zero (read unbounded: out of memory), a FIFO (opening or reading it
// blocks), a directory where a file is expected. A regular file over the cap is
// refused before it is read. Each comes back as a problem saying why, and the other
// runs are still imported.
func TestSourceFilesBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const ok = `{"run_id":"%s","created_ts":"2026-07-01T11:00:00Z","current_state":"OUTPUT","stages":{}}`
	write(t, dir, map[string]string{
		"good/state.json":   strings.ReplaceAll(ok, "%s", "good"),
		"zero/state.json":   strings.ReplaceAll(ok, "%s", "zero"),
		"fifo/state.json":   strings.ReplaceAll(ok, "%s", "fifo"),
		"big/state.json":    strings.ReplaceAll(ok, "%s", "big"),
		"linked/elsewhere":  strings.ReplaceAll(ok, "%s", "linked"),
		"dirlog/state.json": strings.ReplaceAll(ok, "%s", "dirlog"),
	})
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero/log.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo/log.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(dir, "linked/state.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dirlog/log.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big/plan.dag.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk is used.
	if err := big.Truncate(MaxSourceFile + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	plans, probs, err := ScanKimi(t.Context(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].RunID != "good" {
		t.Errorf("plans: %d, want the good run alone", len(plans))
	}
	want := map[string]string{
		"zero/log.jsonl":    "is a symbolic link: import reads regular files only",
		"fifo/log.jsonl":    "is a FIFO: import reads regular files only",
		"linked/state.json": "is a symbolic link: import reads regular files only",
		"dirlog/log.jsonl":  "is a directory: import reads regular files only",
		"big/plan.dag.json": "is 67108865 bytes, over the 64 MiB cap of one source file",
	}
	got := map[string]Problem{}
	for _, p := range probs {
		rel, _ := filepath.Rel(dir, p.Path)
		got[rel] = p
	}
	for file, reason := range want {
		p, ok := got[file]
		if !ok || !strings.Contains(p.Reason, reason) {
			t.Errorf("problem for %s = %q, want it to say %q", file, p.Reason, reason)
			continue
		}
		if !errors.Is(p.Err, fault.ErrRefused) {
			t.Errorf("problem for %s: %v, want a refusal (exit 5)", file, p.Err)
		}
	}
	if len(probs) != len(want) {
		t.Errorf("problems: %+v, want %d", probs, len(want))
	}
}

// AgenTeam's files are read the same way.
func TestAgenTeamFilesBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"state/r.json": `{"run_id":"r","started_at":"2026-07-02T09:00:00Z","status":"running","stages":{"a":{"status":"pending"}}}`})
	if err := os.MkdirAll(filepath.Join(dir, "events"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "events/r.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "state/z.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "state/d.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	plans, probs, err := ScanAgenTeam(t.Context(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 0 || len(probs) != 3 {
		t.Fatalf("plans %d, problems %+v: want all three runs refused", len(plans), probs)
	}
	for _, p := range probs {
		if !strings.Contains(p.Reason, "import reads regular files only") || !errors.Is(p.Err, fault.ErrRefused) {
			t.Errorf("problem %s: %q", p.Path, p.Reason)
		}
	}
}

// A read that does not end (a stalled file system; here a pipe nobody writes to) is
// given up when the context is cancelled, as SIGTERM cancels it, and after the
// timeout otherwise; a reader that grows past the cap is refused.
func TestReadBoundedGivesUp(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := readBounded(ctx, r, "p", MaxSourceFile, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if _, err := readBounded(t.Context(), r, "p", MaxSourceFile, time.Nanosecond); err == nil || !strings.Contains(err.Error(), "no end after") {
		t.Errorf("timed out: %v", err)
	}
	if _, err := readBounded(t.Context(), zeros{}, "z", 1<<10, time.Hour); !errors.Is(err, fault.ErrRefused) || !strings.Contains(err.Error(), "grew past") {
		t.Errorf("endless: %v, want a refusal", err)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// A scan whose context is cancelled stops with the cancellation, not a result.
func TestScanCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a/state.json": `{"run_id":"a","created_ts":"2026-07-01T11:00:00Z","current_state":"OUTPUT","stages":{}}`,
		"state/r.json": `{"run_id":"r","started_at":"2026-07-02T09:00:00Z","status":"running","stages":{"a":{"status":"pending"}}}`,
	})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := ScanKimi(ctx, dir, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("kimi: %v", err)
	}
	if _, _, err := ScanAgenTeam(ctx, dir, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("agenteam: %v", err)
	}
}
