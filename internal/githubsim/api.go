package githubsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// handlerFunc serves one REST operation; it returns the status and a body
// that is encoded as JSON (nil for no body), or an error.
type handlerFunc func(c *call) (int, any, error)

// call carries one REST request through its handler.
type call struct {
	s      *Server
	r      *http.Request
	route  *route
	params map[string]string
	header http.Header
	inst   *installation
	repo   *repo
	actor  string
	user   string // the login of a user access token
	events []*hookEvent
}

// apiError is a GitHub-style error response.
type apiError struct {
	status  int
	message string
	errors  []map[string]any
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func newError(status int, format string, args ...any) *apiError {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

func notFound() *apiError { return newError(http.StatusNotFound, "Not Found") }

// validation is a 422 "Validation Failed" with one custom error message.
func validation(resource, field, format string, args ...any) *apiError {
	e := newError(http.StatusUnprocessableEntity, "Validation Failed")
	item := map[string]any{"resource": resource, "code": "custom", "message": fmt.Sprintf(format, args...)}
	if field != "" {
		item["field"] = field
	}
	e.errors = []map[string]any{item}
	return e
}

func unprocessable(format string, args ...any) *apiError {
	return newError(http.StatusUnprocessableEntity, format, args...)
}

func errorBody(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
}

func (e *apiError) body() map[string]any {
	b := errorBody(e.message)
	b["status"] = strconv.Itoa(e.status)
	if len(e.errors) > 0 {
		b["errors"] = e.errors
	}
	return b
}

// serveAPI runs the REST pipeline: route, count, faults, auth, rate limit,
// repository scope, handler, webhooks, ETag and response.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	rel := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v3")
	rt, params, pathFound := s.router.match(r.Method, rel)
	if rt == nil {
		status := http.StatusNotFound
		if pathFound {
			status = http.StatusMethodNotAllowed
		}
		writeJSON(w, status, errorBody(http.StatusText(status)))
		return
	}
	s.calls.add(rt.name())
	if f, ok := s.faults.take(r, rt.name(), rel); ok {
		if !s.faults.hold(r, f) {
			return // the client went away
		}
		if f.Status != 0 {
			s.writeFault(w, f)
			return
		}
	}
	c := &call{s: s, r: r, route: rt, params: params, header: http.Header{}}
	bucket, err := s.authenticate(c)
	if err != nil {
		s.writeResult(w, c, "", 0, nil, err)
		return
	}
	if err := s.limits.check(bucket); err != nil {
		s.writeResult(w, c, bucket, 0, nil, err)
		return
	}
	if err := s.scopeRepo(c); err != nil {
		s.writeResult(w, c, bucket, 0, nil, err)
		return
	}
	status, body, err := rt.handler(c)
	s.hooks.deliver(c.events)
	s.writeResult(w, c, bucket, status, body, err)
}

// writeResult encodes the handler's result with rate-limit and ETag headers.
func (s *Server) writeResult(w http.ResponseWriter, c *call, bucket string, status int, body any, err error) {
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = newError(http.StatusInternalServerError, "%v", err)
		}
		status, body = ae.status, ae.body()
	}
	data, ctype := encodeBody(body)
	for k, v := range c.header {
		w.Header()[k] = v
	}
	if c.r.Method == http.MethodGet && status == http.StatusOK {
		etag := `W/"` + hashHex(data) + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Vary", "Accept, Authorization")
		if s.opts.CacheControl != "" {
			w.Header().Set("Cache-Control", s.opts.CacheControl)
		}
		if etagMatches(c.r.Header.Get("If-None-Match"), etag) {
			s.limits.headers(w.Header(), bucket, false)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	s.limits.headers(w.Header(), bucket, bucket != "")
	if data != nil {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func encodeBody(body any) ([]byte, string) {
	const jsonType = "application/json; charset=utf-8"
	switch b := body.(type) {
	case nil:
		return nil, ""
	case rawBody:
		return b.data, b.contentType
	}
	data, err := json.Marshal(body)
	if err != nil {
		return []byte(`{"message":"encoding failed"}`), jsonType
	}
	return data, jsonType
}

func (s *Server) writeFault(w http.ResponseWriter, f Fault) {
	s.limits.headers(w.Header(), "", false)
	for k, v := range f.Headers {
		w.Header().Set(k, v)
	}
	body := f.Body
	if body == "" {
		b, _ := json.Marshal(errorBody(http.StatusText(f.Status)))
		body = string(b)
	}
	writeRaw(w, f.Status, []byte(body))
}

func writeRaw(w http.ResponseWriter, status int, data []byte) {
	if data != nil {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	if data != nil {
		_, _ = w.Write(data)
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	data, _ := json.Marshal(body)
	writeRaw(w, status, data)
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	norm := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, part := range strings.Split(header, ",") {
		if part = strings.TrimSpace(part); part == "*" || norm(part) == norm(etag) {
			return true
		}
	}
	return false
}

// decode reads the JSON request body into v; an empty body leaves v as is.
func (c *call) decode(v any) error {
	data, err := io.ReadAll(io.LimitReader(c.r.Body, 100<<20))
	if err != nil {
		return newError(http.StatusBadRequest, "Problems reading the body: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return newError(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

func (c *call) query(name string) string { return c.r.URL.Query().Get(name) }

// intParam parses a numeric path parameter; a bad value is a 404.
func (c *call) intParam(name string) (int64, error) {
	n, err := strconv.ParseInt(c.params[name], 10, 64)
	if err != nil {
		return 0, notFound()
	}
	return n, nil
}

func (c *call) emit(e *hookEvent) {
	if e != nil {
		c.events = append(c.events, e)
	}
}
