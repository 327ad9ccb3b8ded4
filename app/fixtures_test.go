package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/syncbuf"
	"github.com/kalypso-gitops/kalypso/internal/workq"
)

const (
	testSecret = "webhook-secret-for-tests"
	testToken  = "ghs_installationTokenThatMustNeverBeLogged"
)

// keyOnce generates one RSA key for the whole test binary.
var keyOnce = sync.OnceValue(func() string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
})

// fakeGitHub serves the few GitHub endpoints the wiring uses, under /api/v3 like GitHub Enterprise Server.
type fakeGitHub struct {
	*httptest.Server
	tokenRequests atomic.Int32
	apiRequests   atomic.Int32
	appRequests   atomic.Int32
	userAgents    sync.Map
	// failWith, when not 0, is the status every request is answered with.
	failWith atomic.Int32
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/app", func(w http.ResponseWriter, r *http.Request) {
		f.appRequests.Add(1)
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, `{"message":"JWT required"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":1234,"slug":"kalypso"}`)
	})
	mux.HandleFunc("POST /api/v3/app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, `{"message":"JWT required"}`, http.StatusUnauthorized)
			return
		}
		f.tokenRequests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token":%q,"expires_at":%q}`, testToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	})
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}", func(w http.ResponseWriter, r *http.Request) {
		f.apiRequests.Add(1)
		f.userAgents.Store(r.Header.Get("User-Agent"), true)
		if r.Header.Get("Authorization") != "token "+testToken {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "4987")
		w.Header().Set("X-RateLimit-Resource", "core")
		fmt.Fprintf(w, `{"name":%q,"owner":{"login":%q}}`, r.PathValue("repo"), r.PathValue("owner"))
	})
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status := int(f.failWith.Load()); status != 0 {
			http.Error(w, `{"message":"failing"}`, status)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// testConfig returns a valid configuration pointing at the fake GitHub.
func testConfig(t *testing.T, apiURL string) *config.Config {
	t.Helper()
	cfg := config.Default(func(string) string { return "" })
	cfg.Server.Address = "127.0.0.1:0"
	cfg.Server.ManagementAddress = "127.0.0.1:0"
	cfg.Server.ShutdownTimeout = config.Duration(5 * time.Second)
	cfg.GitHub.V3APIURL = apiURL + "/api/v3/"
	cfg.GitHub.GraphQLURL = apiURL + "/api/graphql"
	cfg.GitHub.Timeout = config.Duration(5 * time.Second)
	cfg.GitHub.App.IntegrationID = 1234
	cfg.GitHub.App.WebhookSecret = testSecret
	cfg.GitHub.App.PrivateKey = config.Secret(keyOnce())
	cfg.Cache.Dir = t.TempDir()
	cfg.Resync.Interval = 0
	cfg.Workers = 2
	cfg.QueueSize = 10
	cfg.Queue.MaxAttempts = 1 // a failure is final: tests of retries set more
	require.NoError(t, cfg.Validate())
	return cfg
}

// newTestServer builds a Server logging at trace level into the returned buffer.
func newTestServer(t *testing.T, cfg *config.Config, opts ...Option) (*Server, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	logger := zerolog.New(logs).Level(zerolog.TraceLevel)
	s, err := New(cfg, append([]Option{WithLogger(logger), WithVersion("test")}, opts...)...)
	require.NoError(t, err)
	if r, ok := s.opts.router.(*handlerRouter); ok {
		r.queue = s.Queue()
	}
	return s, logs
}

// running is a Server started by start.
type running struct {
	url    string // public listener
	mgmt   string // management listener
	cancel context.CancelFunc
	done   chan error
}

// start runs s until the test ends or stop is called.
func start(t *testing.T, s *Server) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	select {
	case <-s.Ready():
	case err := <-r.done:
		t.Fatalf("Run returned before listening: %v", err)
	}
	r.url = "http://" + s.Addr()
	r.mgmt = "http://" + s.ManagementAddr()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// stop cancels Run and returns its result.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// sign returns the X-Hub-Signature-256 value of body.
func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// deliver posts a webhook with a new delivery ID; signature "" sends none.
func deliver(t *testing.T, baseURL, event, body, signature string) int {
	t.Helper()
	return deliverAs(t, baseURL, rand.Text(), event, body, signature)
}

// deliverAs posts a webhook with the given delivery ID; signature "" sends none.
func deliverAs(t *testing.T, baseURL, id, event, body, signature string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/api/github/hook", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// handlerFunc does the work of each delivery of its events with fn: its router names one key
// of work per delivery (nothing coalesces), whose run calls fn with the payload.
type handlerFunc struct {
	events []string
	fn     func(ctx context.Context, eventType, deliveryID string, payload []byte) error
}

// deliveries numbers the deliveries routed, so that each is its own key.
var deliveries atomic.Int64

// delivered is the need of a delivery's key: its event, ID and payload.
type delivered struct {
	event, id string
	payload   []byte
}

func (d delivered) Merge(workq.Need) workq.Need { return d }

// handlerRouter routes each delivery to its own key, run by the handlerFunc.
type handlerRouter struct {
	h     handlerFunc
	queue *Queue // set by newTestServer
}

// Events implements Router.
func (r *handlerRouter) Events() []string { return r.h.events }

// Route implements Router: a key per delivery.
func (r *handlerRouter) Route(ctx context.Context, event string, payload []byte) (bool, error) {
	return false, r.queue.Add(ctx, workq.Key{Kind: "delivery", Name: fmt.Sprint(deliveries.Add(1))}, delivered{event, DeliveryID(ctx), payload})
}

// run does the work of one delivery.
func (r *handlerRouter) run(ctx context.Context, _ workq.Key, need workq.Need) error {
	d := need.(delivered)
	return r.h.fn(ctx, d.event, d.id, d.payload)
}

// WithHandlers makes the server do the work of each delivery with h.
func WithHandlers(h handlerFunc) Option {
	return func(o *options) {
		r := &handlerRouter{h: h}
		o.router, o.run = r, r.run
	}
}

// pushPayload is a minimal push event from installation 42 on octo/control-plane.
const pushPayload = `{"ref":"refs/heads/main","installation":{"id":42},"repository":{"name":"control-plane","owner":{"login":"octo"}}}`

// eventually polls cond for up to two seconds.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 2*time.Second, 5*time.Millisecond, msg)
}
