package ghretry

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reason says why a request is retried.
type Reason string

// Reasons for a retry.
const (
	ReasonRetryAfter         Reason = "retry_after"          // 403/429 with a Retry-After header
	ReasonRateLimit          Reason = "rate_limit"           // 403/429 with X-RateLimit-Remaining: 0
	ReasonSecondaryRateLimit Reason = "secondary_rate_limit" // 403 whose message names a secondary rate limit
	ReasonTooManyRequests    Reason = "too_many_requests"    // 429 without rate-limit headers
	ReasonServerError        Reason = "server_error"         // 500/502/503/504 on a repeatable method
	ReasonTransportError     Reason = "transport_error"      // no response, on a repeatable method
)

// peekLimit bounds how much of a 403 body is read to look for a secondary-limit message.
const peekLimit = 8 << 10

// decision is the outcome of the retry policy for one attempt.
type decision struct {
	reason Reason
	wait   time.Duration
}

// decide applies the retry policy to the result of attempt number attempt.
// Rate-limit rejections happen before GitHub processes a request, so they are
// retried for every method; server and transport errors only for methods whose
// repetition is harmless.
func (t *transport) decide(req *http.Request, resp *http.Response, err error, attempt int) (decision, bool) {
	if err != nil {
		if req.Context().Err() != nil || !repeatable(req.Method) {
			return decision{}, false
		}
		return decision{ReasonTransportError, t.backoff(attempt)}, true
	}
	switch code := resp.StatusCode; {
	case code == http.StatusForbidden || code == http.StatusTooManyRequests:
		return t.decideLimited(resp, attempt)
	case serverError(code) && repeatable(req.Method):
		if wait, ok := retryAfter(resp.Header, t.now()); ok {
			return decision{ReasonServerError, wait}, true
		}
		return decision{ReasonServerError, t.backoff(attempt)}, true
	}
	return decision{}, false
}

// decideLimited handles 403 and 429, following GitHub's rate-limit guidance.
func (t *transport) decideLimited(resp *http.Response, attempt int) (decision, bool) {
	if wait, ok := retryAfter(resp.Header, t.now()); ok {
		return decision{ReasonRetryAfter, wait}, true
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if wait, ok := untilReset(resp.Header, t.now()); ok {
			return decision{ReasonRateLimit, wait}, true
		}
		return decision{ReasonRateLimit, t.backoff(attempt)}, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return decision{ReasonTooManyRequests, t.secondary(attempt)}, true
	}
	if mentionsSecondaryLimit(resp) {
		return decision{ReasonSecondaryRateLimit, t.secondary(attempt)}, true
	}
	return decision{}, false
}

// repeatable reports whether repeating the method is harmless. GitHub's PUT,
// PATCH and DELETE endpoints set state to the given values, so a repeat after
// an unknown outcome converges to the same result; POST creates and is not repeated.
func repeatable(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// serverError reports the 5xx codes worth retrying.
func serverError(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfter parses Retry-After as seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// untilReset turns X-RateLimit-Reset (epoch seconds) into a wait, plus one
// second because the header is truncated to the second.
func untilReset(h http.Header, now time.Time) (time.Duration, bool) {
	reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return 0, false
	}
	return max(time.Unix(reset, 0).Sub(now), 0) + time.Second, true
}

// mentionsSecondaryLimit peeks at a 403 body for GitHub's secondary-limit
// message and puts the bytes back so the caller still reads the full body.
func mentionsSecondaryLimit(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	lower := bytes.ToLower(head)
	return bytes.Contains(lower, []byte("secondary rate limit")) || bytes.Contains(lower, []byte("abuse detection"))
}

// readCloser pairs a reader with the closer of the original body.
type readCloser struct {
	io.Reader
	io.Closer
}

// backoff is the exponential delay for attempt, capped at maxDelay, with
// "equal jitter": half of it fixed, half random.
func (t *transport) backoff(attempt int) time.Duration {
	d := min(doubled(t.baseDelay, attempt), t.maxDelay)
	return d/2 + time.Duration(t.random()*float64(d/2))
}

// secondary is the wait after a secondary limit without Retry-After: at least
// secondaryDelay (GitHub asks for one minute), doubled per attempt, plus up to a quarter of jitter.
func (t *transport) secondary(attempt int) time.Duration {
	d := doubled(t.secondaryDelay, attempt)
	return d + time.Duration(t.random()*float64(d/4))
}

// doubled returns base * 2^(attempt-1).
func doubled(base time.Duration, attempt int) time.Duration {
	return base << min(max(attempt-1, 0), 20)
}
