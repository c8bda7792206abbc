package importer

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/fault"
	"github.com/git-atlas/git-atlas/ledger"
)

// Names are one to one, whatever order the ids come in: a mapped id never takes the
// name of a source id that already has it (root.1#0 and root.1-0), two ids that map
// to one name get two (é1 and è1), names that differ only in case get two (Foo and
// foo), and a reserved name gets another (union).
func TestAssignNamesOneToOne(t *testing.T) {
	t.Parallel()
	ok := func(n string) bool { return ledger.CheckNodeName("job", n) == nil }
	ids := []string{"root.1#0", "root.1-0", "é1", "è1", "Foo", "foo", "union", "Union", "x.lock", "a/b", "a-b"}
	first, err := assignNames("job", ids, ok, []string{"main"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	second, err := assignNames("job", rev, ok, []string{"main"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(first, second) {
		t.Errorf("the names depend on the order:\n%v\n%v", first, second)
	}
	folded := map[string]string{}
	for id, n := range first {
		if !ok(n) {
			t.Errorf("%q -> %q, which job add refuses", id, n)
		}
		if other, dup := folded[strings.ToLower(n)]; dup {
			t.Errorf("%q and %q both -> %q (without case)", id, other, n)
		}
		folded[strings.ToLower(n)] = id
	}
	for id, want := range map[string]string{"root.1-0": "root.1-0", "Foo": "Foo", "a-b": "a-b"} {
		if first[id] != want {
			t.Errorf("%q -> %q: an acceptable name is kept, first in byte order", id, first[id])
		}
	}
	if got := first["main"]; got != "" {
		t.Errorf("main is not a source id: %q", got)
	}
	// A name already taken (a stage's) is not given out.
	if n, _ := assignNames("job", []string{"MAIN"}, ok, []string{"main"}, nil); n["MAIN"] == "MAIN" {
		t.Errorf("MAIN kept the name of stage main")
	}
}

func kimiGraphSource(jobs string) map[string]string {
	return map[string]string{
		"g/state.json":    `{"run_id":"g","created_ts":"2026-07-01T12:00:00Z","current_state":"CODED","stages":{},"success_criteria":[]}`,
		"g/plan.dag.json": `{"meta":{"gas_remaining":3,"depth_max":2,"node_max":9},"nodes":{},"jobs":[` + jobs + `]}`,
	}
}

func job(id, state string, deps ...string) string {
	return `{"job_id":"` + id + `","deps":["` + strings.Join(deps, `","`) + `"],"attempts":0,"state":"` + state + `"}`
}

// An imported graph goes through every check `job add` makes: ids it refuses are
// named (one to one, the mapping in the plan and in the header's imported_from);
// a cycle, a need on a job the plan does not have, a job listed twice and the job
// cap refuse the run, with job add's kind (exit 2, 4 or 5).
func TestKimiGraphChecks(t *testing.T) {
	t.Parallel()
	nodeps := `{"job_id":"%s","deps":[],"attempts":0,"state":"PENDING"}`
	one := func(id string) string { return strings.ReplaceAll(nodeps, "%s", id) }
	for _, tc := range []struct {
		name, jobs string
		kind       error
		reason     string
		mapped     []string // source ids that must be renamed
	}{
		{name: "names", jobs: strings.Join([]string{one("union"), one("Foo"), one("foo"), one("root.1#0"), one("root.1-0"), one("é1"), one("è1"), job("z", "PENDING", "union", "root.1#0", "é1")}, ","),
			mapped: []string{"union", "foo", "root.1#0", "é1", "è1"}},
		{name: "cycle", jobs: job("a", "PENDING", "b") + "," + job("b", "PENDING", "c") + "," + job("c", "PENDING", "a"), kind: fault.ErrUsage, reason: "jobs form a cycle"},
		{name: "self", jobs: job("a", "PENDING", "a"), kind: fault.ErrUsage, reason: "cannot need itself"},
		{name: "unknown need", jobs: job("a", "PENDING", "ghost"), kind: fault.ErrNotFound, reason: `job "a" needs "ghost", which the plan does not have`},
		{name: "twice", jobs: one("a") + "," + one("a"), kind: fault.ErrUsage, reason: `job "a" is listed twice`},
		{name: "need twice", jobs: one("a") + "," + job("b", "PENDING", "a", "a"), kind: fault.ErrUsage, reason: "names need a twice"},
		{name: "cap", jobs: strings.Join([]string{one("a"), one("b"), one("c"), one("d"), one("e"), one("f"), one("g"), one("h"), one("i"), one("j")}, ","), kind: fault.ErrRefused, reason: "over its cap of 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, dir, kimiGraphSource(tc.jobs))
			plans, probs, err := ScanKimi(t.Context(), dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind != nil {
				if len(plans) != 0 || len(probs) != 1 {
					t.Fatalf("plans %d, problems %+v: want the run refused", len(plans), probs)
				}
				if !errors.Is(probs[0].Err, tc.kind) || !strings.Contains(probs[0].Reason, tc.reason) {
					t.Errorf("refusal %v (%q), want %v saying %q", probs[0].Err, probs[0].Reason, tc.kind, tc.reason)
				}
				return
			}
			if len(plans) != 1 {
				t.Fatalf("plans %d, problems %+v", len(plans), probs)
			}
			p := plans[0]
			fin := p.States[len(p.States)-1]
			seen := map[string]bool{}
			for _, j := range fin.Jobs {
				if err := ledger.CheckNodeName("job", j.ID); err != nil {
					t.Errorf("job %q: %v", j.ID, err)
				}
				if seen[strings.ToLower(j.ID)] {
					t.Errorf("job %q twice (without case)", j.ID)
				}
				seen[strings.ToLower(j.ID)] = true
			}
			for _, id := range tc.mapped {
				if p.JobIDs[id] == "" || p.JobIDs[id] == id {
					t.Errorf("%q not mapped: %v", id, p.JobIDs)
				}
			}
			if !maps.Equal(p.Header.ImportedFrom.JobIDs, p.JobIDs) {
				t.Errorf("imported_from.job_ids %v, want the mapping %v", p.Header.ImportedFrom.JobIDs, p.JobIDs)
			}
			z := fin.Job("z")
			if z == nil || !slices.Equal(z.Needs, []string{p.JobIDs["union"], p.JobIDs["root.1#0"], p.JobIDs["é1"]}) {
				t.Errorf("z's needs follow the mapping: %+v", z)
			}
		})
	}
}

// Two runs whose ids map to one name, or differ only in case, get a name each.
func TestRunNamesOneToOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const st = `{"run_id":"%s","created_ts":"2026-07-01T11:00:00Z","current_state":"OUTPUT","stages":{}}`
	files := map[string]string{}
	for d, id := range map[string]string{"1": "é1", "2": "è1", "3": "Run", "4": "run", "5": "r#1", "6": "r-1"} {
		files[d+"/state.json"] = strings.ReplaceAll(st, "%s", id)
	}
	write(t, dir, files)
	plans, probs, err := ScanKimi(t.Context(), dir, dir)
	if err != nil || len(probs) != 0 || len(plans) != 6 {
		t.Fatalf("plans %d, problems %+v, %v", len(plans), probs, err)
	}
	seen := map[string]string{}
	for _, p := range plans {
		if other, dup := seen[strings.ToLower(p.RunID)]; dup {
			t.Errorf("runs %q and %q both named %q", p.SourceID, other, p.RunID)
		}
		seen[strings.ToLower(p.RunID)] = p.SourceID
		if p.Mapped != (p.RunID != p.SourceID) || p.Header.RunID != p.RunID || p.States[len(p.States)-1].RunID != p.RunID {
			t.Errorf("%q -> %q: mapped %v, header %q", p.SourceID, p.RunID, p.Mapped, p.Header.RunID)
		}
	}
	if seen["r-1"] != "r-1" {
		t.Errorf("r-1 lost its name to r#1: %v", seen)
	}
}
