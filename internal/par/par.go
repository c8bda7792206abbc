// Package par is the one way git-atlas runs independent checks in parallel: a bounded
// number at once, each error kept at its input's index, gathered in input order so
// that the same failures always read the same way.
package par

import (
	"runtime"
	"sync"

	"github.com/hashicorp/go-multierror"
)

// Each calls fn(i) for every i in [0, n), at most limit at once (limit <= 0:
// GOMAXPROCS), and returns when all have returned; errs[i] is fn(i)'s error. Each fn
// must write only what belongs to its own i.
func Each(n, limit int, fn func(i int) error) (errs []error) {
	errs = make([]error, n)
	if limit <= 0 {
		limit = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}

// Join gathers the non-nil errors of errs, in order, into one *multierror.Error; nil
// when there are none.
func Join(errs []error) error {
	var all *multierror.Error
	for _, e := range errs {
		if e != nil {
			all = multierror.Append(all, e)
		}
	}
	return all.ErrorOrNil()
}

// Walk calls fn for every item of roots and for every item that fn adds (with add,
// from the goroutine it was given), at most limit at once (limit <= 0: GOMAXPROCS),
// and returns when no item is waiting and none is running. It is for work that finds
// more work as it goes: directories whose listing finds more directories. The order
// items run in is not defined; fn keeps what it finds where the caller can order it.
func Walk[T any](limit int, roots []T, fn func(item T, add func(T))) {
	if limit <= 0 {
		limit = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	more := sync.NewCond(&mu)
	queue := append([]T(nil), roots...)
	running := 0
	add := func(item T) {
		mu.Lock()
		queue = append(queue, item)
		mu.Unlock()
		more.Signal()
	}
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(queue) == 0 && running > 0 {
					more.Wait()
				}
				if len(queue) == 0 {
					more.Broadcast() // nothing waiting, nothing running: every worker ends
					return
				}
				item := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				running++
				mu.Unlock()
				fn(item, add)
				mu.Lock()
				running--
				if running == 0 && len(queue) == 0 {
					more.Broadcast()
				}
			}
		})
	}
	wg.Wait()
}
