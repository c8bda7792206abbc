package gitstate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/gitid"
	"github.com/git-atlas/git-atlas/internal/testknob"
	"github.com/git-atlas/git-atlas/ledger"
)

// idDocuments is one document of each kind with every object id it can hold set to
// placeholder (issue 29: a document holds ids as gitid.OID, decoded through ParseOID).
func idDocuments() map[string]any {
	p := placeholder
	return map[string]any{
		"run.json": &ledger.Header{RunID: "r", Baseline: p},
		"state.json": &ledger.State{RunID: "r",
			Stages:    []ledger.StageState{{Name: "s", Attempts: []ledger.Attempt{{N: 1, Baseline: p}}}},
			Worktrees: []ledger.WorktreeRec{{Node: "n", Baseline: p, Head: p}},
			Snapshots: []ledger.SnapshotRec{{ID: "n-1", Commit: p}},
			Union:     &ledger.UnionRec{Head: p},
			Replays:   []ledger.ReplayRec{{Stage: "s", Baseline: p}},
		},
	}
}

// keyBefore is the JSON key whose value starts at i in doc.
func keyBefore(doc string, i int) string {
	end := strings.LastIndex(doc[:i], `":`)
	start := strings.LastIndex(doc[:end], `"`)
	return doc[start+1 : end]
}

// everyOccurrence calls f with doc where the n-th occurrence of old is new, for each n,
// and the key that held it.
func everyOccurrence(doc, old, new string, f func(key, edited string)) int {
	n := 0
	for i := strings.Index(doc, old); i >= 0; {
		f(keyBefore(doc, i), doc[:i]+new+doc[i+len(old):])
		n++
		next := strings.Index(doc[i+len(old):], old)
		if next < 0 {
			break
		}
		i += len(old) + next
	}
	return n
}

// A hand-edited document with text that is not an object id in any id member is
// refused when it is decoded, the error naming the member and the value; none
// decodes into a value that could reach git.
func TestDecodeRefusesAnIDThatIsNot(t *testing.T) {
	t.Parallel()
	for name, v := range idDocuments() {
		b, err := ledger.EncodeDoc(v)
		if err != nil {
			t.Fatal(err)
		}
		n := everyOccurrence(string(b), placeholder.String(), "--output=../README", func(key, edited string) {
			got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
			err := ledger.DecodeDoc([]byte(edited), got)
			if err == nil || !strings.Contains(err.Error(), key+` "--output=../README" is not an object id`) {
				t.Errorf("%s with %s forged: %v", name, key, err)
			}
		})
		if n == 0 {
			t.Fatalf("%s holds no id", name)
		}
	}
	for _, bad := range []string{`1`, `true`, `"abc1234"`, `"HEAD"`, `"` + strings.ToUpper(sha40) + `"`} {
		var h ledger.Header
		if err := ledger.DecodeDoc([]byte(`{"run_id":"r","baseline":`+bad+`}`), &h); err == nil || !strings.Contains(err.Error(), "baseline") {
			t.Errorf("baseline %s: %v", bad, err)
		}
	}
}

// The same for every id member of every event payload: each row of previousRelease
// with one of its ids forged.
func TestPayloadRefusesAnIDThatIsNot(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tc := range previousRelease {
		everyOccurrence(tc.data, sha40, "--output=../README", func(key, edited string) {
			seen[string(tc.typ)+"."+key] = true
			e := ledger.Event{Type: tc.typ, Data: json.RawMessage(edited)}
			_, err := e.Payload()
			if err == nil || !strings.Contains(err.Error(), key+` "--output=../README" is not an object id`) {
				t.Errorf("%s with %s forged: %v", tc.typ, key, err)
			}
		})
	}
	// Every id member of a payload is exercised: those the types hold.
	for _, info := range ledger.Events() {
		if info.Payload == nil {
			continue
		}
		for _, key := range oidMembers(info.Payload, "") {
			if !seen[string(info.Type)+"."+key] {
				t.Errorf("%s: no row of previousRelease holds %s", info.Type, key)
			}
		}
	}
}

