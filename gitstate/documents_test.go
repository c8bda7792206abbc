package gitstate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/git-atlas/git-atlas/internal/git"
	"github.com/git-atlas/git-atlas/ledger"
	"github.com/git-atlas/git-atlas/ledger/ledgertest"
)

// TestStoreKeepsUnknownFields goes through the store: a ledger written by a newer
// git-atlas (same schema, more fields) gets an event appended by this one.
func TestStoreKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	for _, kind := range repoKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t, kind)
			baseID, _ := repo.ResolveCommit(ctx, git.HeadRev())
			base := baseID.String()
			blob := func(s string) string {
				id, err := repo.WriteBlob(ctx, []byte(s+"\n"))
				if err != nil {
					t.Fatal(err)
				}
				return id.String()
			}
			runBlob := blob(strings.Replace(ledgertest.FutureRun, "BASE", base, 1))
			tree, err := repo.WriteTree(ctx, []git.TreeEntry{{Name: "run.json", Blob: runBlob}, {Name: "state.json", Blob: blob(ledgertest.FutureState)}, {Name: "event.json", Blob: blob(ledgertest.FutureEvent)}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := repo.WriteCommit(ctx, tree, nil, "atlas: run_started r\n")
			if err != nil {
				t.Fatal(err)
			}
			if err := repo.UpdateRefs(ctx, "", git.RefUpdate{Name: RunRef("r"), New: c.String(), Old: git.ZeroID}); err != nil {
				t.Fatal(err)
			}
			s := New(repo)
			r, err := s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
				r.State.Stages[0].Status = ledger.StageDispatched
				r.State.Jobs[0].Attempts = 1
				return &Change{Event: ledger.Event{Type: "note"}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			blobs, err := repo.BlobsAt(ctx, []git.BlobSpec{at(t, r.Tip, "run.json"), at(t, r.Tip, "state.json"), {Commit: c, Path: "event.json"}})
			if err != nil {
				t.Fatal(err)
			}
			if blobs[0].ID != runBlob {
				t.Errorf("run.json was rewritten: %s, want the original blob %s", blobs[0].ID, runBlob)
			}
			for i, doc := range []string{"run.json", "state.json", "event.json"} {
				for _, f := range ledgertest.FutureFields[doc] {
					if !bytes.Contains(blobs[i].Data, []byte(f)) {
						t.Errorf("%s lost %s:\n%s", doc, f, blobs[i].Data)
					}
				}
			}
			if !bytes.Contains(blobs[1].Data, []byte(`"status":"dispatched"`)) || !bytes.Contains(blobs[1].Data, []byte(`"seq":2`)) {
				t.Errorf("state.json did not take the change: %s", blobs[1].Data)
			}
			// log re-encodes events for --json: the first one keeps its unknown field.
			events, err := s.Log(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			doc, _ := MarshalEvent(&events[0])
			if len(events) != 2 || !bytes.Contains(doc, []byte(`"future_event":[true]`)) {
				t.Errorf("log: %d events, first %s", len(events), doc)
			}
			hdr, _ := MarshalHeader(&r.Header)
			if !bytes.Contains(hdr, []byte(`"future_header":"h"`)) {
				t.Errorf("show --json header lost a field: %s", hdr)
			}
		})
	}
}
