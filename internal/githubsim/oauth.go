package githubsim

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Default OAuth credentials of the simulated App (Options.ClientID, Options.ClientSecret).
const (
	DefaultClientID     = "Iv1.kalypsosim0000"
	DefaultClientSecret = "kalypso-sim-client-secret"
)

// WebUserCookie is the simulator's own sign-in cookie: GET /login?user=LOGIN sets it, and
// /login/oauth/authorize authorizes the App for that user.
const WebUserCookie = "githubsim_user"

// oauthState holds the OAuth web flow's codes and the user tokens they were traded for.
type oauthState struct {
	mu        sync.Mutex
	codes     map[string]oauthCode
	tokens    map[string]string // user access token → login
	exchanges int               // POST /login/oauth/access_token requests
}

// oauthCode is an authorization code waiting to be exchanged.
type oauthCode struct {
	login, redirect string
	expires         time.Time
}

func newOAuthState() *oauthState {
	return &oauthState{codes: map[string]oauthCode{}, tokens: map[string]string{}}
}

// ClientID returns the App's OAuth client ID.
func (s *Server) ClientID() string { return s.opts.ClientID }

// ClientSecret returns the App's OAuth client secret.
func (s *Server) ClientSecret() string { return s.opts.ClientSecret }

// UserToken issues a user access token for login without the web flow, as the OAuth flow would.
func (s *Server) UserToken(login string) string {
	token := "ghu_" + randomString(36)
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	s.oauth.tokens[token] = login
	return token
}

// userOfToken returns the login of a user access token.
func (s *Server) userOfToken(token string) (string, bool) {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	login, ok := s.oauth.tokens[strings.TrimSpace(token)]
	return login, ok
}

// serveWebLogin signs a browser in to the simulator: GET /login?user=LOGIN[&return_to=URL].
func (s *Server) serveWebLogin(w http.ResponseWriter, r *http.Request) {
	login := r.URL.Query().Get("user")
	if login == "" || len(login) > 39 {
		http.Error(w, "user is required", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: WebUserCookie, Value: login, Path: "/", HttpOnly: true})
	if to := r.URL.Query().Get("return_to"); to != "" {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("signed in as " + login + "\n"))
}

// serveAuthorize is GET /login/oauth/authorize: the signed-in browser user authorizes the App
// at once, and is sent back to redirect_uri with a code and the state.
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.opts.ClientID {
		http.Error(w, "unknown client_id", http.StatusNotFound)
		return
	}
	c, err := r.Cookie(WebUserCookie)
	if err != nil || c.Value == "" {
		http.Error(w, "not signed in to the simulator: GET /login?user=LOGIN first", http.StatusUnauthorized)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Host == "" {
		http.Error(w, "redirect_uri is required", http.StatusBadRequest)
		return
	}
	code := randomString(20)
	s.oauth.mu.Lock()
	s.oauth.codes[code] = oauthCode{login: c.Value, redirect: redirect.String(), expires: s.now().Add(10 * time.Minute)}
	s.oauth.mu.Unlock()
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// TokenExchanges returns how many times POST /login/oauth/access_token was called: the App
// sending its client secret to trade a code for a user token.
func (s *Server) TokenExchanges() int {
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	return s.oauth.exchanges
}

// serveAccessToken is POST /login/oauth/access_token: a code, once, for a user token.
func (s *Server) serveAccessToken(w http.ResponseWriter, r *http.Request) {
	s.oauth.mu.Lock()
	s.oauth.exchanges++
	s.oauth.mu.Unlock()
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusNotFound, errorBody("Not Found"))
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "bad_request"})
		return
	}
	if r.Form.Get("client_id") != s.opts.ClientID || r.Form.Get("client_secret") != s.opts.ClientSecret {
		writeJSON(w, http.StatusOK, map[string]any{"error": "incorrect_client_credentials"})
		return
	}
	s.oauth.mu.Lock()
	code, ok := s.oauth.codes[r.Form.Get("code")]
	delete(s.oauth.codes, r.Form.Get("code"))
	s.oauth.mu.Unlock()
	redirect := r.Form.Get("redirect_uri")
	if !ok || !s.now().Before(code.expires) || (redirect != "" && !strings.HasPrefix(code.redirect, redirect)) {
		writeJSON(w, http.StatusOK, map[string]any{"error": "bad_verification_code"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": s.UserToken(code.login), "token_type": "bearer", "scope": ""})
}

// authenticateClient checks the App's OAuth client credentials (basic authentication) for
// a route under /applications/{client_id}.
func (s *Server) authenticateClient(c *call) (string, error) {
	id, secret, ok := c.r.BasicAuth()
	if !ok || id != s.opts.ClientID || secret != s.opts.ClientSecret || c.params["client_id"] != id {
		return "", newError(http.StatusNotFound, "Not Found")
	}
	return "oauth:" + id, nil
}

// revokeUserToken is DELETE /applications/{client_id}/token: the App revokes one user
// token; from then on the token is refused (401) everywhere.
func (s *Server) revokeUserToken(c *call) (int, any, error) {
	var in struct {
		AccessToken string `json:"access_token"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.AccessToken == "" {
		return 0, nil, validation("Authorization", "access_token", "access_token is missing")
	}
	s.oauth.mu.Lock()
	defer s.oauth.mu.Unlock()
	if _, ok := s.oauth.tokens[in.AccessToken]; !ok {
		return 0, nil, notFound()
	}
	delete(s.oauth.tokens, in.AccessToken)
	return http.StatusNoContent, nil, nil
}

// UserTokenValid reports whether a user access token is still accepted.
func (s *Server) UserTokenValid(token string) bool {
	_, ok := s.userOfToken(token)
	return ok
}

// getAuthenticatedUser is GET /user for a user token.
func (s *Server) getAuthenticatedUser(c *call) (int, any, error) {
	if c.user == "" {
		return 0, nil, newError(http.StatusForbidden, "Resource not accessible by integration")
	}
	return http.StatusOK, s.userMap(c.user), nil
}

// userRoute reports the routes a user token may call: who am I, and repository metadata.
func userRoute(r *route) bool {
	return r.method == http.MethodGet && (r.pattern == "/user" || r.pattern == "/repos/{owner}/{repo}")
}

// userRole is a user's role on a repository: none unless SetPermission gave one.
func userRole(rp *repo, login string) string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return roleOrNone(rp.perms[strings.ToLower(login)])
}

// userPermissions is the permissions object of a repository for a role.
func userPermissions(role string) map[string]bool {
	rank := map[string]int{"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
	return map[string]bool{"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5}
}

// roleOrNone maps a missing role to none.
func roleOrNone(role string) string {
	if role == "" {
		return "none"
	}
	return role
}
