package app

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gregjones/httpcache"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rcrowley/go-metrics"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/ghretry"
	"github.com/kalypso-gitops/kalypso/internal/remotewait"
)

// newClientCreator builds the caching go-githubapp client creator. Middleware,
// outermost first: the time waited for GitHub (added to the request context's
// remotewait clock), draining answers to their end (so that the cache keeps them), retries
// (each attempt below is logged and counted), request
// logging at debug level, go-githubapp's request and rate-limit metrics, and
// the kalypso_github_rate_limit_remaining gauge.
func (s *Server) newClientCreator(gh githubapp.Config) (githubapp.ClientCreator, error) {
	opts := []githubapp.ClientOption{
		githubapp.WithClientUserAgent("kalypso/" + s.opts.version),
		githubapp.WithClientTimeout(s.cfg.GitHub.Timeout.Std()),
		githubapp.WithTransport(s.transport),
		githubapp.WithClientMiddleware(
			waitedFor,
			drainBodies,
			s.retrying,
			githubapp.ClientLogging(zerolog.DebugLevel),
			githubapp.ClientMetrics(s.registry),
			rateLimitGauge(s.registry),
		),
	}
	if mb := s.cfg.GitHub.HTTPCacheMB; mb > 0 {
		opts = append(opts, githubapp.WithClientCaching(true, func() httpcache.Cache { return newLRUCache(mb << 20) }))
	}
	return githubapp.NewDefaultCachingClientCreator(gh, opts...)
}

// retrying wraps next with the GitHub retry policy, logging and counting each retry.
func (s *Server) retrying(next http.RoundTripper) http.RoundTripper {
	return ghretry.Middleware(ghretry.WithOnRetry(s.onRetry))(next)
}

// onRetry logs a retry with the request's context logger and counts it.
func (s *Server) onRetry(a ghretry.Attempt) {
	s.counter(MetricGitHubRetries, "reason", string(a.Reason)).Inc(1)
	zerolog.Ctx(a.Request.Context()).Warn().
		Str("method", a.Request.Method).
		Str("path", a.Request.URL.Path).
		Int("status", a.StatusCode).
		Int("attempt", a.Attempt).
		Dur("wait_ms", a.Wait).
		Str("reason", string(a.Reason)).
		AnErr("cause", a.Err).
		Msg("retrying GitHub request")
}

// rateLimitGauge records X-RateLimit-Remaining per X-RateLimit-Resource.
func rateLimitGauge(reg metrics.Registry) githubapp.ClientMiddleware {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(r)
			if resp != nil {
				recordRemaining(reg, resp.Header)
			}
			return resp, err
		})
	}
}

// recordRemaining updates the gauge from one response's headers.
func recordRemaining(reg metrics.Registry, h http.Header) {
	remaining, err := strconv.ParseInt(h.Get("X-RateLimit-Remaining"), 10, 64)
	if err != nil {
		return
	}
	name := labeled(MetricRateLimitRemaining, "resource", rateResource(h.Get("X-RateLimit-Resource")))
	metrics.GetOrRegisterGauge(name, reg).Update(remaining)
}

// rateResource bounds the resource label to GitHub's lower-case identifiers.
func rateResource(v string) string {
	if v == "" {
		return "core"
	}
	if len(v) > 40 {
		return "other"
	}
	for _, c := range v {
		if (c < 'a' || c > 'z') && c != '_' {
			return "other"
		}
	}
	return v
}

// waitedFor adds the time of each request, until its answer's headers arrive, to the remotewait
// clock of its context.
func waitedFor(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		defer remotewait.Since(r.Context(), time.Now())
		return next.RoundTrip(r)
	})
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
