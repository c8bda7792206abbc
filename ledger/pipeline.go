package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// Gates a stage may have.
var Gates = []string{"none", "human", "reviewer", "qa"}

type pipelineFile struct {
	Stages []pipelineStage `json:"stages" yaml:"stages"`
	// Setup is the command run in each new worktree (docs/contract.md §15).
	Setup string `json:"setup" yaml:"setup"`
}

type pipelineStage struct {
	Name       string   `json:"name" yaml:"name"`
	Verify     string   `json:"verify" yaml:"verify"`
	VerifySafe bool     `json:"verify_safe" yaml:"verify_safe"`
	Gate       string   `json:"gate" yaml:"gate"`
	MaxRetries *int     `json:"max_retries" yaml:"max_retries"`
	ReworkTo   string   `json:"rework_to" yaml:"rework_to"`
	Scope      []string `json:"scope" yaml:"scope"`
	WallBudget string   `json:"wall_budget" yaml:"wall_budget"`
	IdleBudget string   `json:"idle_budget" yaml:"idle_budget"`
}

// ParsePipeline reads a pipeline file, JSON or YAML; unknown keys are refused so a
// typo cannot silently drop a setting, and so is anything after the one document.
// Errors say what was expected where, in words and with the line: never a Go type.
func ParsePipeline(name string, data []byte) ([]StageDef, error) {
	p, err := ParsePipelineFile(name, data)
	return p.Stages, err
}

// Pipeline is a pipeline file: its stages and its top-level settings.
type Pipeline struct {
	Stages []StageDef
	// Setup is the command run in each new worktree of the run (docs/contract.md §15).
	Setup string
}

// ParsePipelineFile is ParsePipeline with the file's top-level settings.
func ParsePipelineFile(name string, data []byte) (Pipeline, error) {
	defs, setup, err := parsePipeline(name, data)
	return Pipeline{Stages: defs, Setup: setup}, err
}

func parsePipeline(name string, data []byte) ([]StageDef, string, error) {
	var pf pipelineFile
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pf); err != nil {
			return nil, "", jsonPipelineError(name, data, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, "", fault.Usage("pipeline %s, line %d: unexpected data after the JSON object", name, lineAt(data, dec.InputOffset()))
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&pf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, "", fault.Usage("pipeline %s is empty", name).WithHint("a pipeline is a list of stages: `stages: [{name: plan}, {name: code}]`")
			}
			return nil, "", yamlPipelineError(name, err)
		}
		var next yaml.Node
		if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
			line := 0
			if err == nil {
				line = next.Line
			}
			if line > 0 {
				return nil, "", fault.Usage("pipeline %s holds more than one YAML document (the second starts at line %d)", name, line)
			}
			return nil, "", fault.Usage("pipeline %s holds more than one YAML document", name)
		}
	}
	if len(pf.Stages) == 0 {
		return nil, "", fault.Usage("pipeline %s: no stages", name)
	}
	defs := make([]StageDef, 0, len(pf.Stages))
	for _, s := range pf.Stages {
		d := StageDef{Name: s.Name, Verify: s.Verify, VerifySafe: s.VerifySafe, Gate: s.Gate, ReworkTo: s.ReworkTo, Scope: s.Scope, MaxRetries: DefaultMaxRetries,
			WallBudget: s.WallBudget, IdleBudget: s.IdleBudget}
		if s.MaxRetries != nil {
			d.MaxRetries = *s.MaxRetries
		}
		defs = append(defs, d)
	}
	return defs, pf.Setup, nil
}

// pipelineWords says in words what a pipeline value of each Go type is (keyed by the
// type's name as the decoders spell it, which includes this package's name).
var pipelineWords = map[string]string{
	reflect.TypeFor[[]pipelineStage]().String(): "a list of stages",
	reflect.TypeFor[pipelineStage]().String():   "a stage (a mapping with name, verify, verify_safe, gate, max_retries, rework_to, scope, wall_budget, idle_budget)",
	reflect.TypeFor[pipelineFile]().String():    "a mapping with a stages list",
	"[]string":                                  "a list of globs",
	"string":                                    "text",
	"int":                                       "a whole number",
	"bool":                                      "true or false",
}

func typeWords(goType string) string {
	if w, ok := pipelineWords[goType]; ok {
		return w
	}
	return "another kind of value"
}

// jsonPipelineError turns encoding/json's errors into words with a line.
func jsonPipelineError(name string, data []byte, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		found := map[string]string{"string": "text", "number": "a number", "object": "an object", "array": "a list", "bool": "true or false"}[te.Value]
		if found == "" {
			found = "the " + te.Value // "number 1.5"
		}
		return fault.Usage("pipeline %s, line %d: %s must be %s, not %s", name, lineAt(data, te.Offset), field, typeWords(te.Type.String()), found)
	case errors.As(err, &se):
		return fault.Usage("pipeline %s, line %d: invalid JSON: %s", name, lineAt(data, se.Offset), se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Usage("pipeline %s: the JSON ends before its object does", name)
	}
	return fault.Usage("pipeline %s: %s", name, strings.TrimPrefix(err.Error(), "json: "))
}

