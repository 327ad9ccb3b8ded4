package githubsim

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault makes the next Times matching REST calls fail before they do anything.
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
}

type faultSet struct {
	mu     sync.Mutex
	faults []*Fault
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

// take consumes one use of the first fault matching the call.
func (fs *faultSet) take(method, routeName, path string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	pattern := routeName[strings.Index(routeName, " ")+1:]
	for i, f := range fs.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, method) {
			continue
		}
		if !faultPathMatches(f.PathPattern, pattern, path) {
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