// oidMembers are the JSON names of t's gitid.OID members (through embedded and
// nested structs: the last name).
func oidMembers(t reflect.Type, _ string) []string {
	var out []string
	walkFields(t, map[reflect.Type]bool{}, func(f reflect.StructField) {
		if f.Type == reflect.TypeFor[gitid.OID]() {
			out = append(out, jsonName(f))
		}
	})
	return out
}

// walkFields calls f on every field of t and of the structs it holds.
func walkFields(t reflect.Type, seen map[reflect.Type]bool, f func(reflect.StructField)) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[gitid.OID]() {
		return
	}
	seen[t] = true
	for sf := range t.Fields() {
		if !sf.IsExported() || sf.Name == "Extra" {
			continue
		}
		f(sf)
		walkFields(sf.Type, seen, f)
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// notObjectIDs are the text members of the documents and payloads whose names say
// id, head, commit or the like but that hold no object id: names, tokens, paths.
var notObjectIDs = map[string]string{
	"Header.RunID": "a run name", "State.RunID": "a run name", "Job.ID": "a job name", "Job.Parent": "a job name",
	"Job.ThreadID": "an agent's thread id", "Attempt.ThreadID": "an agent's thread id",
	"SnapshotRec.ID": "a snapshot id (a file name)", "ImportedFrom.SourceID": "the source system's run id",
	"ImportedFrom.JobIDs": "job names", "StageTransitionData.ThreadID": "an agent's thread id",
	"JobClaimedData.ThreadID": "an agent's thread id", "ReapedJob.ID": "a job name", "SnapshotData.ID": "a snapshot id",
	"ImportedKimi.JobIDs": "job names", "summaryHeader.RunID": "a run name",
}

// idWords are the words of a member's name that say it may hold an object id, as
// internal/archtest's TestGitTakesTypedIDs reads parameter names.
var idWords = map[string]bool{"id": true, "ids": true, "oid": true, "sha": true, "commit": true, "tree": true,
	"tip": true, "base": true, "baseline": true, "head": true, "parent": true, "old": true, "new": true, "union": true}

// No document or payload holds an object id as text: a member whose Go or JSON name
// says id, baseline, commit, head, tree (or is landed's old, new and union) is a
// gitid.OID, or is listed in notObjectIDs with what it holds instead.
func TestDocumentsHoldNoIDStrings(t *testing.T) {
	t.Parallel()
	roots := []reflect.Type{reflect.TypeFor[ledger.Header](), reflect.TypeFor[ledger.State](), reflect.TypeFor[ledger.Event](), reflect.TypeFor[summaryHeader]()}
	for _, info := range ledger.Events() {
		if info.Payload != nil {
			roots = append(roots, info.Payload)
		}
	}
	checked := 0
	for _, root := range roots {
		seen := map[reflect.Type]bool{}
		var owner func(reflect.Type)
		owner = func(typ reflect.Type) {
			for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Struct || seen[typ] || typ == reflect.TypeFor[gitid.OID]() {
				return
			}
			seen[typ] = true
			for f := range typ.Fields() {
				if !f.IsExported() || f.Name == "Extra" {
					continue
				}
				owner(f.Type)
				if !textual(f.Type) {
					continue
				}
				checked++
				words := append(testknob.NameWords(f.Name), testknob.NameWords(jsonName(f))...)
				for _, w := range words {
					if idWords[w] {
						if notObjectIDs[typ.Name()+"."+f.Name] == "" {
							t.Errorf("%s.%s (%q) is %s: an object id is a gitid.OID (or list it in notObjectIDs with what it holds)", typ.Name(), f.Name, jsonName(f), f.Type)
						}
						break
					}
				}
			}
		}
		owner(root)
	}
	if checked < 50 {
		t.Fatalf("only %d text members checked: the walk is broken", checked)
	}
}

// textual reports whether t holds text: a string, or strings in a slice or map.
func textual(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return false // raw JSON
		}
		t = t.Elem()
	}
	return t.Kind() == reflect.String
}
