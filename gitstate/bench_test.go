package gitstate

import (
	"context"
	"github.com/git-atlas/git-atlas/ledger"
	"testing"
)

// BenchmarkUpdate is one durable event append (objects and ref flushed) from one
// process: go-git objects plus one `update-ref --stdin`, or the CLI fallback's forks.
// bench/append.sh compares it with the same event made by git plumbing processes.
func BenchmarkUpdate(b *testing.B) {
	for _, kind := range repoKinds {
		b.Run(kind.name, func(b *testing.B) {
			repo := newRepo(b, kind)
			s := New(repo)
			newRun(b, s, "r", ledger.StageDef{Name: "plan"}, ledger.StageDef{Name: "code"})
			ctx := context.Background()
			data := []byte(`{"msg":"a benchmark event"}`)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Update(ctx, "r", func(r *ledger.Run) (*Change, error) {
					return &Change{Event: ledger.Event{Type: "note", Stage: "code", Data: data}}, nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
