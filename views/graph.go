// Package views draws a run at a glance (docs/contract.md §14): a graph run's DAG of jobs, or a
// single run's stages in order, as text for people, Graphviz dot, Mermaid or JSON.
// It reads a ledger.Run and writes to the io.Writer it is given; it never decides
// where output goes (internal/cli does).
package views

import (
	"sort"

	"github.com/git-atlas/git-atlas/ledger"
)

// Graph is what every format draws; its JSON is `git atlas graph --format json`.
type Graph struct {
	RunID        string   `json:"run_id"`
	Kind         string   `json:"kind"`
	Status       string   `json:"status"`
	Epoch        int      `json:"epoch"`
	Seq          int      `json:"seq"`
	GasLimit     int      `json:"gas_limit,omitempty"`
	GasSpent     int      `json:"gas_spent,omitempty"`
	GasRemaining int      `json:"gas_remaining,omitempty"`
	MaxAttempts  int      `json:"max_attempts,omitempty"`
	Nodes        []Node   `json:"nodes"`
	Edges        []Edge   `json:"edges"`
	Union        *Union   `json:"union,omitempty"`
	Stages       []Stage  `json:"stages"`
	Ready        []string `json:"ready"`
}

// Node is one job of a graph run.
type Node struct {
	ID         string   `json:"id"`
	State      string   `json:"state"`
	Ready      bool     `json:"ready"`
	Level      int      `json:"level"`
	Attempts   int      `json:"attempts"`
	Needs      []string `json:"needs"`
	Holder     string   `json:"holder,omitempty"`
	Lease      string   `json:"lease,omitempty"`
	ExpiresAt  string   `json:"expires_at,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Integrated bool     `json:"integrated,omitempty"`
	Conflicted []string `json:"conflicted,omitempty"`
	// OutsideScope are the paths outside its scope that kept the job out of the last
	// union; AllowedOutsideScope those a person let in (docs/contract.md §5.3).
	OutsideScope        []string `json:"outside_scope,omitempty"`
	AllowedOutsideScope []string `json:"allowed_outside_scope,omitempty"`
}

// Edge is a dependency: To needs From.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Union is the last union build.
type Union struct {
	Head       string   `json:"head"`
	Integrated []string `json:"integrated"`
	Conflicted []string `json:"conflicted"`
	// OutsideScope are the jobs left out for changes outside their scope,
	// AllowedOutsideScope those let in all the same (docs/contract.md §5.3).
	OutsideScope        []string `json:"outside_scope,omitempty"`
	AllowedOutsideScope []string `json:"allowed_outside_scope,omitempty"`
}

// Stage is one stage of the pipeline, in order.
type Stage struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	BudgetLeft int    `json:"budget_left"`
	Gate       string `json:"gate,omitempty"`
	Verify     bool   `json:"has_verify"`
	Current    bool   `json:"current"`
}

// Build projects a run into a Graph.
func Build(r *ledger.Run) *Graph {
	h, s := &r.Header, &r.State
	g := &Graph{RunID: h.RunID, Kind: h.Kind, Status: s.Status, Epoch: s.Epoch, Seq: s.Seq,
		Nodes: []Node{}, Edges: []Edge{}, Stages: []Stage{}, Ready: []string{}}
	cur := r.CurrentStage()
	for i := range s.Stages {
		def, st, ok := r.Stage(s.Stages[i].Name)
		if !ok {
			continue
		}
		g.Stages = append(g.Stages, Stage{Name: st.Name, Status: st.Status, Attempts: len(st.Attempts),
			BudgetLeft: ledger.BudgetLeft(def, st), Gate: gateOf(def.Gate), Verify: def.Verify != "",
			Current: cur != nil && cur.Name == st.Name})
	}
	if h.Kind != ledger.KindGraph {
		return g
	}
	f := ledger.JobFrontier(h, s)
	g.GasLimit, g.GasSpent, g.GasRemaining, g.MaxAttempts = f.GasLimit, f.GasSpent, f.GasRemaining, ledger.MaxAttempts(h)
	g.Ready = append(g.Ready, f.Ready...)
	ready := map[string]bool{}
	for _, id := range f.Ready {
		ready[id] = true
	}
	var integrated map[string]bool
	conflicted := map[string][]string{}
	if s.Union != nil {
		integrated = map[string]bool{}
		u := &Union{Head: s.Union.Head.String(), Integrated: append([]string{}, s.Union.Integrated...), Conflicted: []string{}}
		for _, id := range s.Union.Integrated {
			integrated[id] = true
		}
		for id, paths := range s.Union.Conflicted {
			u.Conflicted = append(u.Conflicted, id)
			conflicted[id] = paths
		}
		sort.Strings(u.Conflicted)
		u.OutsideScope, u.AllowedOutsideScope = sortedKeys(s.Union.OutsideScope), sortedKeys(s.Union.AllowedOutsideScope)
		g.Union = u
	}
	levels := levelsOf(s.Jobs)
	for _, j := range s.Jobs {
		n := Node{ID: j.ID, State: j.State, Ready: ready[j.ID], Level: levels[j.ID], Attempts: j.Attempts,
			Needs: append([]string{}, j.Needs...), Reason: j.Reason, Integrated: integrated[j.ID], Conflicted: conflicted[j.ID]}
		if s.Union != nil {
			n.OutsideScope, n.AllowedOutsideScope = s.Union.OutsideScope[j.ID], s.Union.AllowedOutsideScope[j.ID]
		}
		if j.State == ledger.JobRunning {
			n.Holder, n.Lease, n.ExpiresAt = j.Holder, j.Lease, j.ExpiresAt
		}
		g.Nodes = append(g.Nodes, n)
		for _, need := range j.Needs {
			g.Edges = append(g.Edges, Edge{From: need, To: j.ID})
		}
	}
	return g
}

func gateOf(gate string) string {
	if gate == "none" {
		return ""
	}
	return gate
}

// levelsOf is each job's depth: 0 without needs, else one more than its deepest need.
// The ledger refuses cycles; a cycle read anyway (a hand-edited ledger) stops at the
// job count instead of looping.
func levelsOf(jobs []ledger.Job) map[string]int {
	needs := map[string][]string{}
	for _, j := range jobs {
		needs[j.ID] = j.Needs
	}
	level := map[string]int{}
	var depth func(id string, seen int) int
	depth = func(id string, seen int) int {
		if l, ok := level[id]; ok {
			return l
		}
		if seen > len(jobs) {
			return 0
		}
		l := 0
		for _, n := range needs[id] {
			if _, known := needs[n]; known {
				l = max(l, depth(n, seen+1)+1)
			}
		}
		level[id] = l
		return l
	}
	for _, j := range jobs {
		depth(j.ID, 0)
	}
	return level
}

// sortedKeys are m's keys in order (nil for none).
func sortedKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
