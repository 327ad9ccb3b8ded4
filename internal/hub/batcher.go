package hub

import (
	"context"
	"errors"
	"sync"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// maxBatch bounds the reports written in one transaction.
const maxBatch = 2000

// ErrStopped is returned for reports submitted after the hub stopped.
var ErrStopped = errors.New("hub: stopped")

// pending is a report waiting to be written, and where its outcome goes.
type pending struct {
	report store.Report
	done   chan result
}

type result struct {
	outcome store.Outcome
	err     error
}

// batcher writes reports in group commits: one writer takes every report waiting, writes
// them in one transaction and only then answers each, so that an accepted report is durable.
type batcher struct {
	in      chan pending
	write   func(ctx context.Context, batch []store.Report) ([]store.Outcome, error)
	written func(batch []store.Report, outcomes []store.Outcome)
}

func newBatcher(queue int, write func(context.Context, []store.Report) ([]store.Outcome, error),
	written func([]store.Report, []store.Outcome)) *batcher {
	return &batcher{in: make(chan pending, queue), write: write, written: written}
}

// submit queues r and waits for its outcome.
func (b *batcher) submit(ctx context.Context, r store.Report) (store.Outcome, error) {
	p := pending{report: r, done: make(chan result, 1)}
	select {
	case b.in <- p:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case res := <-p.done:
		return res.outcome, res.err
	case <-ctx.Done():
		return 0, ctx.Err() // it may still be written: a report is idempotent
	}
}

// runWriters runs n writers (one for SQLite, which has one writer at a time; several for
// PostgreSQL, whose transactions run side by side) until ctx ends.
func (b *batcher) runWriters(n int) func(context.Context) {
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		for range max(1, n) {
			wg.Add(1)
			go func() { defer wg.Done(); b.run(ctx) }()
		}
		wg.Wait()
	}
}

// run writes batches until ctx ends, then answers what is left with ErrStopped.
func (b *batcher) run(ctx context.Context) {
	batch := make([]pending, 0, maxBatch)
	for {
		select {
		case <-ctx.Done():
			b.drain()
			return
		case p := <-b.in:
			batch = append(batch[:0], p)
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case p := <-b.in:
				batch = append(batch, p)
			default:
				break fill
			}
		}
		b.flush(context.WithoutCancel(ctx), batch)
	}
}

// flush writes one batch and answers its reports.
func (b *batcher) flush(ctx context.Context, batch []pending) {
	reports := make([]store.Report, len(batch))
	for i, p := range batch {
		reports[i] = p.report
	}
	outcomes, err := b.write(ctx, reports)
	for i, p := range batch {
		if err != nil {
			p.done <- result{err: err}
			continue
		}
		p.done <- result{outcome: outcomes[i]}
	}
	if err == nil && b.written != nil {
		b.written(reports, outcomes)
	}
}

// drain answers the reports still queued.
func (b *batcher) drain() {
	for {
		select {
		case p := <-b.in:
			p.done <- result{err: ErrStopped}
		default:
			return
		}
	}
}
