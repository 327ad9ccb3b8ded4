package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/config"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
)

// TestInstallationClientKeepsAnswersReadBeforeTheirEnd checks that an answer go-github stops
// reading before its end (here: whitespace after the JSON value, as when the end of a chunked
// body comes in a later read) is still kept by the HTTP cache, so that the next read is a
// conditional request answered 304.
func TestInstallationClientKeepsAnswersReadBeforeTheirEnd(t *testing.T) {
	var conditional, full atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v3/app/installations/{id}/access_tokens", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token":%q,"expires_at":%q}`, testToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	})
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}", func(w http.ResponseWriter, r *http.Request) {
		const etag = `W/"v1"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":%q}`+strings.Repeat(" ", 8<<10), r.PathValue("repo"))
	})
	gh := httptest.NewServer(mux)
	t.Cleanup(gh.Close)
	s, _ := newTestServer(t, testConfig(t, gh.URL))
	client, err := s.ClientCreator().NewInstallationClient(42)
	require.NoError(t, err)
	for range 3 {
		repo, _, err := client.Repositories.Get(context.Background(), "octo", "gitops")
		require.NoError(t, err)
		require.Equal(t, "gitops", repo.GetName())
	}
	require.Equal(t, int32(1), full.Load(), "read in full once")
	require.Equal(t, int32(2), conditional.Load(), "then revalidated with If-None-Match")
}

// TestStatusPagesAreRevalidated reads every page of a commit's combined status twice through
// an installation client: the second time each page is a conditional request answered 304,
// which costs no rate limit.
func TestStatusPagesAreRevalidated(t *testing.T) {
	sim, err := githubsim.New(githubsim.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { _ = sim.Close() })
	inst := sim.CreateInstallation("o")
	require.NoError(t, sim.CreateRepo(inst, "o", "gitops", "main"))
	sha, err := sim.CommitFiles("o", "gitops", "main", map[string]*string{"README.md": github.String("# gitops\n")}, "seed")
	require.NoError(t, err)
	for i := range 250 {
		require.NoError(t, sim.PostStatus("o", "gitops", sha, "success", fmt.Sprintf("kustomization/flux-system/c%04d", i), "ok"))
	}
	cfg := testConfig(t, sim.URL())
	cfg.GitHub.App.IntegrationID = sim.AppID()
	cfg.GitHub.App.PrivateKey = config.Secret(sim.PrivateKeyPEM())
	s, _ := newTestServer(t, cfg)
	client, err := s.ClientCreator().NewInstallationClient(inst)
	require.NoError(t, err)
	gh := ghport.NewREST(client)
	const route = "GET /repos/{owner}/{repo}/commits/{ref}/status"
	read := func() {
		got, err := gh.Statuses(context.Background(), envref.Repo{Owner: "o", Name: "gitops"}, sha)
		require.NoError(t, err)
		require.Len(t, got, 250)
	}
	read()
	require.Equal(t, 3, sim.CallCount(route))
	remaining := sim.RateLimitRemaining(inst)
	read()
	require.Equal(t, 6, sim.CallCount(route), "every page is asked for again")
	require.Equal(t, remaining, sim.RateLimitRemaining(inst), "and answered 304, which costs nothing")
}
