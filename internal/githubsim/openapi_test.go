package githubsim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"
)

// restSubset is GitHub's REST description, trimmed to what the App uses (see its README).
var restSubset = filepath.Join("..", "..", "testdata", "github", "rest-api-subset.json")

// conformance validates every exchange against the OpenAPI description.
type conformance struct {
	t      *testing.T
	sim    *Server
	next   http.Handler
	router routers.Router
	mu     sync.Mutex
	errs   []string
	seen   map[string]bool
}

func loadRESTSubset(t *testing.T) *openapi3.T {
	t.Helper()
	if _, err := os.Stat(restSubset); err != nil {
		t.Fatalf("the OpenAPI description %s is missing: %v", restSubset, err)
	}
	doc, err := openapi3.NewLoader().LoadFromFile(restSubset)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(ctx(), openapi3.DisableExamplesValidation()))
	return doc
}

func (cf *conformance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/api/v3/") {
		cf.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := cf.findRoute(r)
	if err != nil {
		cf.next.ServeHTTP(w, r)
		return
	}
	check := r.Clone(r.Context())
	check.Body = io.NopCloser(bytes.NewReader(body))
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
	op := route.Method + " " + route.Path
	if err := openapi3filter.ValidateRequest(ctx(), in); err != nil {
		cf.fail("request %s %s: %v", op, r.URL, err)
	}
	rec := httptest.NewRecorder()
	cf.next.ServeHTTP(rec, r)
	res := rec.Result()
	out, _ := io.ReadAll(res.Body)
	err = openapi3filter.ValidateResponse(ctx(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(out)),
	})
	if err != nil {
		cf.fail("response %s %s (%d): %v", op, r.URL, res.StatusCode, err)
	}
	if res.StatusCode < 300 {
		cf.mu.Lock()
		cf.seen[op] = true
		cf.mu.Unlock()
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(out)
}

func (cf *conformance) fail(format string, args ...any) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if i := strings.Index(msg, "\nSchema:"); i > 0 {
		msg = msg[:i]
	}
	cf.errs = append(cf.errs, msg)
}

// newConformantFixture serves the simulator behind OpenAPI validation.
func newConformantFixture(t *testing.T) (*fixture, *conformance, *openapi3.T) {
	doc := loadRESTSubset(t)
	key, err := testKey()
	require.NoError(t, err)
	sim, err := New(Options{Dir: t.TempDir(), PrivateKey: key})
	require.NoError(t, err)
	cf := &conformance{t: t, sim: sim, next: sim, seen: map[string]bool{}}
	srv := httptest.NewServer(cf)
	t.Cleanup(srv.Close)
	sim.SetBaseURL(srv.URL)
	doc.Servers = openapi3.Servers{{URL: srv.URL + "/api/v3"}}
	cf.router, err = legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	require.NoError(t, err)
	f := &fixture{sim: sim, hooks: newHookRecorder(t, testSecret)}
	sim.SetWebhook(f.hooks.srv.URL, testSecret)
	f.inst = sim.CreateInstallation(testOwner)
	require.NoError(t, sim.CreateRepo(f.inst, testOwner, testRepo, "main"))
	f.seed, err = sim.CommitFiles(testOwner, testRepo, "main", map[string]*string{
		"README.md": ptr("# gitops\n"), "clusters/dev/app.yaml": ptr("replicas: 1\n"),
	}, "seed")
	require.NoError(t, err)
	f.token, err = sim.InstallationToken(f.inst)
	require.NoError(t, err)
	f.client = f.tokenClient(f.token)
	return f, cf, doc
}

func TestOpenAPIConformance(t *testing.T) {
	f, cf, doc := newConformantFixture(t)
	exerciseApp(t, f)
	exerciseRepoReads(t, f)
	exerciseGitData(t, f)
	exercisePulls(t, f)
	exerciseChecksAndStatuses(t, f)
	exerciseVariants(t, f)
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !cf.seen[method+" "+path] {
				missing = append(missing, method+" "+path)
			}
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "operations of the description that were not exercised with a 2xx answer")
	require.Empty(t, cf.errs, "answers that do not match the description")
}

// findRoute finds the described operation. Path parameters such as refs and
// file paths contain slashes, which the description's {param} does not
// match, so the lookup uses a flattened path and the simulator's own values.
func (cf *conformance) findRoute(r *http.Request) (*routers.Route, map[string]string, error) {
	rel := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v3")
	rt, simParams, _ := cf.sim.router.match(r.Method, rel)
	if rt == nil {
		return nil, nil, fmt.Errorf("no simulator route for %s %s", r.Method, rel)
	}
	var b strings.Builder
	b.WriteString("/api/v3")
	for _, seg := range rt.segs {
		b.WriteByte('/')
		name := strings.TrimSuffix(strings.Trim(seg, "{}"), "...")
		if !strings.HasPrefix(seg, "{") {
			b.WriteString(seg)
		} else if v := simParams[name]; v == "" {
			b.WriteString("_")
		} else {
			b.WriteString(url.PathEscape(strings.ReplaceAll(v, "/", "~")))
		}
	}
	lookup := r.Clone(r.Context())
	lookup.URL.Path, lookup.URL.RawPath = b.String(), ""
	lookup.URL.Scheme, lookup.URL.Host = "http", r.Host
	route, params, err := cf.router.FindRoute(lookup)
	if err != nil {
		return nil, nil, err
	}
	for k := range params {
		if v, ok := simParams[k]; ok {
			params[k] = v
		}
	}
	return route, params, nil
}
