package views

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// docs/contract.md §5.3: a job the last union left out for changes outside its scope,
// and one a person let in, are shown by graph (JSON and text) with the paths.
func TestGraphShowsOutsideScope(t *testing.T) {
	t.Parallel()
	r := dag8()
	r.State.Union.OutsideScope = map[string][]string{"reports": {"ui/x.go"}}
	r.State.Union.AllowedOutsideScope = map[string][]string{"db_schema": {"docs/a.md"}}
	g := Build(r)
	if !reflect.DeepEqual(g.Union.OutsideScope, []string{"reports"}) || !reflect.DeepEqual(g.Union.AllowedOutsideScope, []string{"db_schema"}) {
		t.Fatalf("union view: %+v", g.Union)
	}
	for _, n := range g.Nodes {
		switch n.ID {
		case "reports":
			if !reflect.DeepEqual(n.OutsideScope, []string{"ui/x.go"}) {
				t.Errorf("node reports: %+v", n)
			}
		case "db_schema":
			if !reflect.DeepEqual(n.AllowedOutsideScope, []string{"docs/a.md"}) {
				t.Errorf("node db_schema: %+v", n)
			}
		}
	}
	var b bytes.Buffer
	if err := Text(&b, g, TextOptions{Width: 120}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "left out, outside scope: reports") || !strings.Contains(b.String(), "allowed outside scope: db_schema") {
		t.Fatalf("text:\n%s", b.String())
	}
}
