package ledger

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/git-atlas/git-atlas/internal/gitid"
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
// appends an event must carry it over. Every document type has an Extra field, and a
// MarshalJSON that writes it back.
type Extra map[string]json.RawMessage

// DecodeDoc reads a ledger document into v, a pointer to a zero document. It is one
// pass of encoding/json (no document type has an UnmarshalJSON, which would cost a
// pass per nesting level: list decodes thousands of documents), then a scan of the
// keys, guided by v's type, for one this version does not know; only a document that
// has some pays for collecting them into the Extra fields. An object id that is not
// one fails naming its member (gitid.OID).
func DecodeDoc(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		if msg, ok := gitid.OIDError(err); ok {
			return errors.New(msg)
		}
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	s := keyScanner{b: data}
	if !s.unknown(rv.Type()) {
		return nil
	}
	return keepUnknown(data, rv)
}

// EncodeDoc writes a whole ledger document: one JSON object and a newline. The same
// document always encodes to the same bytes (hence the same blob): known fields in
// declaration order, or, with unknown fields, sorted keys.
func EncodeDoc(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// docType is what decoding needs to know of a struct type: its JSON field names, each
// with its index path (through an embedded struct, whose fields encoding/json promotes:
// an event payload's parts that are written together), and the index of its Extra
// field (-1 when it has none: nothing to keep).
type docType struct {
	fields map[string][]int
	extra  int
}

var docTypes sync.Map // reflect.Type -> *docType

func docTypeOf(t reflect.Type) *docType {
	if dt, ok := docTypes.Load(t); ok {
		return dt.(*docType)
	}
	dt := &docType{fields: map[string][]int{}, extra: -1}
	dt.add(t, nil)
	docTypes.Store(t, dt)
	return dt
}

// add records t's fields under the index path at (nil: t is the document itself).
func (dt *docType) add(t reflect.Type, at []int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		path := append(append([]int(nil), at...), i)
		switch {
		case f.Name == "Extra" && f.Type == reflect.TypeFor[Extra]():
			if at == nil {
				dt.extra = i
			}
		case name == "-":
		case f.Anonymous && name == "" && embeddedStruct(f.Type) != nil:
			dt.add(embeddedStruct(f.Type), path)
		case !f.IsExported():
		case name == "":
			dt.fields[f.Name] = path
		default:
			dt.fields[name] = path
		}
	}
}

// embeddedStruct is the struct type an embedded field of type t promotes the fields
// of (t, or what t points to), or nil.
func embeddedStruct(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// walked is the type decoding descends into from t: through pointers, to a struct
// or a slice; nil for anything whose content is not ours to check (maps, raw JSON,
// scalars, and values JSON holds as text, such as a gitid.OID).
func walked(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == rawMessageType || (t.Kind() != reflect.Struct && t.Kind() != reflect.Slice) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	return t
}

// keyScanner walks valid JSON (json.Unmarshal has checked it) and reports whether
// some object has a key its struct type does not know.
type keyScanner struct {
	b []byte
	i int
}

func (s *keyScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// str reads the string at s.i and returns its bytes, unescaped only when it has
// escapes (keys never do in documents git-atlas writes).
func (s *keyScanner) str() []byte {
	start, escaped := s.i+1, false
	for s.i++; s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			s.i++
			escaped = true
		}
	}
	s.i++
	if !escaped {
		return s.b[start : s.i-1]
	}
	var out string
	_ = json.Unmarshal(s.b[start-1:s.i], &out)
	return []byte(out)
}

