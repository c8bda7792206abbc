package gitstate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Schema is the version of run.json, state.json and event.json this build writes.
const Schema = 1

// ErrNewerSchema refuses to rewrite a document from a newer git-atlas.
type ErrNewerSchema struct {
	Doc   string
	Found int
}

func (e *ErrNewerSchema) Error() string {
	return fmt.Sprintf("%s has schema %d, newer than this git-atlas understands (%d): upgrade git-atlas", e.Doc, e.Found, Schema)
}

// Extra keeps the fields of a JSON document that this version does not know, so that
// rewriting the document never drops them.
type Extra map[string]json.RawMessage

// unmarshalKeep decodes data into v (a pointer to a struct with an `Extra` field tagged
// `json:"-"`) and stores the unknown top-level fields in that field.
func unmarshalKeep(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	for _, k := range jsonKeys(rv.Type()) {
		delete(all, k)
	}
	if len(all) > 0 {
		rv.FieldByName("Extra").Set(reflect.ValueOf(Extra(all)))
	}
	return nil
}

// marshalKeep encodes v and merges its Extra fields back in. Keys are sorted (encoding
// a map), so the same document always gives the same bytes, and the same blob.
func marshalKeep(v any) ([]byte, error) {
	known, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	extra := reflect.ValueOf(v).Elem().FieldByName("Extra").Interface().(Extra)
	if len(extra) == 0 {
		return append(known, '\n'), nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(known, &all); err != nil {
		return nil, err
	}
	for k, raw := range extra {
		if _, ok := all[k]; !ok {
			all[k] = raw
		}
	}
	out, err := json.Marshal(all)
	return append(out, '\n'), err
}

func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		keys = append(keys, name)
	}
	return keys
}
