// Package ghretry retries GitHub API requests the way GitHub asks integrators to.
//
// The transport returned by New retries:
//
//   - any method answered 403 or 429 with Retry-After (wait that long) or with
//     X-RateLimit-Remaining: 0 (wait until X-RateLimit-Reset): GitHub rejects
//     those requests before processing them;
//   - any method answered 429, or 403 with a secondary-rate-limit message, without
//     those headers: wait at least a minute, doubling per attempt;
//   - GET, HEAD, OPTIONS, PUT, PATCH and DELETE answered 500, 502, 503 or 504, or
//     failing without a response: exponential backoff with jitter (Retry-After
//     wins when present). POST is never repeated after such an outcome, since
//     it may have been processed.
//
// A retry never waits longer than the maximum wait, past the request context's
// deadline, or beyond the maximum number of attempts: the last response is then
// returned unchanged, so the caller (go-github) sees GitHub's own error. Request
// bodies are replayed through GetBody, or buffered when there is none.
//
// Use it as go-githubapp client middleware:
//
//	githubapp.WithClientMiddleware(ghretry.Middleware(ghretry.WithMaxWait(time.Minute)))
package ghretry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// drainLimit bounds how much of a discarded response body is read to reuse the connection.
const drainLimit = 64 << 10

// transport is the retrying http.RoundTripper.
type transport struct {
	next           http.RoundTripper
	maxAttempts    int
	maxWait        time.Duration
	baseDelay      time.Duration
	maxDelay       time.Duration
	secondaryDelay time.Duration
	now            func() time.Time
	sleep          func(ctx context.Context, d time.Duration) error
	random         func() float64
	onRetry        func(Attempt)
}

// New wraps next (http.DefaultTransport when nil) with GitHub-aware retries.
func New(next http.RoundTripper, opts ...Option) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	t := defaults(next)
	for _, opt := range opts {
		opt(t)
	}
	return t
}

// Middleware returns New as go-githubapp client middleware (githubapp.ClientMiddleware).
func Middleware(opts ...Option) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper { return New(next, opts...) }
}

// RoundTrip sends req, retrying as the package documentation describes.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		out, err := body.request(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(out)
		d, retry := t.decide(req, resp, err, attempt)
		if !retry || !t.allowed(req, d, attempt) {
			return resp, err
		}
		t.onRetry(Attempt{Request: req, Attempt: attempt, Wait: d.wait, StatusCode: statusCode(resp), Err: err, Reason: d.reason})
		discard(resp)
		if err := t.sleep(req.Context(), d.wait); err != nil {
			return nil, fmt.Errorf("ghretry: %s %s: waiting %s to retry: %w", req.Method, req.URL.Redacted(), d.wait, err)
		}
	}
}

// allowed checks the attempt budget, the maximum wait and the context deadline.
func (t *transport) allowed(req *http.Request, d decision, attempt int) bool {
	if attempt >= t.maxAttempts || d.wait > t.maxWait {
		return false
	}
	if deadline, ok := req.Context().Deadline(); ok && time.Until(deadline) < d.wait {
		return false
	}
	return true
}

// statusCode returns the response's status, or 0 without a response.
func statusCode(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// discard drains a little of a response body and closes it so the connection can be reused.
func discard(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	_ = resp.Body.Close()
}

// replay produces a fresh request body for every attempt.
type replay struct {
	getBody  func() (io.ReadCloser, error)
	buffered bool
}

// replayable prepares req's body for replay, buffering it when req has no GetBody.
func replayable(req *http.Request) (replay, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return replay{}, nil
	}
	if req.GetBody != nil {
		return replay{getBody: req.GetBody}, nil
	}
	data, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return replay{}, fmt.Errorf("ghretry: buffer body of %s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	get := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return replay{getBody: get, buffered: true}, nil
}

// request returns the request to send for attempt, with a fresh body when needed.
// The caller's request is never modified.
func (r replay) request(req *http.Request, attempt int) (*http.Request, error) {
	if r.getBody == nil || (attempt == 1 && !r.buffered) {
		return req, nil
	}
	body, err := r.getBody()
	if err != nil {
		return nil, fmt.Errorf("ghretry: replay body of %s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	out := req.Clone(req.Context())
	out.Body = body
	out.GetBody = r.getBody
	return out, nil
}
