package githubsim

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// callStats counts served requests by route and git service.
type callStats struct {
	mu   sync.Mutex
	rest map[string]int
	git  map[string]int
}

func newCallStats() *callStats {
	return &callStats{rest: map[string]int{}, git: map[string]int{}}
}

func (c *callStats) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rest[name]++
}

func (c *callStats) addGit(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.git[name]++
}

// Calls returns REST calls served per "METHOD /route/{pattern}", for
// example "POST /repos/{owner}/{repo}/git/trees"; faults and 304s count.
func (s *Server) Calls() map[string]int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return maps.Clone(s.calls.rest)
}

// CallCount returns the calls served for one route key (see Calls).
func (s *Server) CallCount(route string) int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return s.calls.rest[route]
}

// TotalCalls returns the number of REST calls served.
func (s *Server) TotalCalls() int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	n := 0
	for _, v := range s.calls.rest {
		n += v
	}
	return n
}

// GitCalls returns git smart HTTP requests per "METHOD service", for
// example "GET info/refs?service=git-upload-pack" or "POST git-receive-pack".
func (s *Server) GitCalls() map[string]int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return maps.Clone(s.calls.git)
}

// ResetCalls clears the REST and git call counters.
func (s *Server) ResetCalls() {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	s.calls.rest, s.calls.git = map[string]int{}, map[string]int{}
}

// rateLimits tracks the primary rate limit per bucket (installation or App).
type rateLimits struct {
	mu      sync.Mutex
	limit   int
	buckets map[string]*rateBucket
}

type rateBucket struct {
	used  int
	reset time.Time
}

func newRateLimits(limit int) *rateLimits {
	return &rateLimits{limit: limit, buckets: map[string]*rateBucket{}}
}

// bucketLocked returns the bucket, starting a new hour window when due.
func (rl *rateLimits) bucketLocked(name string) *rateBucket {
	b, ok := rl.buckets[name]
	if !ok || time.Now().After(b.reset) {
		b = &rateBucket{reset: time.Now().Add(time.Hour).Truncate(time.Second)}
		rl.buckets[name] = b
	}
	return b
}

// check answers 403 when the bucket is exhausted.
func (rl *rateLimits) check(name string) error {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.bucketLocked(name).used >= rl.limit {
		return newError(http.StatusForbidden, "API rate limit exceeded for %s.", name)
	}
	return nil
}

// headers sets X-RateLimit-* and, with count, charges one call.
func (rl *rateLimits) headers(h http.Header, name string, count bool) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	b := rl.bucketLocked(name)
	if count {
		b.used++
	}
	remaining := max(rl.limit-b.used, 0)
	h.Set("X-RateLimit-Limit", strconv.Itoa(rl.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(b.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(b.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

// SetRateLimitRemaining sets how many calls an installation has left in
// the current window; at 0 every call gets 403 "API rate limit exceeded".
func (s *Server) SetRateLimitRemaining(installationID int64, remaining int) {
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	b := s.limits.bucketLocked("inst:" + strconv.FormatInt(installationID, 10))
	b.used = max(s.limits.limit-remaining, 0)
}

// RateLimitRemaining returns the calls an installation has left in the window.
func (s *Server) RateLimitRemaining(installationID int64) int {
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	b := s.limits.bucketLocked("inst:" + strconv.FormatInt(installationID, 10))
	return max(s.limits.limit-b.used, 0)
}
