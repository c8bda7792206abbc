package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// foreignCitation is a reference to a document that lives outside the repository:
// the product contract and the git notes as they were first handed to the project.
// The repository carries its own (docs/contract.md, docs/git-notes.md).
var foreignCitation = regexp.MustCompile(`SPEC ?§|SPEC\.md|\bSPEC (?:invariant|section)|\(SPEC$|GIT[-]NOTES`)

// docCitation is a reference to a file under docs/, with an optional section. It is
// looked for in prose only (proseOf): a test's data may name any docs/ of its own.
var docCitation = regexp.MustCompile(`(?:^|[^"\w/])docs/([A-Za-z0-9_.-]+\.(?:md|1))(?: §([0-9]+))?`)

// TestCitationsResolve fails when code or documentation cites a file that is not in the
// repository: the foreign contract, or a docs/ file (or a section of one) that does not
// exist. A newcomer who clones the repository must be able to follow every reference.
func TestCitationsResolve(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string]bool{}
	sectionsOf := func(doc string) map[string]bool {
		if s, ok := sections[doc]; ok {
			return s
		}
		s := map[string]bool{}
		data, err := os.ReadFile(filepath.Join(root, "docs", doc))
		if err == nil {
			for line := range strings.SplitSeq(string(data), "\n") {
				if m := regexp.MustCompile(`^##+ ([0-9]+)[. ]`).FindStringSubmatch(line); m != nil {
					s[m[1]] = true
				}
			}
		} else {
			s = nil
		}
		sections[doc] = s
		return s
	}
	texts := map[string]bool{".go": true, ".md": true, ".txtar": true, ".1": true, ".sh": true, ".yml": true, ".yaml": true, "": true}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" {
				return filepath.SkipDir
			}
			return nil
		}
		if !texts[filepath.Ext(p)] || rel == filepath.Join("internal", "archtest", "docs_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			// Both patterns need a word of their own: the lines without it (nearly all)
			// skip the regexps, which the race detector makes slow.
			if (strings.Contains(line, "SPEC") || strings.Contains(line, "NOTES")) && foreignCitation.MatchString(line) {
				t.Errorf("%s:%d cites a document outside the repository: %s", rel, i+1, strings.TrimSpace(line))
			}
			if !strings.Contains(line, "docs/") {
				continue
			}
			for _, m := range docCitation.FindAllStringSubmatch(proseOf(p, line), -1) {
				s := sectionsOf(m[1])
				switch {
				case s == nil:
					t.Errorf("%s:%d cites docs/%s, which does not exist", rel, i+1, m[1])
				case m[2] != "" && !s[m[2]]:
					t.Errorf("%s:%d cites docs/%s §%s, which has no such section", rel, i+1, m[1], m[2])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// proseOf is the part of line that is prose: a Go comment, a comment line of a
// script or transcript, or the whole line of a Markdown file or man page.
func proseOf(path, line string) string {
	switch filepath.Ext(path) {
	case ".md", ".1":
		return line
	case ".go":
		if i := strings.Index(line, "//"); i >= 0 {
			return line[i:]
		}
		return ""
	}
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
		return t
	}
	return ""
}
