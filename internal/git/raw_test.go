package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Conversions decides whether a snapshot may take git add's fast path: every source
// of a conversion must be seen, and a plain repository must take the fast path.
// Serial: its xdg-attributes case sets XDG_CONFIG_HOME (Conversions reads it from the
// process); the other cases run in parallel once that one has restored it.
func TestConversions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, r *Repository, g func(string, ...string) string) []string
		want  bool
	}{
		{"plain", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			g("", "config", "core.eol", "crlf") // alone it converts nothing
			return []string{"a.txt", "dir/.gitattributes.bak"}
		}, false},
		{"autocrlf-false", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			g("", "config", "core.autocrlf", "false")
			return nil
		}, false},
		{"autocrlf-true", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			g("", "config", "core.autocrlf", "true")
			return nil
		}, true},
		{"autocrlf-input", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			g("", "config", "core.autocrlf", "input")
			return nil
		}, true},
		{"filter-driver", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			g("", "config", "filter.lfs.process", "git-lfs filter-process")
			return nil
		}, true},
		{"tracked-attributes", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			return []string{"a.txt", "sub/.gitattributes"}
		}, true},
		{"info-attributes", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			if err := os.MkdirAll(filepath.Join(r.CommonDir, "info"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(r.CommonDir, "info", "attributes"), []byte("* ident\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return nil
		}, true},
		{"global-attributes", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			p := filepath.Join(t.TempDir(), "attributes")
			if err := os.WriteFile(p, []byte("* text=auto\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			g("", "config", "core.attributesFile", p)
			return nil
		}, true},
		{"xdg-attributes", func(t *testing.T, r *Repository, g func(string, ...string) string) []string {
			xdg := t.TempDir() // not TestMain's, which every other test reads
			t.Setenv("XDG_CONFIG_HOME", xdg)
			p := filepath.Join(xdg, "git", "attributes")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("* text=auto\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return nil
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "xdg-attributes" {
				t.Parallel()
			}
			r, g := testRepo(t, kind{name: "cli", format: "sha1", noGo: true})
			tracked := tc.setup(t, r, g)
			why, err := r.Worktree(r.TopLevel).Conversions(context.Background(), tracked)
			if err != nil {
				t.Fatal(err)
			}
			if (why != "") != tc.want {
				t.Errorf("Conversions = %q, want conversions: %v", why, tc.want)
			}
		})
	}
}

// Every internal git call runs with the user's fsmonitor and CRLF warnings off.
func TestFixedConfig(t *testing.T) {
	t.Parallel()
	r, g := testRepo(t, kind{name: "cli", format: "sha1", noGo: true})
	g("", "config", "core.fsmonitor", "/nonexistent/hook")
	g("", "config", "core.safecrlf", "true")
	for key, want := range map[string]string{"core.fsmonitor": "false", "core.safecrlf": "false", "core.hooksPath": "/dev/null"} {
		if got := r.Config(context.Background(), key); got != want {
			t.Errorf("%s = %q inside internal calls, want %q", key, got, want)
		}
	}
}

// ls-tree -z records: every field a substring, any byte but NUL in a path; a record
// of another shape is refused.
func TestParseLsTree(t *testing.T) {
	t.Parallel()
	out := "100644 blob 0123456789012345678901234567890123456789\ta b\tc\n.txt\x00" +
		"160000 commit 1111111111111111111111111111111111111111\tsub\x00"
	got, err := parseLsTree(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []TreeItem{
		{Mode: "100644", Type: "blob", ID: "0123456789012345678901234567890123456789", Path: "a b\tc\n.txt"},
		{Mode: "160000", Type: "commit", ID: "1111111111111111111111111111111111111111", Path: "sub"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("parseLsTree = %q, want %q", got, want)
	}
	for _, bad := range []string{"100644 blob\tx\x00", "100644 blob  x\tp\x00", "no tab\x00", " blob 01\tp\x00"} {
		if _, err := parseLsTree(bad); err == nil {
			t.Errorf("parseLsTree(%q): no error", bad)
		}
	}
}
