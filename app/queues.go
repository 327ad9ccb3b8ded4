package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// Router turns verified deliveries into work (see handlers.Core.Route).
type Router interface {
	// Events lists the event types it routes; others are answered 202 without work.
	Events() []string
	// Route adds the keys of work an event names to the queue, with ctx (which carries the
	// delivery's round), without any I/O; it reports whether the event is one of the app's
	// own echoes, which names no work.
	Route(ctx context.Context, event string, payload []byte) (echo bool, err error)
}

// Queue is the app's work: the lanes of workers keys are added to (the main lane, and the
// previews' own lane). It implements handlers.Queue.
type Queue struct {
	lanes map[workq.Lane]*workq.Queue
}

// Add adds a key of work to its lane.
func (q *Queue) Add(ctx context.Context, key workq.Key, need workq.Need) error {
	lane := q.lanes[key.Lane]
	if lane == nil {
		return fmt.Errorf("no lane %d for %s", key.Lane, key)
	}
	return lane.Add(ctx, key, need)
}

// Queue returns the app's work queue, for the handlers to add work to.
func (s *Server) Queue() *Queue { return s.queue }

// newQueue builds the lanes: workers of the main lane, preview.workers of the previews', each
// key retried queue.maxAttempts times with backoff and run under handlerTimeout. The main lane
// holds at most queueSize distinct keys waiting, the previews' lane as many: a pull request is
// one key however often it is pushed to.
func (s *Server) newQueue() *Queue {
	c := s.cfg
	run := s.opts.run
	if run == nil {
		run = func(context.Context, workq.Key, workq.Need) error { return nil }
	}
	common := []workq.Option{
		workq.WithRetries(c.Queue.MaxAttempts, c.Queue.RetryDelay.Std(), c.Queue.MaxRetryDelay.Std()),
		workq.WithRunTimeout(c.HandlerTimeout.Std()),
		workq.WithLogger(s.logger), workq.WithRedact(s.tokens.redact), workq.WithMetrics(s.registry), workq.WithMaxKeys(c.QueueSize),
	}
	ctx := s.logger.WithContext(s.workCtx)
	return &Queue{lanes: map[workq.Lane]*workq.Queue{
		workq.LaneMain:    workq.New(ctx, "work", run, append(common, workq.WithWorkers(c.Workers))...),
		workq.LanePreview: workq.New(ctx, "preview", run, append(common, workq.WithWorkers(c.Preview.Workers))...),
	}}
}

// start starts every lane's workers.
func (q *Queue) start() {
	for _, l := range q.lanes {
		l.Start()
	}
}

// stop stops every lane (see workq.Queue.Stop) within ctx.
func (q *Queue) stop(ctx context.Context) error {
	var errs []error
	for _, l := range q.lanes {
		errs = append(errs, l.Stop(ctx))
	}
	return errors.Join(errs...)
}
