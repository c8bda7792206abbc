package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// watcher notices changes of the refs under refs/atlas/ cheaply (docs/contract.md §16): it stats
// a few loose ref directories under refs/atlas, packed-refs and reftable's table list
// once per period, never reading a run. A ref update renames a lock file into its
// directory, which changes the directory's modification time; a new subdirectory is
// found when its parent's time changes. It polls only while a page listens.
type watcher struct {
	common string
	poll   time.Duration

	mu   sync.Mutex
	gen  uint64
	subs map[chan uint64]bool
	stop context.CancelFunc
	seen map[string]time.Time // path -> modification time ({} for a missing path)
}

func newWatcher(common string, poll time.Duration) *watcher {
	return &watcher{common: common, poll: poll, subs: map[chan uint64]bool{}}
}

// snapshot is every watched path's modification time: refs/atlas and its direct
// subdirectories (every ledger write moves its run's ref under refs/atlas/runs, so
// one directory's time says a run changed; snapshot, pin and diverged refs are
// written with a ledger write), everything under refs/atlas/runs, packed-refs and
// reftable's list. The deep per-run directories of pins are not looked at: their
// number grows with the runs.
func (w *watcher) snapshot(prev map[string]time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	stat := func(p string) (os.FileInfo, bool) {
		fi, err := os.Stat(p)
		if err != nil {
			out[p] = time.Time{}
			return nil, false
		}
		out[p] = fi.ModTime()
		return fi, true
	}
	stat(filepath.Join(w.common, "packed-refs"))
	stat(filepath.Join(w.common, "reftable", "tables.list"))
	children := map[string][]string{} // the directories seen before, by parent
	for p := range prev {
		d := filepath.Dir(p)
		children[d] = append(children[d], p)
	}
	root := filepath.Join(w.common, filepath.FromSlash("refs/atlas")) // the loose refs, not git.Layout's atlas/
	runs := filepath.Join(root, "runs")
	var walk func(dir string)
	walk = func(dir string) {
		fi, ok := stat(dir)
		if !ok || !fi.IsDir() || (dir != root && filepath.Dir(dir) == root && dir != runs) {
			return // refs/atlas's other subdirectories: their own time only
		}
		if t, known := prev[dir]; known && t.Equal(fi.ModTime()) {
			for _, c := range children[dir] { // unchanged: the subdirectories seen before
				walk(c)
			}
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.IsDir() {
				walk(filepath.Join(dir, e.Name()))
			}
		}
	}
	walk(root)
	return out
}

func changed(a, b map[string]time.Time) bool {
	if len(a) != len(b) {
		return true
	}
	for p, t := range a {
		if u, ok := b[p]; !ok || !u.Equal(t) {
			return true
		}
	}
	return false
}

// subscribe returns a channel that receives the generation at each change, and the
// function that ends the subscription. The first subscriber starts the polling.
func (w *watcher) subscribe() (<-chan uint64, func()) {
	ch := make(chan uint64, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[ch] = true
	if w.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.stop = cancel
		w.seen = w.snapshot(nil)
		go w.run(ctx)
	}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, ch)
		if len(w.subs) == 0 && w.stop != nil {
			w.stop()
			w.stop = nil
		}
	}
}

func (w *watcher) run(ctx context.Context) {
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		prev := w.seen
		w.mu.Unlock()
		now := w.snapshot(prev)
		if !changed(prev, now) {
			continue
		}
		w.mu.Lock()
		w.seen = now
		w.gen++
		for ch := range w.subs {
			select {
			case <-ch: // drop an unread older generation: the newest is what counts
			default:
			}
			ch <- w.gen
		}
		w.mu.Unlock()
	}
}

// events is /events: server-sent events, one "refs" event each time the refs under
// refs/atlas/ change, until the client goes or the server stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	ch, done := s.watch.subscribe()
	defer done()
	fmt.Fprint(w, "retry: 2000\n: listening\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case g := <-ch:
			fmt.Fprintf(w, "event: refs\ndata: %d\n\n", g)
			fl.Flush()
		}
	}
}