func (s *keyScanner) unknown(t reflect.Type) bool {
	t = walked(t)
	s.ws()
	switch s.b[s.i] {
	case '{':
		var dt *docType
		if t != nil && t.Kind() == reflect.Struct {
			dt = docTypeOf(t)
		}
		s.i++
		s.ws()
		if s.b[s.i] == '}' {
			s.i++
			return false
		}
		for {
			s.ws()
			key := s.str()
			s.ws()
			s.i++ // ':'
			var ft reflect.Type
			if dt != nil {
				f, ok := dt.fields[string(key)] // no allocation: a map index by string(bytes)
				if !ok && dt.extra >= 0 {
					return true
				}
				if ok {
					ft = t.FieldByIndex(f).Type
				}
			}
			if s.unknown(ft) {
				return true
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			s.i++ // '}'
			return false
		}
	case '[':
		var et reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			et = t.Elem()
		}
		s.i++
		s.ws()
		if s.b[s.i] == ']' {
			s.i++
			return false
		}
		for {
			if s.unknown(et) {
				return true
			}
			s.ws()
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			s.i++ // ']'
			return false
		}
	case '"':
		s.str()
	default: // a number, true, false or null
	literal:
		for ; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				break literal
			}
		}
	}
	return false
}

// keepUnknown stores the unknown keys of data into the Extra fields of v, which
// json.Unmarshal has filled from the same data (slices element for element).
func keepUnknown(data []byte, v reflect.Value) error {
	t := walked(v.Type())
	if t == nil || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if t.Kind() == reflect.Slice {
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return err
		}
		for i := 0; i < len(items) && i < v.Len(); i++ {
			if err := keepUnknown(items[i], v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
	dt := docTypeOf(t)
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for k, raw := range all {
		f, ok := dt.fields[k]
		if !ok {
			continue
		}
		delete(all, k)
		fv, err := v.FieldByIndexErr(f)
		if err != nil {
			continue // an embedded pointer json.Unmarshal left nil: nothing of it to keep
		}
		if err := keepUnknown(raw, fv); err != nil {
			return err
		}
	}
	if len(all) > 0 && dt.extra >= 0 {
		v.Field(dt.extra).Set(reflect.ValueOf(Extra(all)))
	}
	return nil
}

// marshalKeep encodes v (a pointer to a method-less copy of a document type) and
// merges its Extra fields back in; a known field always wins over a kept one.
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

// The MarshalJSON of every document type: each encodes a method-less copy of itself
// (so encoding/json does not recurse) with its kept fields.

func (x Header) MarshalJSON() ([]byte, error) {
	type plain Header
	p := plain(x)
	return marshalKeep(&p)
}

func (x StageDef) MarshalJSON() ([]byte, error) {
	type plain StageDef
	p := plain(x)
	return marshalKeep(&p)
}

func (x State) MarshalJSON() ([]byte, error) {
	type plain State
	p := plain(x)
	return marshalKeep(&p)
}

func (x StageState) MarshalJSON() ([]byte, error) {
	type plain StageState
	p := plain(x)
	return marshalKeep(&p)
}

func (x Attempt) MarshalJSON() ([]byte, error) {
	type plain Attempt
	p := plain(x)
	return marshalKeep(&p)
}

func (x VerifyResult) MarshalJSON() ([]byte, error) {
	type plain VerifyResult
	p := plain(x)
	return marshalKeep(&p)
}

func (x Job) MarshalJSON() ([]byte, error) {
	type plain Job
	p := plain(x)
	return marshalKeep(&p)
}

func (x Lease) MarshalJSON() ([]byte, error) {
	type plain Lease
	p := plain(x)
	return marshalKeep(&p)
}

func (x WorktreeRec) MarshalJSON() ([]byte, error) {
	type plain WorktreeRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x SnapshotRec) MarshalJSON() ([]byte, error) {
	type plain SnapshotRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x UnionRec) MarshalJSON() ([]byte, error) {
	type plain UnionRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x ReplayRec) MarshalJSON() ([]byte, error) {
	type plain ReplayRec
	p := plain(x)
	return marshalKeep(&p)
}

func (x Event) MarshalJSON() ([]byte, error) {
	type plain Event
	p := plain(x)
	return marshalKeep(&p)
}
