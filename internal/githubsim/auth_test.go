package githubsim

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/stretchr/testify/require"
)

func signJWT(t *testing.T, f *fixture, claims jwt.MapClaims, other bool) string {
	t.Helper()
	key, err := testKey()
	require.NoError(t, err)
	if other {
		key, err = GenerateKey()
		require.NoError(t, err)
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(key)
	require.NoError(t, err)
	return tok
}

func TestAccessTokenJWT(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	valid := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": f.sim.AppID(), "iat": now.Add(-30 * time.Second).Unix(), "exp": now.Add(2 * time.Minute).Unix()}
	}
	tests := []struct {
		name   string
		claims func() jwt.MapClaims
		other  bool
		scheme string
		want   int
	}{
		{"numeric iss", valid, false, "Bearer", http.StatusCreated},
		{"string iss", func() jwt.MapClaims {
			c := valid()
			c["iss"] = strconv.FormatInt(f.sim.AppID(), 10)
			return c
		}, false, "Bearer", http.StatusCreated},
		{"wrong iss", func() jwt.MapClaims { c := valid(); c["iss"] = 99; return c }, false, "Bearer", http.StatusUnauthorized},
		{"expired", func() jwt.MapClaims { c := valid(); c["exp"] = now.Add(-time.Minute).Unix(); return c }, false, "Bearer", http.StatusUnauthorized},
		{"too long", func() jwt.MapClaims { c := valid(); c["exp"] = now.Add(time.Hour).Unix(); return c }, false, "Bearer", http.StatusUnauthorized},
		{"other key", valid, true, "Bearer", http.StatusUnauthorized},
		{"token scheme", valid, false, "token", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", f.sim.APIURL()+"app/installations/"+strconv.FormatInt(f.inst, 10)+"/access_tokens", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", tt.scheme+" "+signJWT(t, f, tt.claims(), tt.other))
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tt.want, resp.StatusCode)
		})
	}
}

func TestTokenScope(t *testing.T) {
	f := newFixture(t)
	otherInst := f.sim.CreateInstallation("fabrikam")
	require.NoError(t, f.sim.CreateRepo(otherInst, "fabrikam", "infra", "main"))
	tests := []struct {
		name  string
		token string
		path  string
		want  int
	}{
		{"own repository", f.token, repoPath(""), http.StatusOK},
		{"case-insensitive names", f.token, "/repos/Contoso/GitOps", http.StatusOK},
		{"other installation's repository", f.token, "/repos/fabrikam/infra", http.StatusNotFound},
		{"unknown token", "ghs_unknown", repoPath(""), http.StatusUnauthorized},
		{"JWT-only route with a token", f.token, "/app", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.token, tt.token = tt.token, f.token
			defer func() { f.token = tt.token }()
			code, _, _ := f.do(t, "GET", tt.path, nil)
			require.Equal(t, tt.want, code)
		})
	}
	f.sim.SuspendInstallation(f.inst, true)
	code, _, _ := f.do(t, "GET", repoPath(""), nil)
	require.Equal(t, http.StatusForbidden, code)
	f.sim.SuspendInstallation(f.inst, false)
	f.sim.ExpireTokens()
	code, _, _ = f.do(t, "GET", repoPath(""), nil)
	require.Equal(t, http.StatusUnauthorized, code)
}

// TestGoGitHubAppClientCreator points go-githubapp at the simulator, as the App does.
func TestGoGitHubAppClientCreator(t *testing.T) {
	f := newFixture(t)
	cc, err := githubapp.NewDefaultCachingClientCreator(githubapp.Config{
		V3APIURL: f.sim.APIURL(),
		App: struct {
			IntegrationID int64  `yaml:"integration_id" json:"integrationId"`
			WebhookSecret string `yaml:"webhook_secret" json:"webhookSecret"`
			PrivateKey    string `yaml:"private_key" json:"privateKey"`
		}{IntegrationID: f.sim.AppID(), WebhookSecret: testSecret, PrivateKey: string(f.sim.PrivateKeyPEM())},
	})
	require.NoError(t, err)
	app, err := cc.NewAppClient()
	require.NoError(t, err)
	inst, _, err := app.Apps.FindRepositoryInstallation(ctx(), testOwner, testRepo)
	require.NoError(t, err)
	require.Equal(t, f.inst, inst.GetID())
	client, err := cc.NewInstallationClient(inst.GetID())
	require.NoError(t, err)
	for range 2 {
		r, _, err := client.Repositories.Get(ctx(), testOwner, testRepo)
		require.NoError(t, err)
		require.Equal(t, "main", r.GetDefaultBranch())
	}
	require.Equal(t, 1, f.sim.CallCount("POST /app/installations/{installation_id}/access_tokens"))
	require.Equal(t, 2, f.sim.CallCount("GET /repos/{owner}/{repo}"))
	require.Equal(t, 4998, f.sim.RateLimitRemaining(f.inst))
}
