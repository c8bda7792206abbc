package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Marker is a file that says "this process is making something here": it is created
// under an exclusive flock that dies with its owner (and with the git children it was
// handed to), so a marker nobody holds is the leftover of a process that was killed
// half-way, and a held one is work in progress. Its text names the owner (pid, host,
// start time) for messages only: liveness is the lock, never the pid.
type Marker struct {
	path string
	f    *os.File
}

// ErrMarkerHeld is returned by ClaimMarker when a live process owns the marker.
var ErrMarkerHeld = errors.New("held by a live process")

// MarkerHeldError names the live owner of a marker.
type MarkerHeldError struct{ Owner string }

func (e *MarkerHeldError) Error() string { return "held by " + e.Owner }

// Is makes errors.Is(err, ErrMarkerHeld) true.
func (e *MarkerHeldError) Is(target error) bool { return target == ErrMarkerHeld }

// ownerNote is what a marker says about the process that holds it.
func ownerNote(what string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s\npid %d on %s since %s\n", what, os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
}

// Owner is the marker text's owner line ("pid N on HOST since T"), or "".
func markerOwner(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 2 {
		return "an unknown process"
	}
	return "process " + strings.TrimPrefix(lines[len(lines)-1], "pid ")
}

// ClaimMarker makes this process the owner of the marker at path. It creates the
// marker (tookOver false) or, when the marker's owner died, takes it over (tookOver
// true: whatever the marker guards was left half-made). A marker a live process holds
// is *MarkerHeldError. The marker appears already locked (a locked temporary file is
// hard-linked into place), so no other process ever sees it unowned. The directories
// made for it are made durably: what the marker guards (a worktree) is made in them,
// and is durable only if they are.
func ClaimMarker(path, what string) (m *Marker, tookOver bool, err error) {
	if err := MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	for range 8 {
		m, err := createMarker(path, what)
		if err == nil {
			return m, false, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		m, err = takeOver(path, what)
		if err == nil {
			return m, true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
		// Removed between our two looks: its owner finished. Try again.
	}
	return nil, false, fmt.Errorf("claim %s: it keeps changing", path)
}

func createMarker(path, what string) (*Marker, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tryFlock(tmp); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.WriteString(ownerNote(what)); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		tmp.Close()
		return nil, err
	}
	return &Marker{path: path, f: tmp}, nil
}

// takeOver locks an existing marker whose owner is gone. fs.ErrNotExist: the marker
// was removed meanwhile (its owner finished).
func takeOver(path, what string) (*Marker, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := tryFlock(f); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			// No flock here: nothing tells a live owner from a dead one, so the
			// marker is taken for a dead one's (the pre-lock behaviour).
		} else {
			text, _ := os.ReadFile(path)
			f.Close()
			if errors.Is(err, errLocked) {
				return nil, &MarkerHeldError{Owner: markerOwner(string(text))}
			}
			return nil, err
		}
	}
	// Locked: but is it still the file at path? Its owner removes it when done.
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		f.Close()
		return nil, fs.ErrNotExist
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(ownerNote(what)), 0)
	}
	return &Marker{path: path, f: f}, nil
}

// ProbeMarker says, without claiming it, whether a marker exists at path and whether
// a live process holds it; owner names the holder (or the dead one).
func ProbeMarker(path string) (exists, live bool, owner string) {
	f, err := os.Open(path)
	if err != nil {
		return false, false, ""
	}
	defer f.Close()
	text, _ := os.ReadFile(path)
	owner = markerOwner(string(text))
	if err := tryFlock(f); errors.Is(err, errLocked) {
		return true, true, owner
	}
	return true, false, owner // closing f lets the lock go again
}

// File is the marker's open file: hand it to a child process (ExtraFiles) and the
// marker stays held while the child lives, even if this process dies first.
func (m *Marker) File() *os.File { return m.f }

// Done removes the marker: the work it guarded is complete (or undone).
func (m *Marker) Done() error {
	err := os.Remove(m.path)
	m.f.Close()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Drop lets the marker go and leaves it in place: what it guards is half-made, and
// the next claimant takes it over.
func (m *Marker) Drop() { m.f.Close() }
