package githubsim

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault makes the next Times matching REST calls fail before they do anything, or hold them
// (Delay, Gate) before they are served normally or fail.
type Fault struct {
	// Method matches the HTTP method; empty matches any.
	Method string
	// PathPattern is a route pattern such as "/repos/{owner}/{repo}/pulls"
	// (exact; a trailing "/" matches every route below it) or, without
	// braces, a request path prefix such as "/repos/o/r/git/". Empty matches all.
	PathPattern string
	// Status is the HTTP status to answer, for example 403, 429 or 502.
	Status int
	// Headers are set on the answer (Retry-After, X-RateLimit-Remaining, …).
	Headers map[string]string
	// Body is the raw answer body; empty gives {"message": <status text>}.
	Body string
	// Times is how many calls fail; 0 means once.
	Times int
	// Header selects calls by request headers: each must have exactly this value (for
	// example a header a test's proxy sets per replica of the app). Empty matches all.
	Header map[string]string
	// Git makes the fault match git smart HTTP requests (fetches and pushes, PathPattern a
	// prefix of the request path such as "/owner/repo.git/") instead of REST calls.
	Git bool
	// Delay holds a matching call this long before it is answered.
	Delay time.Duration
	// Gate, when set, holds a matching call until it is closed (or the client goes away).
	Gate <-chan struct{}
	// Status 0 with Delay or Gate serves the call normally once it is released.
}

type faultSet struct {
	mu     sync.Mutex
	faults []*Fault
	held   int // calls being held by Delay or Gate now
}

// InjectFault queues a fault; faults are matched in the order they were added.
func (s *Server) InjectFault(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	f.PathPattern = strings.TrimPrefix(f.PathPattern, "/api/v3")
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.faults = append(s.faults.faults, &f)
}

// ClearFaults drops every pending fault.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.faults = nil
}

// PendingFaults returns how many fault answers are still queued.
func (s *Server) PendingFaults() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	n := 0
	for _, f := range s.faults.faults {
		n += f.Times
	}
	return n
}

// HeldCalls returns how many calls a Delay or Gate fault holds now.
func (s *Server) HeldCalls() int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return s.faults.held
}

// take consumes one use of the first fault matching the call (routeName "" for git requests).
func (fs *faultSet) take(r *http.Request, routeName, path string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	pattern := routeName[strings.Index(routeName, " ")+1:]
	git := routeName == ""
	for i, f := range fs.faults {
		if f.Git != git || (f.Method != "" && !strings.EqualFold(f.Method, r.Method)) || !headersMatch(f.Header, r.Header) {
			continue
		}
		if git && !strings.HasPrefix(path, f.PathPattern) || !git && !faultPathMatches(f.PathPattern, pattern, path) {
			continue
		}
		f.Times--
		if f.Times == 0 {
			fs.faults = append(fs.faults[:i], fs.faults[i+1:]...)
		}
		return *f, true
	}
	return Fault{}, false
}

// hold waits as the fault says before the call goes on; it reports false when the client went
// away meanwhile.
func (fs *faultSet) hold(r *http.Request, f Fault) bool {
	if f.Delay <= 0 && f.Gate == nil {
		return true
	}
	fs.mu.Lock()
	fs.held++
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		fs.held--
		fs.mu.Unlock()
	}()
	if f.Delay > 0 {
		timer := time.NewTimer(f.Delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return false
		}
	}
	if f.Gate != nil {
		select {
		case <-f.Gate:
		case <-r.Context().Done():
			return false
		}
	}
	return true
}

// headersMatch reports whether the request has every wanted header value.
func headersMatch(want map[string]string, have http.Header) bool {
	for k, v := range want {
		if have.Get(k) != v {
			return false
		}
	}
	return true
}

func faultPathMatches(want, pattern, path string) bool {
	if strings.Contains(want, "{") {
		return pattern == want || (strings.HasSuffix(want, "/") && strings.HasPrefix(pattern, want))
	}
	return strings.HasPrefix(path, want)
}

// SecondaryRateLimit is a fault like GitHub's secondary rate limit: 403,
// Retry-After and the documentation URL go-github recognises.
func SecondaryRateLimit(method, pathPattern string, retryAfterSeconds int) Fault {
	return Fault{
		Method: method, PathPattern: pathPattern, Status: http.StatusForbidden,
		Headers: map[string]string{"Retry-After": strconv.Itoa(retryAfterSeconds)},
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",` +
			`"documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	}
}

// PrimaryRateLimit is a fault like an exhausted primary rate limit: 403
// with X-RateLimit-Remaining 0 and X-RateLimit-Reset at reset.
func PrimaryRateLimit(method, pathPattern string, reset time.Time) Fault {
	return Fault{
		Method: method, PathPattern: pathPattern, Status: http.StatusForbidden,
		Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10)},
		Body: `{"message":"API rate limit exceeded for installation.",` +
			`"documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"}`,
	}
}
