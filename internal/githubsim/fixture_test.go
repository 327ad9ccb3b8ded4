package githubsim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

const (
	testOwner  = "contoso"
	testRepo   = "gitops"
	testSecret = "It's a Secret to Everybody"
)

// testKey is shared by all tests; generating RSA keys is slow.
var testKey = sync.OnceValues(GenerateKey)

// fixture is a running simulator with one installation and one seeded repository.
type fixture struct {
	sim    *Server
	inst   int64
	token  string
	client *github.Client
	hooks  *hookRecorder
	seed   string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	key, err := testKey()
	require.NoError(t, err)
	return newFixtureWith(t, Options{Dir: t.TempDir(), PrivateKey: key})
}

func newFixtureWith(t *testing.T, opts Options) *fixture {
	t.Helper()
	sim, err := New(opts)
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { _ = sim.Close() })
	f := &fixture{sim: sim, hooks: newHookRecorder(t, testSecret)}
	sim.SetWebhook(f.hooks.srv.URL, testSecret)
	f.inst = sim.CreateInstallation(testOwner)
	require.NoError(t, sim.CreateRepo(f.inst, testOwner, testRepo, "main"))
	f.seed, err = sim.CommitFiles(testOwner, testRepo, "main", map[string]*string{
		"README.md":                 ptr("# gitops\n"),
		"clusters/dev/app.yaml":     ptr("replicas: 1\n"),
		"clusters/prod/app.yaml":    ptr("replicas: 3\n"),
		"clusters/prod/values.yaml": ptr("env: prod\n"),
	}, "seed")
	require.NoError(t, err)
	f.token, err = sim.InstallationToken(f.inst)
	require.NoError(t, err)
	f.client = f.tokenClient(f.token)
	f.hooks.reset()
	sim.ResetCalls()
	return f
}

func (f *fixture) tokenClient(token string) *github.Client {
	c := github.NewClient(nil).WithAuthToken(token)
	c, _ = c.WithEnterpriseURLs(f.sim.APIURL(), f.sim.UploadURL())
	return c
}

func ctx() context.Context { return context.Background() }

// hookRecorder receives webhooks and checks their signatures.
type hookRecorder struct {
	t      *testing.T
	secret string
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status int
}

type received struct {
	event, delivery string
	body            []byte
	payload         any
}

func newHookRecorder(t *testing.T, secret string) *hookRecorder {
	h := &hookRecorder{t: t, secret: secret, status: http.StatusOK}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookRecorder) serve(w http.ResponseWriter, r *http.Request) {
	body, err := github.ValidatePayload(r, []byte(h.secret))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ev, err := github.ParseWebHook(github.WebHookType(r), body)
	if err != nil {
		h.t.Errorf("parse %s webhook: %v", github.WebHookType(r), err)
	}
	h.mu.Lock()
	h.got = append(h.got, received{event: github.WebHookType(r), delivery: github.DeliveryID(r), body: body, payload: ev})
	status := h.status
	h.mu.Unlock()
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "ok")
}

func (h *hookRecorder) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = nil
}

func (h *hookRecorder) all() []received {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]received(nil), h.got...)
}

func (h *hookRecorder) events() []string {
	var out []string
	for _, r := range h.all() {
		out = append(out, r.event+"."+actionOf(r.payload))
	}
	return out
}

func (h *hookRecorder) setStatus(code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status = code
}

func actionOf(ev any) string {
	if a, ok := ev.(interface{ GetAction() string }); ok {
		return a.GetAction()
	}
	return ""
}

// last returns the last received payload of type T.
func last[T any](t *testing.T, h *hookRecorder) T {
	t.Helper()
	all := h.all()
	for i := len(all) - 1; i >= 0; i-- {
		if v, ok := all[i].payload.(T); ok {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T webhook received", zero)
	return zero
}

// do sends a raw REST call with the installation token.
func (f *fixture) do(t *testing.T, method, path string, body any, header ...string) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, f.sim.URL()+"/api/v3"+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "token "+f.token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out, resp.Header
}

// repoPath prefixes a path with /repos/{owner}/{repo}.
func repoPath(p string) string { return "/repos/" + testOwner + "/" + testRepo + p }
