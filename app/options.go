package app

import (
	"context"
	"net/http"

	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/version"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

// Option configures a Server.
type Option func(*options)

// options collects what the Options set.
type options struct {
	router    Router
	run       workq.Func
	logger    *zerolog.Logger
	resync    func(ctx context.Context) error
	transport http.RoundTripper
	registry  metrics.Registry
	version   string
	public    []func(*http.ServeMux)
	stop      []func()
}

// WithWork sets what deliveries become (router: the keys of work they name) and how a key of
// work is run (run: called by the workers, one run per key at a time).
func WithWork(router Router, run workq.Func) Option {
	return func(o *options) { o.router, o.run = router, run }
}

// WithPublicRoutes lets register add routes to the public listener (next to the webhook and
// the probes), such as the fleet view and the badges.
func WithPublicRoutes(register func(mux *http.ServeMux)) Option {
	return func(o *options) { o.public = append(o.public, register) }
}

// WithLogger sets the base logger (default: built from the config's log settings, on standard error).
func WithLogger(logger zerolog.Logger) Option {
	return func(o *options) { o.logger = &logger }
}

// WithResync sets the resync run at start and every resync.interval: it adds the work that
// repairs everything to the queue, with the context it is given (which carries the resync's
// round: the resync is done when that work is).
func WithResync(resync func(ctx context.Context) error) Option {
	return func(o *options) { o.resync = resync }
}

// WithStop adds fn to what Run calls, in the order given, once it has shut down: the
// listeners closed and the work drained (or cancelled). Whatever the work uses, such as a
// database, is closed there.
func WithStop(fn func()) Option {
	return func(o *options) { o.stop = append(o.stop, fn) }
}

// WithVersion sets the version sent in the User-Agent "kalypso/<version>", logged at start and
// exported by kalypso_build_info (default: the version stamped in the binary, see package version).
func WithVersion(version string) Option {
	return func(o *options) { o.version = version }
}

// collectOptions applies opts over the defaults.
func collectOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	o.transport = http.DefaultTransport
	o.registry = metrics.NewRegistry()
	if o.version == "" {
		o.version = version.Get().Version
	}
	return o
}
