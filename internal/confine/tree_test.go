package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Tree reads a file or lists a directory only when no component below its top is a
// symbolic link: a link as a directory on the way, as the directory listed, as the
// file read, or dangling, is refused with its path; a link above the top (the top as
// named) is followed.
func TestTreeFollowsNoLink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	top, outside := filepath.Join(base, "top"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(top, "src", "run"), filepath.Join(outside, "run")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(top, "src", "run", "state.json"), filepath.Join(outside, "run", "state.json")} {
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"src/out":         outside,
		"src/run/linked":  filepath.Join(outside, "run", "state.json"),
		"src/run/dangles": filepath.Join(base, "none"),
		"in":              "src",
		"named":           top,
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(top, l)); err != nil {
			t.Fatal(err)
		}
	}
	tree := Tree{Dir: top}
	f, size, err := tree.OpenRegular("src/run/state.json", 10)
	if err != nil || size != 2 {
		t.Fatalf("OpenRegular(a fine path) = %d, %v", size, err)
	}
	f.Close()
	if ents, err := tree.ReadDir(filepath.Join(top, "src")); err != nil || len(ents) != 2 || ents[0].Name() != "out" || ents[1].Name() != "run" {
		t.Errorf("ReadDir(src) = %v, %v", ents, err)
	}
	if _, err := (Tree{Dir: filepath.Join(top, "named")}).ReadDir(filepath.Join(top, "named")); err != nil {
		t.Errorf("ReadDir(a top named through a link) = %v", err)
	}
	for p, link := range map[string]string{
		"src/out/run/state.json": "src/out",
		"in/run/state.json":      "in",
		"named/src/run":          "named",
		"src/run/dangles/x":      "src/run/dangles",
	} {
		if _, _, err := tree.OpenRegular(p, 10); !errors.Is(err, ErrOutside) || !strings.HasPrefix(err.Error(), filepath.Join(top, link)+" is a symbolic link") {
			t.Errorf("OpenRegular(%s) = %v, want a refusal naming %s", p, err, link)
		}
	}
	for _, p := range []string{"src/out", "in", "src/out/run"} {
		if _, err := tree.ReadDir(p); !errors.Is(err, ErrOutside) {
			t.Errorf("ReadDir(%s) = %v, want a refusal", p, err)
		}
	}
	for _, p := range []string{"src/run/linked", "src/run/dangles"} {
		var re *RegularError
		if _, _, err := tree.OpenRegular(p, 10); !errors.As(err, &re) || re.What != "a symbolic link" || re.Path != filepath.Join(top, p) {
			t.Errorf("OpenRegular(%s) = %v, want it refused as a symbolic link", p, err)
		}
	}
	if _, _, err := tree.OpenRegular("src/run/none", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRegular(missing) = %v, want not exist", err)
	}
	for _, p := range []string{"..", filepath.Join(outside, "run", "state.json"), "src/../../outside/run/state.json"} {
		if _, _, err := tree.OpenRegular(p, 10); !errors.Is(err, ErrOutside) {
			t.Errorf("OpenRegular(%s) = %v, want a refusal", p, err)
		}
	}
}
