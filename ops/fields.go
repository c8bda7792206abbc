package ops

import (
	"github.com/git-atlas/git-atlas/internal/fault"
	"maps"
	"slices"
)

// What the fields of the requests' shared parts (Driver, Worker, SnapshotOptions)
// mean, in one text per field that every front end shows: the command line's help
// and the MCP tools' input schemas read it here (docs/contract.md §4.6). A {field} in
// a text names another field, and each front end spells it its own way, as it spells
// the fields an error names (fault.Spelled): --ignored-cap on the command line,
// ignored_cap over MCP.
var fieldHelp = map[string]string{
	"driver_holder":            "Who drives the run: takes a free driver lease, or renews your own; another live driver's run is refused (exit 3).",
	"driver_session":           "Your agent session (default $ATLAS_SESSION): a session takes its own run back at once, whatever the holder name.",
	"driver_take_over":         "Replace the live driver you found (recorded as driver_taken_over); loses (exit 3) if another writer replaced it first.",
	"driver_ttl":               "How long the driver lease lasts (default 10m).",
	"worker_holder":            "The worker holding the job's lease (recorded; never the run's driver).",
	"worker_ttl":               "How long the job lease lasts (default 10m).",
	"snapshot_include_ignored": "Copy ignored files into the snapshot, up to {ignored_cap} in total (they are always listed).",
	"snapshot_ignored_cap":     "Size cap of the ignored files {include_ignored} copies (e.g. 500KiB, 100MiB, 1GiB; default 100MiB).",
}

// FieldHelp is the text of the field key names, each {field} in it spelled by spell;
// "" for a key that names no field.
func FieldHelp(key string, spell func(field string) string) string {
	return fault.Text{Format: fieldHelp[key]}.Spell(fault.Spelling{Field: spell})
}

// FieldHelpKeys are the keys of every field's text, sorted.
func FieldHelpKeys() []string { return slices.Sorted(maps.Keys(fieldHelp)) }
