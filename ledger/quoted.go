package ledger

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// What an event's data says in the words of the command that wrote it
// (docs/contract.md §6). Some members of an event's data quote what the ledger held
// when the event was written: the driver lease a take-over replaced (its holder is
// whatever the other driver named itself), the path a worktree record gave, the
// owner a header names. Those are tagged atlas:"quoted" in the payload types; a MAC
// over the event (textmac.go) proves the event is as this clone wrote it, not that a
// quoted value is this clone's text, so WrittenData leaves them out.

// tagged reports whether f's atlas tag lists what.
func tagged(f reflect.StructField, what string) bool {
	return slices.Contains(strings.Split(f.Tag.Get("atlas"), ","), what)
}

// quotedMembers are the JSON names of t's members tagged atlas:"quoted", those of an
// embedded struct (whose members JSON flattens) included.
func quotedMembers(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		if f.Anonymous {
			out = append(out, quotedMembers(f.Type)...)
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); tagged(f, "quoted") && name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// quotedByType are, per event type, the members of its data that quote the ledger:
// built on first use, since walking every payload type by reflection at package
// initialisation cost every command's start-up (issue 34), whether it reads events or not.
var quotedByType = sync.OnceValue(func() map[EventType][]string {
	m := map[EventType][]string{}
	for _, e := range catalogue {
		if q := quotedMembers(e.Payload); len(q) > 0 {
			m[e.Type] = q
		}
	}
	return m
})

// WrittenData is e's data decoded (JSON values: maps, slices, strings, numbers),
// without the members that quote what the ledger held (atlas:"quoted"): what the
// command that wrote e said in its own words.
func WrittenData(e *Event) (any, error) {
	var data any
	if len(e.Data) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return nil, err
	}
	if obj, ok := data.(map[string]any); ok {
		for _, name := range quotedByType()[e.Type] {
			delete(obj, name)
		}
	}
	return data, nil
}
