package cli

import (
	"context"
	"path/filepath"
	"testing"
)

// The repository opened before kong parses is used only for the directory -C names.
func TestPreopenGuess(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "."},
		{[]string{"-C", "a", "list"}, "a"},
		{[]string{"-Ca", "list"}, "a"},
		{[]string{"--dir=a", "list", "-C", "b"}, "b"},
		{[]string{"--dir", "a", "event", "r", "--", "-C", "b"}, "a"},
	} {
		if got := dirArg(c.args); got != c.want {
			t.Errorf("dirArg(%q) = %q, want %q", c.args, got, c.want)
		}
	}
	dir := t.TempDir()
	p := startOpen(context.Background(), []string{"-C", dir, "list"})
	defer p.stop()
	if r, err := p.take(filepath.Join(dir, "sub")); r != nil || err != nil {
		t.Fatalf("take of another directory = %v, %v; want nothing", r, err)
	}
	if r, err := p.take(dir); r != nil || err == nil {
		t.Fatalf("take of %s (no repository) = %v, %v; want git.Open's error", dir, r, err)
	}
	var nothing *preopen
	if r, err := nothing.take(dir); r != nil || err != nil {
		t.Fatal("a nil preopen gave something")
	}
	nothing.stop()
}
