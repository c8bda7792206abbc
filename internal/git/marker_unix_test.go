//go:build unix

package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMarkerOwnership: a held marker is "in progress" to everyone else, a dropped one
// (its owner died) is taken over, a finished one is gone.
// Serial: a flock lasts while any process has the file open, and a git another test
// forks meanwhile has every open file of this process until it execs, so a dropped
// marker could read as held.
func TestMarkerOwnership(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wt.atlas-materializing")
	if ok, _, _ := ProbeMarker(path); ok {
		t.Fatal("a marker where none was made")
	}
	m, took, err := ClaimMarker(path, "first")
	if err != nil || took {
		t.Fatalf("create: %v, took over %v", err, took)
	}
	if ok, live, owner := ProbeMarker(path); !ok || !live || owner == "" {
		t.Fatalf("held marker probed as exists=%v live=%v owner=%q", ok, live, owner)
	}
	// Another claimant (another open file: as another process) sees it held.
	if _, _, err := ClaimMarker(path, "second"); !errors.Is(err, ErrMarkerHeld) {
		t.Fatalf("claim of a held marker: %v", err)
	}
	m.Drop() // the owner dies: the marker stays, nobody holds it
	if ok, live, _ := ProbeMarker(path); !ok || live {
		t.Fatalf("dropped marker probed as exists=%v live=%v", ok, live)
	}
	m2, took, err := ClaimMarker(path, "third")
	if err != nil || !took {
		t.Fatalf("take over: %v, took over %v", err, took)
	}
	if err := m2.Done(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("marker still there after Done: %v", err)
	}
	// A marker of an older git-atlas (a plain file, never locked) is a dead owner's.
	if err := os.WriteFile(path, []byte("git-atlas run r node n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m3, took, err := ClaimMarker(path, "fourth")
	if err != nil || !took {
		t.Fatalf("take over an old marker: %v, took over %v", err, took)
	}
	m3.Drop()
	if leftovers, _ := filepath.Glob(path + ".new-*"); len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}
