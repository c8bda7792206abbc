package gitstate

import (
	"bytes"
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
	return fmt.Sprintf("%s has schema %d, newer than this git-atlas writes (%d): it can be read but not changed", e.Doc, e.Found, Schema)
}

// Extra keeps the fields of a JSON document that this version does not know, so that
// rewriting the document never drops them: a newer git-atlas may add a field to the
// state or to any object in it (a stage, a job, an attempt), and an older one that
// appends an event must carry it over. Every document type has an Extra field and the
// JSON methods below.
type Extra map[string]json.RawMessage

// decodeDoc and encodeDoc read and write a whole ledger document: one JSON object
// and a newline. The same document always encodes to the same bytes (hence the same
// blob): known fields in declaration order, or, with unknown fields, sorted keys.
func decodeDoc(data []byte, v any) error { return json.Unmarshal(data, v) }

func encodeDoc(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// unmarshalKeep decodes data into v (a pointer to a struct, without JSON methods, with
// an `Extra` field tagged `json:"-"`) and stores the unknown fields in that field.
func unmarshalKeep(data []byte, v any) error {
	extra := reflect.ValueOf(v).Elem().FieldByName("Extra")
	extra.Set(reflect.Zero(extra.Type()))
	// Fast path: nearly every document holds known fields only, and one strict
	// decode proves it; the second decode below is paid only when it fails.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err == nil && len(bytes.TrimSpace(data[dec.InputOffset():])) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil || all == nil {
		return err
	}
	for _, k := range jsonKeys(reflect.TypeOf(v).Elem()) {
		delete(all, k)
	}
	if len(all) > 0 {
		extra.Set(reflect.ValueOf(Extra(all)))
	}
	return nil
}

// marshalKeep encodes v (a pointer like unmarshalKeep's) and merges its Extra fields
// back in; a known field always wins over an unknown one of the same name.
func marshalKeep(v any) ([]byte, error) {
	known, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	extra := reflect.ValueOf(v).Elem().FieldByName("Extra").Interface().(Extra)
	if len(extra) == 0 {
		return known, nil
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
	return json.Marshal(all)
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

// The JSON methods of every document type: each converts to a method-less copy of
// itself (so encoding/json does not recurse) and keeps unknown fields.

func (x *Header) UnmarshalJSON(b []byte) error {
	type plain Header
	return unmarshalKeep(b, (*plain)(x))
}
func (x Header) MarshalJSON() ([]byte, error) {
	type plain Header
	p := plain(x)
	return marshalKeep(&p)
}

func (x *StageDef) UnmarshalJSON(b []byte) error {
	type plain StageDef
	return unmarshalKeep(b, (*plain)(x))
}
func (x StageDef) MarshalJSON() ([]byte, error) {
	type plain StageDef
	p := plain(x)
	return marshalKeep(&p)
}

func (x *State) UnmarshalJSON(b []byte) error { type plain State; return unmarshalKeep(b, (*plain)(x)) }
func (x State) MarshalJSON() ([]byte, error)  { type plain State; p := plain(x); return marshalKeep(&p) }

func (x *StageState) UnmarshalJSON(b []byte) error {
	type plain StageState
	return unmarshalKeep(b, (*plain)(x))
}
func (x StageState) MarshalJSON() ([]byte, error) {
	type plain StageState
	p := plain(x)
	return marshalKeep(&p)
}

func (x *Attempt) UnmarshalJSON(b []byte) error {
	type plain Attempt
	return unmarshalKeep(b, (*plain)(x))
}
func (x Attempt) MarshalJSON() ([]byte, error) {
	type plain Attempt
	p := plain(x)
	return marshalKeep(&p)
}

func (x *VerifyResult) UnmarshalJSON(b []byte) error {
	type plain VerifyResult
	return unmarshalKeep(b, (*plain)(x))
}
func (x VerifyResult) MarshalJSON() ([]byte, error) {
	type plain VerifyResult
	p := plain(x)
	return marshalKeep(&p)
}

func (x *Job) UnmarshalJSON(b []byte) error { type plain Job; return unmarshalKeep(b, (*plain)(x)) }
func (x Job) MarshalJSON() ([]byte, error)  { type plain Job; p := plain(x); return marshalKeep(&p) }

func (x *Lease) UnmarshalJSON(b []byte) error { type plain Lease; return unmarshalKeep(b, (*plain)(x)) }
func (x Lease) MarshalJSON() ([]byte, error)  { type plain Lease; p := plain(x); return marshalKeep(&p) }

func (x *WorktreeRec) UnmarshalJSON(b []byte) error {
	type plain WorktreeRec
	return unmarshalKeep(b, (*plain)(x))
}
func (x WorktreeRec) MarshalJSON() ([]byte, error) {
	type plain WorktreeRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x *SnapshotRec) UnmarshalJSON(b []byte) error {
	type plain SnapshotRec
	return unmarshalKeep(b, (*plain)(x))
}
func (x SnapshotRec) MarshalJSON() ([]byte, error) {
	type plain SnapshotRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x *UnionRec) UnmarshalJSON(b []byte) error {
	type plain UnionRec
	return unmarshalKeep(b, (*plain)(x))
}
func (x UnionRec) MarshalJSON() ([]byte, error) {
	type plain UnionRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x *ReplayRec) UnmarshalJSON(b []byte) error {
	type plain ReplayRec
	return unmarshalKeep(b, (*plain)(x))
}
func (x ReplayRec) MarshalJSON() ([]byte, error) {
	type plain ReplayRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x *Event) UnmarshalJSON(b []byte) error { type plain Event; return unmarshalKeep(b, (*plain)(x)) }
func (x Event) MarshalJSON() ([]byte, error)  { type plain Event; p := plain(x); return marshalKeep(&p) }
