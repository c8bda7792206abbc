package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ParseOID takes full lowercase hex ids of either format and nothing else: what a
// hostile ledger could hold instead (an option, a short id, a ref name, a revision
// expression) is refused.
func TestParseOID(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{strings.Repeat("a", 40), strings.Repeat("0", 64), "0123456789abcdef0123456789abcdef01234567"} {
		id, err := ParseOID(ok)
		if err != nil || id.String() != ok || id.IsZero() || OIDRev(id).String() != ok {
			t.Errorf("ParseOID(%q) = %v, %v", ok, id, err)
		}
	}
	for _, bad := range []string{"", "--output=../README", "-p", "abc123", strings.Repeat("A", 40), strings.Repeat("a", 39),
		strings.Repeat("a", 41), strings.Repeat("a", 63), strings.Repeat("a", 65), "HEAD", "main", "refs/heads/main",
		strings.Repeat("a", 40) + "^{tree}", strings.Repeat("a", 40) + "\n", " " + strings.Repeat("a", 40), strings.Repeat("g", 40)} {
		if id, err := ParseOID(bad); err == nil || !id.IsZero() {
			t.Errorf("ParseOID(%q) = %v, nil; want an error", bad, id)
		}
	}
	if _, err := ParseOIDs([]string{strings.Repeat("a", 40), "--all"}); err == nil {
		t.Error("ParseOIDs took --all")
	}
}

// CheckRefFormat agrees with `git check-ref-format --allow-onelevel` (and refuses a
// leading "-" besides); ArgRev refuses what git would read as an option.
func TestCheckRefFormatAgreesWithGit(t *testing.T) {
	t.Parallel()
	names := []string{"HEAD", "main", "refs/heads/main", "refs/atlas/runs/r1", "feature/x-1", "a.b", "v1.0",
		"", "@", "-x", "--output=x", "/a", "a/", "a//b", "a.", "a..b", "a@{1}", "a b", "a~1", "a^", "a:b", "a?", "a*",
		"a[", "a\\b", ".a", "a/.b", "a.lock", "a/b.lock/c", "a\tb", "a\x7fb", "@{-1}", "a@b", "ref/./x"}
	for _, n := range names {
		_, err := runGit("", nil, "", "check-ref-format", "--allow-onelevel", n)
		want := err == nil && !strings.HasPrefix(n, "-")
		got := CheckRefFormat(n) == nil
		if got != want {
			t.Errorf("CheckRefFormat(%q) accepts = %v, git check-ref-format says %v", n, got, want)
		}
		if r, err := RefRev(n); (err == nil) != want || (err == nil && r.String() != n) {
			t.Errorf("RefRev(%q) = %v, %v", n, r, err)
		}
	}
	for _, bad := range []string{"", "-p", "--output=../README", "a\nb", "a\x00b"} {
		if _, err := ArgRev(bad); err == nil {
			t.Errorf("ArgRev(%q) accepted", bad)
		}
	}
	if r, err := ArgRev("main~2"); err != nil || r.String() != "main~2" {
		t.Errorf("ArgRev(main~2) = %v, %v", r, err)
	}
}

// A revision that starts with "-" never reaches git as an option: ResolveCommit is
// given it after --end-of-options (a ref of that name cannot exist, so it is not
// found, and no file is written).
func TestResolveCommitEndOfOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, g := testRepo(t, kinds[0])
	head := g("", "rev-parse", "HEAD")
	got, err := r.ResolveCommit(ctx, HeadRev())
	if err != nil || got.String() != head {
		t.Fatalf("ResolveCommit(HEAD) = %v, %v", got, err)
	}
	if _, err := r.ResolveCommit(ctx, Rev{s: "--output=" + filepath.Join(r.TopLevel, "out")}); err == nil {
		t.Fatal("an option resolved")
	}
	if _, err := os.Stat(filepath.Join(r.TopLevel, "out")); err == nil {
		t.Fatal("git took the revision for an option and wrote a file")
	}
}

// mustOID parses an id git printed in a test.
func mustOID(t *testing.T, s string) OID {
	t.Helper()
	id, err := ParseOID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
