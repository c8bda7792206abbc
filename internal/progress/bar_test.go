package progress

import (
	"bytes"
	"strings"
	"testing"
)

// The bar is drawn in place at each step, with its count, and erased when the phase
// completes or ends early; an unknown total draws nothing.
func TestBarDrawsEachStepAndErasesItself(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	b := NewBar(&out)
	b.Start("snapshot", 4)
	b.Add(1)
	if got, want := out.String()[strings.LastIndex(out.String(), "\r"):], "\rsnapshot  25% [=======>--------------------] (1/4)\x1b[K"; got != want {
		t.Fatalf("after one step: %q, want %q", got, want)
	}
	b.Add(3)
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Fatalf("a complete phase is not erased: %q", out.String())
	}
	n := out.Len()
	b.Add(1)
	b.Done()
	if out.Len() != n {
		t.Fatalf("a finished phase drew again: %q", out.String()[n:])
	}
	b.Start("verify", 2)
	b.Done()
	if !strings.HasSuffix(out.String(), "(0/2)\x1b[K\r\x1b[K") {
		t.Fatalf("a phase ended early is not erased: %q", out.String())
	}
	out.Reset()
	b.Start("walk", -1)
	b.Add(5)
	b.Done()
	if out.Len() != 0 {
		t.Fatalf("an unknown total drew %q", out.String())
	}
}

// A note goes on a line of its own: the bar drawn is erased first and drawn again after
// it; with no bar drawn, the note alone.
func TestBarNoteOnItsOwnLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	b := NewBar(&out)
	b.Note("first")
	if got := out.String(); got != "first\n" {
		t.Fatalf("a note with no bar: %q", got)
	}
	out.Reset()
	b.Start("gc", 2)
	b.Add(1)
	out.Reset()
	b.Note("waiting")
	if got, want := out.String(), "\r\x1b[Kwaiting\n\rgc  50% [==============>-------------] (1/2)\x1b[K"; got != want {
		t.Fatalf("a note over a bar: %q, want %q", got, want)
	}
}
