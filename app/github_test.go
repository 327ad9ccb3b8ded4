package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstallationTokenUsesConfiguredAPIURLAndCaches(t *testing.T) {
	gh := newFakeGitHub(t)
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	for range 3 {
		tok, err := s.InstallationToken(context.Background(), 42)
		require.NoError(t, err)
		assert.Equal(t, testToken, tok)
	}
	assert.Equal(t, int32(1), gh.tokenRequests.Load(), "the token is cached until it expires")

	_, err := s.InstallationToken(context.Background(), 0)
	assert.Error(t, err)
}

func TestInstallationTokenFromKeyFile(t *testing.T) {
	gh := newFakeGitHub(t)
	cfg := testConfig(t, gh.URL)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(keyFile, []byte(cfg.GitHub.App.PrivateKey.Value()), 0o600))
	cfg.GitHub.App.PrivateKey, cfg.GitHub.App.PrivateKeyFile = "", keyFile
	s, _ := newTestServer(t, cfg)
	tok, err := s.InstallationToken(context.Background(), 7)
	require.NoError(t, err)
	assert.Equal(t, testToken, tok)
}

func TestInstallationClientMiddlewareAndMetrics(t *testing.T) {
	gh := newFakeGitHub(t)
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	client, err := s.ClientCreator().NewInstallationClient(42)
	require.NoError(t, err)
	repo, _, err := client.Repositories.Get(context.Background(), "octo", "gitops")
	require.NoError(t, err)
	assert.Equal(t, "gitops", repo.GetName())

	ua := ""
	gh.userAgents.Range(func(k, _ any) bool { ua = k.(string); return false })
	assert.True(t, strings.HasPrefix(ua, "kalypso/test"), ua)

	rec := httptestGet(t, s.ManagementHandler(), "/metrics")
	for _, want := range []string{
		"# TYPE kalypso_github_rate_limit_remaining gauge\nkalypso_github_rate_limit_remaining{resource=\"core\"} 4987\n",
		"# TYPE kalypso_github_requests_total counter\nkalypso_github_requests_total 1\n",
		"kalypso_github_responses_total{class=\"2xx\"} 1\n",
		"kalypso_github_installation_rate_limit_remaining{installation=\"42\"} 4987\n",
		"kalypso_github_installation_rate_limit{installation=\"42\"} 5000\n",
	} {
		assert.Contains(t, rec, want)
	}
}

func TestLogsCarryEventKeysAndNeverSecrets(t *testing.T) {
	gh := newFakeGitHub(t)
	var srv *Server
	h := handlerFunc{events: []string{"push"}, fn: func(ctx context.Context, _, _ string, payload []byte) error {
		var ev struct {
			Installation github.Installation `json:"installation"`
			Repo         github.Repository   `json:"repository"`
		}
		if err := json.Unmarshal(payload, &ev); err != nil {
			return err
		}
		ctx, logger := githubapp.PrepareRepoContext(ctx, ev.Installation.GetID(), &ev.Repo)
		logger.Info().Msg("handler says hello")
		return pushWithToken(ctx, srv, ev.Installation.GetID())
	}}
	s, logs := newTestServer(t, testConfig(t, gh.URL), WithHandlers(h))
	srv = s
	r := start(t, s)
	require.Equal(t, http.StatusOK, deliverAs(t, r.url, "delivery-push", "push", pushPayload, sign(testSecret, pushPayload)))
	eventually(t, func() bool { return strings.Contains(logs.String(), "webhook processing failed") }, "the handler ran")
	require.NoError(t, r.stop(t))

	out := logs.String()
	assert.NotContains(t, out, testToken)
	assert.NotContains(t, out, testSecret)
	assert.NotContains(t, out, strings.Split(keyOnce(), "\n")[1], "no private key material")
	assert.Contains(t, out, "[redacted]")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var fields map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &fields), line)
		msg := fields["message"]
		if msg == "webhook processing failed" { // the delivery's outcome; the work it caused may serve several deliveries
			assert.Equal(t, "delivery-push", fields["github_delivery_id"], line)
			assert.Equal(t, "push", fields["github_event_type"], line)
		}
		if msg == "handler says hello" || msg == "webhook processing failed" || msg == "github_request" {
			assert.EqualValues(t, 42, fields["github_installation_id"], line)
			assert.Equal(t, "octo", fields["github_repository_owner"], line)
			assert.Equal(t, "control-plane", fields["github_repository_name"], line)
		}
	}
	assert.Contains(t, out, `"message":"github_request"`, "GitHub calls are logged at debug level")
}

// pushWithToken imitates a handler that reads through the API, takes a token
// for git and then fails with an error that leaks the token in a URL.
func pushWithToken(ctx context.Context, s *Server, installationID int64) error {
	client, err := s.ClientCreator().NewInstallationClient(installationID)
	if err != nil {
		return err
	}
	if _, _, err := client.Repositories.Get(ctx, "octo", "gitops"); err != nil {
		return err
	}
	tok, err := s.InstallationToken(ctx, installationID)
	if err != nil {
		return err
	}
	return fmt.Errorf("push https://x-access-token:%s@example.com/octo/gitops.git: %w", tok, errors.New("rejected"))
}

// httptestGet serves path through h and returns the body.
func httptestGet(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}
