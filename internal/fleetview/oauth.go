package fleetview

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
)

// stateCookie carries the OAuth state between /fleet/login and /fleet/callback.
const stateCookie = "kalypso_oauth_state"

// OAuth is the GitHub App's user authorization (OAuth web) flow.
type OAuth struct {
	ClientID     string
	ClientSecret string
	WebURL       string       // GitHub's web URL: /login/oauth/authorize and /login/oauth/access_token
	APIURL       string       // GitHub's REST URL, with a trailing slash
	PublicURL    string       // the app's external URL; the callback is PublicURL/fleet/callback
	HTTP         *http.Client // for the token exchange and the user's API calls
}

func (o *OAuth) callbackURL() string { return strings.TrimSuffix(o.PublicURL, "/") + "/fleet/callback" }

func (o *OAuth) secure() bool { return strings.HasPrefix(o.PublicURL, "https://") }

// authorizeURL is where the browser signs in.
func (o *OAuth) authorizeURL(state string) string {
	q := url.Values{"client_id": {o.ClientID}, "redirect_uri": {o.callbackURL()}, "state": {state}}
	return strings.TrimSuffix(o.WebURL, "/") + "/login/oauth/authorize?" + q.Encode()
}

// exchange trades an authorization code for the user's token.
func (o *OAuth) exchange(ctx context.Context, code string) (string, error) {
	form := url.Values{"client_id": {o.ClientID}, "client_secret": {o.ClientSecret}, "code": {code}, "redirect_uri": {o.callbackURL()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.WebURL, "/")+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("fleet: token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("fleet: token exchange: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil {
		return "", fmt.Errorf("fleet: token exchange: %w", err)
	}
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return "", fmt.Errorf("fleet: token exchange: status %d %q", resp.StatusCode, ellipsis.Cut(out.Error, 100))
	}
	return out.AccessToken, nil
}

// userClient is a REST client acting as the signed-in user.
func (o *OAuth) userClient(token string) (*github.Client, error) {
	gh, err := github.NewClient(o.HTTP).WithAuthToken(token).WithEnterpriseURLs(o.APIURL, o.APIURL)
	if err != nil {
		return nil, fmt.Errorf("fleet: user client: %w", err)
	}
	return gh, nil
}

var loginPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// login reads the user's login; a token GitHub refuses (401: expired or revoked) is
// ErrNoSession.
func (o *OAuth) login(ctx context.Context, token string) (string, error) {
	gh, err := o.userClient(token)
	if err != nil {
		return "", err
	}
	u, resp, err := gh.Users.Get(ctx, "")
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		return "", ErrNoSession
	}
	if err != nil {
		return "", fmt.Errorf("fleet: read the signed-in user: %w", err)
	}
	if !loginPattern.MatchString(u.GetLogin()) {
		return "", fmt.Errorf("fleet: unexpected login %q", ellipsis.Cut(u.GetLogin(), 50))
	}
	return u.GetLogin(), nil
}

// canRead reports whether the user can read a repository, asked with the user's own token.
func (o *OAuth) canRead(ctx context.Context, token, repo string) (bool, error) {
	owner, name, _ := strings.Cut(repo, "/")
	gh, err := o.userClient(token)
	if err != nil {
		return false, err
	}
	r, resp, err := gh.Repositories.Get(ctx, owner, name)
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		return false, ErrNoSession // the user's token expired or was revoked: sign in again
	}
	if notFound(err) || isForbidden(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("fleet: access to %s: %w", repo, err)
	}
	return r.GetPermissions()["pull"], nil
}

func isForbidden(err error) bool {
	var e *github.ErrorResponse
	if ok := asError(err, &e); ok && e.Response != nil {
		return e.Response.StatusCode == http.StatusForbidden
	}
	return false
}

// newState returns a random OAuth state.
func newState() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// sameState compares the state GitHub sent back with the cookie's, in constant time.
func sameState(r *http.Request) bool {
	c, err := r.Cookie(stateCookie)
	got := r.URL.Query().Get("state")
	return err == nil && c.Value != "" && got != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) == 1
}

// stateCookieFor sets (value) or clears ("") the state cookie.
func (o *OAuth) stateCookieFor(value string) *http.Cookie {
	c := &http.Cookie{Name: stateCookie, Value: value, Path: "/fleet", HttpOnly: true, Secure: o.secure(), SameSite: http.SameSiteLaxMode, MaxAge: 600}
	if value == "" {
		c.MaxAge, c.Expires = -1, time.Unix(0, 0)
	}
	return c
}
