package ledger

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// A bad pipeline is a usage error in words, with its file and line: no Go type
// names, no bare "EOF", no decoder prefixes; trailing data and a second YAML
// document are refused, not ignored.
func TestParsePipelineErrorsInWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, data, want string }{
		{"empty.yaml", "", "pipeline empty.yaml is empty"},
		{"blank.yaml", "  \n# only a comment\n", "pipeline blank.yaml is empty"},
		{"t.json", `{"stages":"x"}`, "pipeline t.json, line 1: stages must be a list of stages, not text"},
		{"t.json", "{\"stages\": [\n  {\"name\": \"a\",\n   \"max_retries\": 1.5}]}", "pipeline t.json, line 3: max_retries must be a whole number, not the number 1.5"},
		{"t.json", "{\"stages\": [{\"name\": 7}]}", "pipeline t.json, line 1: name must be text, not a number"},
		{"t.json", "{\"stages\": [{\"name\": \"a\", \"verify_safe\": \"yes\"}]}", "verify_safe must be true or false, not text"},
		{"t.json", "{\"stages\": [\n}", "pipeline t.json, line 2: invalid JSON: invalid character '}'"},
		{"t.json", "{\"stages\": [", "pipeline t.json: the JSON ends before its object does"},
		{"t.json", "{\"stages\": [{\"name\": \"a\"}]}\n{\"stages\": []}", "pipeline t.json, line 2: unexpected data after the JSON object"},
		{"t.json", "{\"stages\": [{\"name\": \"a\"}]} trailing", "unexpected data after the JSON object"},
		{"t.json", `{"stages": [{"name": "a", "max_retry": 2}]}`, `pipeline t.json: unknown field "max_retry"`},
		{"t.yaml", "stages: x\n", "pipeline t.yaml, line 1: expected a list of stages, found \"x\""},
		{"t.yaml", "- a\n", "pipeline t.yaml, line 1: expected a mapping with a stages list, found a list"},
		{"t.yaml", "stages:\n  - x\n", "line 2: expected a stage (a mapping with name, verify"},
		{"t.yaml", "stages:\n  - name: a\n    max_retries: two\n", "pipeline t.yaml, line 3: expected a whole number, found \"two\""},
		{"t.yaml", "stages:\n  - name: a\n    scope: src\n", "line 3: expected a list of globs, found \"src\""},
		{"t.yaml", "stages:\n  - name: a\n    bogus: 1\n", `pipeline t.yaml, line 3: unknown field "bogus"`},
		{"t.yaml", "stages: [\n", "pipeline t.yaml, line 1: did not find expected node content"},
		{"t.yaml", "stages:\n  - name: a\n---\nstages:\n  - name: b\n", "pipeline t.yaml holds more than one YAML document (the second starts at line 3)"},
		{"t.yaml", "stages:\n  - name: a\n---\n", "pipeline t.yaml holds more than one YAML document"},
	} {
		_, err := ParsePipeline(tc.name, []byte(tc.data))
		if err == nil {
			t.Errorf("%q: accepted", tc.data)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, fault.ErrUsage) {
			t.Errorf("%q: %v is not a usage error", tc.data, err)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%q: error %q does not say %q", tc.data, msg, tc.want)
		}
		if bad := regexp.MustCompile(`gitstate|pipelineStage|\[\]|Go (struct|value)|\bEOF\b|: json: |: yaml: |!!`).FindString(msg); bad != "" {
			t.Errorf("%q: error %q shows %q", tc.data, msg, bad)
		}
	}
	// A single document with a document marker, and JSON followed by whitespace, are fine.
	for _, ok := range []string{"---\nstages:\n  - name: a\n", "{\"stages\": [{\"name\": \"a\"}]}\n\n  "} {
		if _, err := ParsePipeline("ok", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// Scope globs are never split on commas, so a comma outside braces is refused rather
// than taken as one glob that matches a file named "a,b".
func TestCanonicalScopeCommas(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"src/{a,b}/**", "docs/{x,{y,z}}.md", "a\\,b", "[,]x", "src"} {
		if _, err := CanonicalScope([]string{ok}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"a,b", "src/**,docs/**", "{a,b},c", "[x],y"} {
		_, err := CanonicalScope([]string{bad})
		if !errors.Is(err, fault.ErrUsage) || !strings.Contains(err.Error(), "comma outside braces") {
			t.Errorf("%q: %v, want a usage error about the comma", bad, err)
		}
	}
}

// Issue 36.1: a pipeline's top-level setup is read with its stages.
func TestPipelineSetup(t *testing.T) {
	for _, data := range []string{"setup: make deps\nstages: [{name: code}]\n", `{"setup": "make deps", "stages": [{"name": "code"}]}`} {
		p, err := ParsePipelineFile("p", []byte(data))
		if err != nil || p.Setup != "make deps" || len(p.Stages) != 1 {
			t.Errorf("%q: %+v, %v", data, p, err)
		}
	}
}
