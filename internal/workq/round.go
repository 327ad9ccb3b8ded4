package workq

import (
	"context"
	"errors"
	"sync"
)

// Round tracks a set of work that ends together: a webhook delivery and everything it caused,
// or a resync. It is held once by its creator and once by every key run it is attached to;
// when the last hold is released, done is called once with the errors of the failed runs.
type Round struct {
	mu    sync.Mutex
	holds int
	errs  []error
	done  func(err error)
}

// NewRound returns a round held once by its creator, who must Release it.
func NewRound(done func(err error)) *Round { return &Round{holds: 1, done: done} }

// hold adds one hold.
func (r *Round) hold() {
	r.mu.Lock()
	r.holds++
	r.mu.Unlock()
}

// Release gives up one hold, recording err when it is not nil; the last one calls done.
func (r *Round) Release(err error) {
	r.mu.Lock()
	if err != nil {
		r.errs = append(r.errs, err)
	}
	r.holds--
	last := r.holds == 0
	err = errors.Join(r.errs...)
	r.mu.Unlock()
	if last && r.done != nil {
		r.done(err)
	}
}

type roundsKey struct{}

// WithRound makes the keys added with the returned context part of r (and of the rounds ctx
// already carries).
func WithRound(ctx context.Context, r *Round) context.Context {
	return context.WithValue(ctx, roundsKey{}, append(roundsOf(ctx), r))
}

// withRounds makes keys added with the returned context part of rounds, and of no other.
func withRounds(ctx context.Context, rounds []*Round) context.Context {
	return context.WithValue(ctx, roundsKey{}, rounds)
}

// roundsOf returns the rounds carried by ctx.
func roundsOf(ctx context.Context) []*Round {
	rs, _ := ctx.Value(roundsKey{}).([]*Round)
	return rs[:len(rs):len(rs)]
}

// release releases each round with err.
func release(rounds []*Round, err error) {
	for _, r := range rounds {
		r.Release(err)
	}
}
