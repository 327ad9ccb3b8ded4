package ghretry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// t0 is the fake "now" of the tests.
var t0 = time.Unix(1_700_000_000, 0)

// step is one scripted server response.
type step struct {
	status  int
	headers map[string]string
	body    string
}

// script serves its steps in order and records what it received.
type script struct {
	mu     sync.Mutex
	steps  []step
	bodies []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(body))
	s.mu.Unlock()
	st := s.steps[min(n, len(s.steps)-1)]
	for k, v := range st.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(st.status)
	_, _ = io.WriteString(w, st.body)
}

// hits returns the number of requests received.
func (s *script) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// recorder is a fake sleep that records the waits.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return nil
}

// fakeOpts returns options with a fixed clock, no jitter and a recorded sleep.
func fakeOpts(rec *recorder) []Option {
	return []Option{
		WithClock(func() time.Time { return t0 }),
		WithJitter(func() float64 { return 0 }),
		WithSleep(rec.sleep),
	}
}

func s(status int, kv ...string) step {
	h := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return step{status: status, headers: h, body: `{"message":"status ` + strconv.Itoa(status) + `"}`}
}

func TestRetryPolicy(t *testing.T) {
	reset := strconv.FormatInt(t0.Add(10*time.Second).Unix(), 10)
	past := strconv.FormatInt(t0.Add(-time.Hour).Unix(), 10)
	secondary := step{status: 403, body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes."}`}
	forbidden := step{status: 403, body: `{"message":"Resource not accessible by integration"}`}
	cases := []struct {
		name       string
		method     string
		steps      []step
		opts       []Option
		wantStatus int
		wantWaits  []time.Duration
	}{
		{"success", "GET", []step{s(200)}, nil, 200, nil},
		{"GET 5xx then success", "GET", []step{s(502), s(503), s(200)}, nil, 200, []time.Duration{500 * time.Millisecond, time.Second}},
		{"DELETE 504 retried", "DELETE", []step{s(504), s(200)}, nil, 200, []time.Duration{500 * time.Millisecond}},
		{"PUT 503 honours Retry-After", "PUT", []step{s(503, "Retry-After", "2"), s(200)}, nil, 200, []time.Duration{2 * time.Second}},
		{"POST 502 not retried", "POST", []step{s(502), s(201)}, nil, 502, nil},
		{"POST 500 not retried", "POST", []step{s(500), s(201)}, nil, 500, nil},
		{"GET 501 not retried", "GET", []step{s(501), s(200)}, nil, 501, nil},
		{"GET 404 not retried", "GET", []step{s(404), s(200)}, nil, 404, nil},
		{"POST 403 Retry-After", "POST", []step{s(403, "Retry-After", "3"), s(201)}, nil, 201, []time.Duration{3 * time.Second}},
		{"POST 429 Retry-After date", "POST", []step{s(429, "Retry-After", t0.Add(7*time.Second).UTC().Format(http.TimeFormat)), s(201)}, nil, 201, []time.Duration{7 * time.Second}},
		{"PATCH primary limit waits for reset", "PATCH", []step{s(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset), s(200)}, nil, 200, []time.Duration{11 * time.Second}},
		{"reset in the past waits a second", "GET", []step{s(429, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", past), s(200)}, nil, 200, []time.Duration{time.Second}},
		{"POST 429 without headers waits a minute", "POST", []step{s(429), s(201)}, nil, 201, []time.Duration{time.Minute}},
		{"secondary limit message", "POST", []step{secondary, s(201)}, nil, 201, []time.Duration{time.Minute}},
		{"plain 403 not retried", "GET", []step{forbidden, s(200)}, nil, 403, nil},
		{"Retry-After beyond max wait", "GET", []step{s(403, "Retry-After", "3600"), s(200)}, nil, 403, nil},
		{"reset beyond max wait", "GET", []step{s(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset), s(200)}, []Option{WithMaxWait(5 * time.Second)}, 403, nil},
		{"attempts exhausted", "GET", []step{s(500)}, nil, 500, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}},
		{"max attempts option", "GET", []step{s(500)}, []Option{WithMaxAttempts(2)}, 500, []time.Duration{500 * time.Millisecond}},
		{"backoff capped", "GET", []step{s(500)}, []Option{WithBackoff(time.Second, 1500*time.Millisecond)}, 500, []time.Duration{500 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := &script{steps: tc.steps}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			rec := &recorder{}
			client := &http.Client{Transport: New(nil, append(fakeOpts(rec), tc.opts...)...)}
			req, err := http.NewRequest(tc.method, ts.URL+"/repos/o/r/git/refs", strings.NewReader(`{"sha":"abc"}`))
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())

			assert.Equal(t, tc.wantStatus, resp.StatusCode)
			assert.Equal(t, tc.wantWaits, rec.waits)
			assert.Equal(t, len(tc.wantWaits)+1, srv.hits())
			assert.Contains(t, string(body), `"message"`, "the final body reaches the caller intact")
			for i, b := range srv.bodies {
				assert.Equal(t, `{"sha":"abc"}`, b, "body of attempt %d", i+1)
			}
		})
	}
}

func TestBodyWithoutGetBodyIsBuffered(t *testing.T) {
	srv := &script{steps: []step{s(403, "Retry-After", "1"), s(201)}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	rec := &recorder{}
	req, err := http.NewRequest("POST", ts.URL, io.NopCloser(strings.NewReader("payload")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)

	resp, err := Middleware(fakeOpts(rec)...)(http.DefaultTransport).RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, []string{"payload", "payload"}, srv.bodies)
}

func TestSecondaryLimitBodyIsPreserved(t *testing.T) {
	long := `{"message":"` + strings.Repeat("x", 3*peekLimit) + `"}`
	srv := &script{steps: []step{{status: 403, body: long}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.False(t, mentionsSecondaryLimit(resp))
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, long, string(got))
}

// flaky fails its first n round trips, then delegates.
type flaky struct {
	mu   sync.Mutex
	n    int
	next http.RoundTripper
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if fail {
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

func TestTransportErrors(t *testing.T) {
	ts := httptest.NewServer(&script{steps: []step{s(200)}})
	defer ts.Close()
	for method, wantErr := range map[string]bool{"GET": false, "PATCH": false, "POST": true} {
		rec := &recorder{}
		rt := New(&flaky{n: 1, next: http.DefaultTransport}, fakeOpts(rec)...)
		req, err := http.NewRequest(method, ts.URL, nil)
		require.NoError(t, err)
		resp, err := rt.RoundTrip(req)
		if wantErr {
			assert.Error(t, err, method)
			assert.Empty(t, rec.waits, method)
			continue
		}
		require.NoError(t, err, method)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, []time.Duration{500 * time.Millisecond}, rec.waits, method)
	}
}

func TestCancelDuringWait(t *testing.T) {
	srv := &script{steps: []step{s(503, "Retry-After", "30"), s(200)}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	rt := New(nil, WithOnRetry(func(Attempt) { cancel() }))
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
	require.NoError(t, err)

	start := time.Now()
	_, err = rt.RoundTrip(req)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, 1, srv.hits())
}

func TestWaitPastDeadlineReturnsResponse(t *testing.T) {
	srv := &script{steps: []step{s(429, "Retry-After", "30"), s(200)}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := &recorder{}
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
	require.NoError(t, err)
	resp, err := New(nil, fakeOpts(rec)...).RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 429, resp.StatusCode)
	assert.Empty(t, rec.waits)
}

func TestRealSleepAndHook(t *testing.T) {
	srv := &script{steps: []step{s(500), s(403, "X-RateLimit-Remaining", "0"), s(200)}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var seen []Attempt
	rt := New(nil, WithBackoff(time.Millisecond, 2*time.Millisecond), WithOnRetry(func(a Attempt) { seen = append(seen, a) }))
	req, err := http.NewRequest("GET", ts.URL, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 200, resp.StatusCode)
	require.Len(t, seen, 2)
	assert.Equal(t, ReasonServerError, seen[0].Reason)
	assert.Equal(t, 500, seen[0].StatusCode)
	assert.Equal(t, ReasonRateLimit, seen[1].Reason)
	assert.Equal(t, 2, seen[1].Attempt)
}