// yamlTypeError is one of yaml's unmarshal errors:
// "line 3: cannot unmarshal !!str `two` into int".
var yamlTypeError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
})
var yamlUnknownField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): field (.+) not found in type (.+)$`) })

// yamlPipelineError turns yaml's errors into words with a line.
func yamlPipelineError(name string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if strings.HasPrefix(msg, "line ") {
			return fault.Usage("pipeline %s, %s", name, msg)
		}
		return fault.Usage("pipeline %s: %s", name, msg)
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := yamlTypeError().FindStringSubmatch(e); m != nil {
			found := map[string]string{"str": "text", "int": "a number", "float": "a number", "bool": "true or false", "seq": "a list", "map": "a mapping", "null": "nothing"}[m[2]]
			if m[3] != "" {
				found = fmt.Sprintf("%q", m[3])
			}
			if found == "" {
				found = "a " + m[2]
			}
			msgs = append(msgs, fmt.Sprintf("line %s: expected %s, found %s", m[1], typeWords(m[4]), found))
		} else if m := yamlUnknownField().FindStringSubmatch(e); m != nil {
			msgs = append(msgs, fmt.Sprintf("line %s: unknown field %q", m[1], m[2]))
		} else {
			msgs = append(msgs, e)
		}
	}
	return fault.Usage("pipeline %s, %s", name, strings.Join(msgs, "; "))
}

// lineAt is the 1-based line of a byte offset in data.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// StagesFromList turns `--stages a,b,c` into definitions with default settings.
func StagesFromList(list string) []StageDef {
	var defs []StageDef
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		defs = append(defs, StageDef{Name: n, MaxRetries: DefaultMaxRetries})
	}
	return defs
}

// CheckStages validates stage definitions: names, uniqueness, gates, budgets,
// rework targets and scopes (canonicalised in place).
func CheckStages(defs []StageDef) error {
	seen := map[string]bool{}
	var names []string
	for _, d := range defs {
		if err := CheckNodeName("stage", d.Name); err != nil {
			return err
		}
		if seen[d.Name] {
			return fault.Usage("stage %q is defined twice", d.Name)
		}
		if twin := CaseTwin(d.Name, names); twin != "" {
			return fault.Usage("stages %q and %q differ only in case: on a case-insensitive file system they would share a worktree and a branch", twin, d.Name).WithHint("rename one of them")
		}
		seen[d.Name] = true
		names = append(names, d.Name)
	}
	for i := range defs {
		d := &defs[i]
		if d.Gate == "none" {
			d.Gate = ""
		}
		if d.Gate != "" && !contains(Gates, d.Gate) {
			return fault.Usage("stage %s: unknown gate %q (valid: %s)", d.Name, d.Gate, strings.Join(Gates, ", "))
		}
		if d.MaxRetries < 0 {
			return fault.Usage("stage %s: max_retries must not be negative", d.Name)
		}
		for _, b := range []struct{ name, v string }{{"wall_budget", d.WallBudget}, {"idle_budget", d.IdleBudget}} {
			if b.v == "" {
				continue
			}
			if dur, err := time.ParseDuration(b.v); err != nil || dur <= 0 {
				return fault.Usage("stage %s: %s %q is not a positive duration", d.Name, b.name, b.v).WithHint("write it like 90s, 30m or 2h")
			}
		}
		if d.ReworkTo != "" && !seen[d.ReworkTo] {
			return fault.Usage("stage %s: rework_to names unknown stage %q", d.Name, d.ReworkTo)
		}
		scope, err := CanonicalScope(d.Scope)
		if err != nil {
			return fmt.Errorf("stage %s: %w", d.Name, err)
		}
		d.Scope = scope
	}
	return nil
}

// CanonicalScope validates scope globs and turns a bare path into "path and everything
// under it", which is what git's pathspec means by it (docs/git-notes.md: doublestar would
// match it exactly).
func CanonicalScope(globs []string) ([]string, error) {
	out := make([]string, 0, len(globs))
	for _, g := range globs {
		g = strings.TrimPrefix(strings.TrimSpace(g), "./")
		if g == "" || strings.HasPrefix(g, "/") || g == ".." || strings.HasPrefix(g, "../") || strings.Contains(g, "/../") {
			return nil, fault.Usage("invalid scope %q: use a glob relative to the repository root", g)
		}
		if !doublestar.ValidatePattern(g) {
			return nil, fault.Usage("invalid scope glob %q", g)
		}
		if topLevelComma(g) {
			// One rule for every list flag: names split on commas, globs never do
			// (they hold commas in braces); "a,b" is two globs written as one.
			return nil, fault.Named(fault.ErrUsage, "scope %q holds a comma outside braces", g).WithHint("give each glob its own {scope}; a comma belongs in braces (src/{a,b}/**) or escaped (\\,)")
		}
		if !strings.ContainsAny(g, "*?[{") {
			g = strings.TrimSuffix(g, "/")
			g = "{" + g + "," + g + "/**}"
		}
		out = append(out, g)
	}
	return out, nil
}

// topLevelComma reports whether glob has an unescaped comma outside braces and
// character classes.
func topLevelComma(glob string) bool {
	depth, class := 0, false
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == ',' && depth == 0:
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}
