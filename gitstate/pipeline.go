package gitstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"

	"github.com/git-atlas/git-atlas/internal/fault"
)

// Gates a stage may have.
var Gates = []string{"none", "human", "reviewer", "qa"}

type pipelineFile struct {
	Stages []pipelineStage `json:"stages" yaml:"stages"`
}

type pipelineStage struct {
	Name       string   `json:"name" yaml:"name"`
	Verify     string   `json:"verify" yaml:"verify"`
	VerifySafe bool     `json:"verify_safe" yaml:"verify_safe"`
	Gate       string   `json:"gate" yaml:"gate"`
	MaxRetries *int     `json:"max_retries" yaml:"max_retries"`
	ReworkTo   string   `json:"rework_to" yaml:"rework_to"`
	Scope      []string `json:"scope" yaml:"scope"`
}

// ParsePipeline reads a pipeline file, JSON or YAML; unknown keys are refused so a
// typo cannot silently drop a setting.
func ParsePipeline(name string, data []byte) ([]StageDef, error) {
	var pf pipelineFile
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pf); err != nil {
			return nil, fault.Usage("pipeline %s: %v", name, err)
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&pf); err != nil {
			return nil, fault.Usage("pipeline %s: %v", name, err)
		}
	}
	if len(pf.Stages) == 0 {
		return nil, fault.Usage("pipeline %s: no stages", name)
	}
	defs := make([]StageDef, 0, len(pf.Stages))
	for _, s := range pf.Stages {
		d := StageDef{Name: s.Name, Verify: s.Verify, VerifySafe: s.VerifySafe, Gate: s.Gate, ReworkTo: s.ReworkTo, Scope: s.Scope, MaxRetries: DefaultMaxRetries}
		if s.MaxRetries != nil {
			d.MaxRetries = *s.MaxRetries
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// StagesFromList turns `--stages a,b,c` into definitions with default settings.
func StagesFromList(list string) []StageDef {
	var defs []StageDef
	for _, n := range strings.Split(list, ",") {
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
// under it", which is what git's pathspec means by it (GIT-NOTES: doublestar would
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
		if !strings.ContainsAny(g, "*?[{") {
			g = strings.TrimSuffix(g, "/")
			g = "{" + g + "," + g + "/**}"
		}
		out = append(out, g)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
