package recovery_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/internal/testenv"
	"github.com/git-atlas/git-atlas/internal/testknob"
	"github.com/git-atlas/git-atlas/recovery"
)

// A snapshot's manifest is pulled with the snapshot (docs/contract.md §10), and a
// Target's baseline goes into it: no member of Manifest or Target (nor of the types
// they hold) whose Go or JSON name says id, head, baseline, tree or pending holds an
// object id as text; each is a gitid.OID, or is listed in textMembers with what it
// holds instead.
func TestManifestHoldsNoIDStrings(t *testing.T) {
	t.Parallel()
	idWords := map[string]bool{"id": true, "ids": true, "oid": true, "sha": true, "commit": true, "tree": true,
		"base": true, "baseline": true, "head": true, "parent": true, "pending": true}
	textMembers := map[string]string{"Manifest.Run": "a run name"}
	oid := reflect.TypeFor[gitid.OID]()
	checked, typed := 0, 0
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ == oid {
			return
		}
		seen[typ] = true
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			walk(f.Type)
			elem := f.Type
			for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice || elem.Kind() == reflect.Map {
				elem = elem.Elem()
			}
			if elem == oid {
				typed++
			}
			if elem.Kind() != reflect.String {
				continue
			}
			checked++
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			for _, w := range append(testknob.NameWords(f.Name), testknob.NameWords(jsonName)...) {
				if idWords[w] && textMembers[typ.Name()+"."+f.Name] == "" {
					t.Errorf("%s.%s (%q) is %s: an object id is a gitid.OID", typ.Name(), f.Name, jsonName, f.Type)
					break
				}
			}
		}
	}
	walk(reflect.TypeFor[recovery.Manifest]())
	walk(reflect.TypeFor[recovery.Target]())
	if checked < 10 || typed < 6 {
		t.Fatalf("%d text members and %d ids checked: the walk is broken", checked, typed)
	}
}

// manifest.json encodes as it did when its ids were strings (the snapshot id hashes
// it): an unborn HEAD and no pending operation are left out, an empty baseline is "".
func TestManifestEncodingUnchanged(t *testing.T) {
	t.Parallel()
	tree := testenv.HexOID("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	m := recovery.Manifest{Schema: 1, Source: recovery.SourceWorktree, Run: "r", Tree: tree, IndexTree: tree}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":1,"source":"worktree","run_id":"r","baseline":"","tree":"` + tree.String() + `","index_tree":"` + tree.String() + `"}`
	if string(b) != want {
		t.Errorf("manifest encodes as\n%s\nwant\n%s", b, want)
	}
	m.Head, m.Baseline, m.Pending = testenv.HexOID("h"), testenv.HexOID("b"), map[string]gitid.OID{"MERGE_HEAD": testenv.HexOID("m")}
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"schema":1,"source":"worktree","run_id":"r","head":"` + testenv.HexOID("h").String() + `","baseline":"` + testenv.HexOID("b").String() +
		`","tree":"` + tree.String() + `","index_tree":"` + tree.String() + `","pending":{"MERGE_HEAD":"` + testenv.HexOID("m").String() + `"}}`
	if string(b) != want {
		t.Errorf("manifest encodes as\n%s\nwant\n%s", b, want)
	}
}

// A snapshot read back (Open) holds its trees as object ids, parsed where git's answer
// is read, never as text.
func TestSnapHoldsTreesAsIDs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Tree", "IndexTree", "MetaTree"} {
		if f, ok := reflect.TypeFor[recovery.Snap]().FieldByName(name); !ok || f.Type != reflect.TypeFor[gitid.OID]() {
			t.Errorf("Snap.%s is %v: a tree is a gitid.OID", name, f.Type)
		}
	}
}
