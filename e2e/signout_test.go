package e2e

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// sessionCookie returns the browser's session cookie for the app.
func (w *world) sessionCookie(browser *http.Client) *http.Cookie {
	w.t.Helper()
	u, err := url.Parse("http://" + w.addr + "/fleet")
	require.NoError(w.t, err)
	for _, c := range browser.Jar.Cookies(u) {
		if c.Name == fleetview.SessionCookie {
			return c
		}
	}
	w.t.Fatal("the browser has no session cookie")
	return nil
}

// sessionCookieOrNil returns the browser's session cookie, or an empty one.
func (w *world) sessionCookieOrNil(browser *http.Client) *http.Cookie {
	u, _ := url.Parse("http://" + w.addr + "/fleet")
	for _, c := range browser.Jar.Cookies(u) {
		if c.Name == fleetview.SessionCookie {
			return c
		}
	}
	return &http.Cookie{Name: fleetview.SessionCookie}
}

// withCookie reads /api/v1/fleet with nothing but the cookie, as an attacker replaying it.
func (w *world) withCookie(c *http.Cookie) int {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+w.addr+"/api/v1/fleet", nil)
	require.NoError(w.t, err)
	req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

const revokeRoute = "DELETE /applications/{client_id}/token"

// An attacker who copied a session cookie replays it after its user signed out. Sign-out
// revokes the user's token at GitHub: the replica that signed out refuses the copy at once;
// another replica (here, the app restarted: it remembers nothing) trusts the cookie at most
// until its fleet.sessionRefresh window ends (here 1ms), then asks GitHub, which refuses the
// revoked token.
func TestE2EFleetSignOutEndsTheSessionOnEveryReplica(t *testing.T) {
	w := fleetWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "read"))
	alice := w.signIn("alice")
	copied := w.sessionCookie(alice)
	require.Equal(t, http.StatusOK, w.withCookie(copied), "the copy works while alice is signed in")

	resp, err := alice.Post("http://"+w.addr+"/fleet/logout", "application/x-www-form-urlencoded", nil)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "/fleet/signed-out", resp.Request.URL.Path, "sign-out does not sign in again through GitHub")
	require.Contains(t, string(page), "You are signed out")
	require.Equal(t, http.StatusUnauthorized, w.withCookie(w.sessionCookieOrNil(alice)), "the browser holds no session")
	require.Equal(t, 1, w.sim.CallCount(revokeRoute), "the token is revoked at GitHub")
	require.Equal(t, http.StatusUnauthorized, w.withCookie(copied), "this replica refuses the copy at once")

	w.stop()
	w.start(append(w.fleetEnv(), "KALYPSO_FLEET_SESSION_REFRESH=1ms")...)
	users := w.sim.CallCount("GET /user")
	require.Equal(t, http.StatusUnauthorized, w.withCookie(copied), "past the window, GitHub refuses the revoked token")
	require.Equal(t, users+1, w.sim.CallCount("GET /user"), "one check with GitHub")
}

// Fifty forged OAuth callbacks, with codes but without the state the sign-in set in the
// browser, make the app send no token exchange (which would carry its client secret).
func TestE2EFleetForgedCallbacksSendNoTokenExchange(t *testing.T) {
	w := fleetWorld(t)
	before := w.sim.TokenExchanges()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i := range 50 {
		req, err := http.NewRequest(http.MethodGet, "http://"+w.addr+"/fleet/callback?code=forged&state=s"+string(rune('a'+i%26)), nil)
		require.NoError(t, err)
		if i%2 == 1 { // half of them with a state cookie of their own making
			req.AddCookie(&http.Cookie{Name: "kalypso_oauth_state", Value: "another"})
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
	require.Equal(t, before, w.sim.TokenExchanges(), "no code was exchanged")
	w.signIn("alice")
	require.Equal(t, before+1, w.sim.TokenExchanges(), "a genuine sign-in exchanges its code once")
}
