package fleetview

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// userGitHub is GitHub's /user and token revocation for one user's tokens.
type userGitHub struct {
	mu       sync.Mutex
	valid    map[string]bool // token → accepted
	userGets int
	revokes  []string // the tokens revoked, with the App's client credentials
}

func (g *userGitHub) serve(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/user", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.userGets++
		if !g.valid[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"login":"alice"}`)
	})
	mux.HandleFunc("DELETE /api/v3/applications/{client}/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		var body struct {
			AccessToken string `json:"access_token"`
		}
		if !ok || id != "client-id" || secret != "client-secret" || r.PathValue("client") != id || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.NotFound(w, r)
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.revokes = append(g.revokes, body.AccessToken)
		g.valid[body.AccessToken] = false
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// signedIn is a fleet service whose clock the test moves, with alice's session cookie.
type signedIn struct {
	svc    *Service
	mux    *http.ServeMux
	gh     *userGitHub
	now    *time.Time
	cookie *http.Cookie
}

func newSignedIn(t *testing.T) *signedIn {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gh := &userGitHub{valid: map[string]bool{"ghu_alice": true}}
	srv := gh.serve(t)
	svc, err := New(Options{
		Sources: Sources{Now: func() time.Time { return now },
			Installations: func(context.Context) ([]int64, error) { return nil, nil }},
		OAuth: &OAuth{ClientID: "client-id", ClientSecret: "client-secret", WebURL: srv.URL, APIURL: srv.URL + "/api/v3/",
			PublicURL: "https://kalypso.example", HTTP: srv.Client()},
		SessionKey: strings.Repeat("k", 32), SessionTTL: 8 * time.Hour, SessionRefresh: 5 * time.Minute})
	require.NoError(t, err)
	mux := http.NewServeMux()
	svc.Register(mux)
	value, err := svc.seal.seal(Session{Login: "alice", Token: "ghu_alice", Expires: now.Add(8 * time.Hour), Checked: now})
	require.NoError(t, err)
	return &signedIn{svc: svc, mux: mux, gh: gh, now: &now, cookie: &http.Cookie{Name: SessionCookie, Value: value}}
}

// do sends a request with the session cookie.
func (s *signedIn) do(method, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.AddCookie(s.cookie)
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	return rec
}

func (s *signedIn) userGets() int {
	s.gh.mu.Lock()
	defer s.gh.mu.Unlock()
	return s.gh.userGets
}

func TestSessionIsCheckedWithGitHubAfterTheRefreshWindow(t *testing.T) {
	s := newSignedIn(t)
	require.Equal(t, http.StatusOK, s.do("GET", "/api/v1/fleet").Code)
	require.Zero(t, s.userGets(), "within the window the cookie is trusted")

	*s.now = s.now.Add(5 * time.Minute)
	rec := s.do("GET", "/api/v1/fleet")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, 1, s.userGets(), "past it, GitHub is asked once")
	renewed := cookieNamed(rec.Result().Cookies(), SessionCookie)
	require.NotEmpty(t, renewed, "and the cookie is renewed")
	s.cookie.Value = renewed
	require.Equal(t, http.StatusOK, s.do("GET", "/api/v1/fleet").Code)
	require.Equal(t, 1, s.userGets(), "the renewed cookie is trusted for another window")

	s.gh.mu.Lock()
	s.gh.valid["ghu_alice"] = false // revoked by the user on GitHub, or by another replica's sign-out
	s.gh.mu.Unlock()
	*s.now = s.now.Add(5 * time.Minute)
	rec = s.do("GET", "/api/v1/fleet")
	require.Equal(t, http.StatusUnauthorized, rec.Code, "a token GitHub refuses ends the session")
	cleared := rec.Result().Cookies()
	require.Len(t, cleared, 1)
	require.Equal(t, -1, cleared[0].MaxAge, "and the cookie is cleared")
	require.Equal(t, http.StatusSeeOther, s.do("GET", "/fleet").Code)
}

func TestSignOutRevokesTheTokenAndEndsTheSessionHereAtOnce(t *testing.T) {
	s := newSignedIn(t)
	replay := *s.cookie
	rec := s.do("POST", "/fleet/logout")
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/fleet/signed-out", rec.Header().Get("Location"), "not straight back to a sign-in")
	require.Equal(t, -1, rec.Result().Cookies()[0].MaxAge, "the cookie is cleared")
	require.Equal(t, []string{"ghu_alice"}, s.gh.revokes, "the token is revoked at GitHub with the client credentials")

	s.cookie = &replay
	require.Equal(t, http.StatusUnauthorized, s.do("GET", "/api/v1/fleet").Code, "a copy of the cookie is refused at once here")
	require.Zero(t, s.userGets(), "without asking GitHub")
}

func TestRevocationsAreBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := newRevocations(func() time.Time { return now })
	v.add("old", now.Add(time.Minute))
	for i := range maxRevocations {
		v.add(fmt.Sprintf("t%d", i), now.Add(time.Hour))
	}
	require.Len(t, v.tokens, maxRevocations)
	require.False(t, v.has("old"), "the one expiring soonest made room")
	require.True(t, v.has("t0"))
	now = now.Add(time.Hour)
	require.False(t, v.has("t0"), "forgotten once GitHub's answer covers it")
}
