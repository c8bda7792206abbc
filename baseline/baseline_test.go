package baseline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// TestResolveHintNamesTheField: a baseline that is no revision is refused before git
// is asked, its hint naming the request's field (docs/contract.md §4.6).
func TestResolveHintNamesTheField(t *testing.T) {
	t.Parallel()
	_, err := Resolve(context.Background(), nil, "-x")
	_, flag := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return "--" + f }})
	_, field := fault.SpelledBy(err, fault.Spelling{Field: func(f string) string { return f }})
	if flag != "pass --baseline with a commit, branch or tag" || field != "pass baseline with a commit, branch or tag" {
		t.Errorf("hints %q and %q", flag, field)
	}
}

// ConfigHash takes its names from a ledger too: a FIFO and /dev/zero are hashed as
// not regular files, never read (the call returns), and differ from the regular file
// that was there; a regular file hashes as its bytes.
func TestConfigHashReadsOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conf"), []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		h, err := ConfigHash(dir, []string{"fifo", "/dev/zero", "conf"})
		if err != nil {
			t.Error(err)
		}
		done <- h
	}()
	var h string
	select {
	case h = <-done:
	case <-time.After(time.Minute): // a hang guard, not a timing: the reads must not start
		t.Fatal("ConfigHash is still reading a FIFO or /dev/zero")
	}
	want := sha256.Sum256([]byte("fifo\x00not a regular file\x00/dev/zero\x00not a regular file\x00conf\x006\x00a = 1\n"))
	if h != "sha256:"+hex.EncodeToString(want[:]) {
		t.Errorf("hash %s", h)
	}
}
