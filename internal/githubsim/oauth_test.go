package githubsim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestOAuthWebFlowAndUserToken(t *testing.T) {
	sim, err := New(Options{Dir: filepath.Join(t.TempDir(), "gh")})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { sim.Close() })
	inst := sim.CreateInstallation("acme")
	require.NoError(t, sim.CreateRepo(inst, "acme", "private-plane", "main"))
	require.NoError(t, sim.SetPermission("acme", "private-plane", "alice", "read"))

	jar, _ := cookiejar.New(nil)
	var landed *url.URL
	client := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Host == "app.example" {
			landed = r.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	authorize := sim.URL() + "/login/oauth/authorize?" + url.Values{"client_id": {sim.ClientID()},
		"redirect_uri": {"http://app.example/fleet/callback"}, "state": {"s1"}}.Encode()
	resp, err := client.Get(sim.URL() + "/login?user=alice&return_to=" + url.QueryEscape(authorize))
	require.NoError(t, err)
	resp.Body.Close()
	require.NotNil(t, landed, "the browser is sent back to the app")
	require.Equal(t, "s1", landed.Query().Get("state"))

	form := url.Values{"client_id": {sim.ClientID()}, "client_secret": {sim.ClientSecret()}, "code": {landed.Query().Get("code")}}
	req, _ := http.NewRequest(http.MethodPost, sim.URL()+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, decodeJSON(resp, &tok))
	require.NotEmpty(t, tok.AccessToken)

	gh, err := github.NewClient(nil).WithAuthToken(tok.AccessToken).WithEnterpriseURLs(sim.APIURL(), sim.APIURL())
	require.NoError(t, err)
	ctx := context.Background()
	u, _, err := gh.Users.Get(ctx, "")
	require.NoError(t, err)
	require.Equal(t, "alice", u.GetLogin())
	r, _, err := gh.Repositories.Get(ctx, "acme", "private-plane")
	require.NoError(t, err)
	require.True(t, r.GetPermissions()["pull"])
	require.False(t, r.GetPermissions()["push"])

	bob, _ := github.NewClient(nil).WithAuthToken(sim.UserToken("bob")).WithEnterpriseURLs(sim.APIURL(), sim.APIURL())
	_, resp2, err := bob.Repositories.Get(ctx, "acme", "private-plane")
	require.Error(t, err, "bob has no access")
	require.Equal(t, http.StatusNotFound, resp2.StatusCode)
	_, resp2, err = gh.Repositories.ListStatuses(ctx, "acme", "private-plane", "main", nil)
	require.Error(t, err, "a user token reaches only the user routes")
	require.Equal(t, http.StatusForbidden, resp2.StatusCode)

	resp, err = http.PostForm(sim.URL()+"/login/oauth/access_token", form)
	require.NoError(t, err)
	var again struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	require.NoError(t, decodeJSON(resp, &again))
	require.Equal(t, "bad_verification_code", again.Error, "a code is used once")
	require.Empty(t, again.AccessToken)
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func TestRevokeUserToken(t *testing.T) {
	sim, err := New(Options{Dir: filepath.Join(t.TempDir(), "gh")})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { sim.Close() })
	ctx := context.Background()
	token := sim.UserToken("alice")
	revoker := func(id, secret string) *github.Client {
		c, err := github.NewClient(&http.Client{Transport: &github.BasicAuthTransport{Username: id, Password: secret}}).
			WithEnterpriseURLs(sim.APIURL(), sim.APIURL())
		require.NoError(t, err)
		return c
	}
	resp, err := revoker(sim.ClientID(), "wrong").Authorizations.Revoke(ctx, sim.ClientID(), token)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "only with the App's client credentials")
	require.True(t, sim.UserTokenValid(token))

	resp, err = revoker(sim.ClientID(), sim.ClientSecret()).Authorizations.Revoke(ctx, sim.ClientID(), token)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.False(t, sim.UserTokenValid(token))
	user, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(sim.APIURL(), sim.APIURL())
	require.NoError(t, err)
	_, resp, err = user.Users.Get(ctx, "")
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a revoked token is refused")

	resp, err = revoker(sim.ClientID(), sim.ClientSecret()).Authorizations.Revoke(ctx, sim.ClientID(), token)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "an unknown token")
	require.Equal(t, 3, sim.CallCount("DELETE /applications/{client_id}/token"))
}

func TestTokenExchangesAreCounted(t *testing.T) {
	sim, err := New(Options{Dir: filepath.Join(t.TempDir(), "gh")})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	t.Cleanup(func() { sim.Close() })
	require.Zero(t, sim.TokenExchanges())
	for range 2 {
		resp, err := http.PostForm(sim.URL()+"/login/oauth/access_token", url.Values{"client_id": {sim.ClientID()},
			"client_secret": {sim.ClientSecret()}, "code": {"forged"}})
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.Equal(t, 2, sim.TokenExchanges())
}
