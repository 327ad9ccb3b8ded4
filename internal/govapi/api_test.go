package govapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// users knows each token's user and access.
type users map[string]audit.Access

func (u users) Access(_ context.Context, token, _ string) (audit.Access, error) {
	a, ok := u[token]
	if !ok {
		return a, audit.ErrUnauthenticated
	}
	return a, nil
}

// promoter records the overrides it is asked for.
type promoter struct {
	overrides []string
	refuse    error
}

func (p *promoter) RollBack(context.Context, envref.Env, string, string) (promote.Rollback, error) {
	return promote.Rollback{}, nil
}

func (p *promoter) RollBackConfig(context.Context, envref.Env, string, string) (promote.Rollback, error) {
	return promote.Rollback{}, nil
}

func (p *promoter) Release(context.Context, envref.Env, string, string) (store.Hold, error) {
	return store.Hold{}, nil
}

func (p *promoter) OverrideWindow(_ context.Context, env envref.Env, commit, user, reason string) (promote.Overridden, error) {
	if p.refuse != nil {
		return promote.Overridden{}, p.refuse
	}
	p.overrides = append(p.overrides, strings.Join([]string{env.Name, commit, user, reason}, " "))
	return promote.Overridden{Environment: env.Name, Commit: commit, User: user, Reason: reason}, nil
}

func newAPI(p *promoter) *http.ServeMux {
	a := &API{
		Users: users{"admin-token": {Login: "carol", Read: true, Write: true, Admin: true}, "write-token": {Login: "alice", Read: true, Write: true}},
		Resolve: func(_ context.Context, cp envref.Repo, env string) (envref.Env, error) {
			if env != "dev" {
				return envref.Env{}, fmt.Errorf("%s %s: %w", cp, env, ErrUnknownEnvironment)
			}
			return envref.Env{Installation: 1, ControlPlane: cp, Name: env}, nil
		},
		Promoter: p,
		Logger:   zerolog.Nop(),
	}
	mux := http.NewServeMux()
	a.Register(mux)
	return mux
}

func post(t *testing.T, mux *http.ServeMux, path, token, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

const sha = "0123456789abcdef0123456789abcdef01234567"

func TestOverrideNeedsAdminAReasonAndAKnownEnvironment(t *testing.T) {
	t.Parallel()
	p := &promoter{}
	mux := newAPI(p)
	body := func(env, reason, commit string) string {
		b, _ := json.Marshal(Request{ControlPlane: "org/cp", Environment: env, Reason: reason, Commit: commit})
		return string(b)
	}
	for _, tc := range []struct {
		name, token, body string
		code              int
		says              string
	}{
		{"no token", "", body("dev", "hotfix", ""), http.StatusUnauthorized, "token is required"},
		{"write only", "write-token", body("dev", "hotfix", ""), http.StatusForbidden, "admin permission on org/cp is required"},
		{"no reason", "admin-token", body("dev", "  ", ""), http.StatusBadRequest, "reason: required"},
		{"unknown environment", "admin-token", body("prod", "hotfix", ""), http.StatusNotFound, "no such environment"},
		{"bad commit", "admin-token", body("dev", "hotfix", "main"), http.StatusBadRequest, "not a full commit ID"},
		{"unknown field", "admin-token", `{"controlPlane":"org/cp","environment":"dev","reason":"x","force":true}`, http.StatusBadRequest, "unknown field"},
	} {
		code, out := post(t, mux, "/api/v1/override", tc.token, tc.body)
		require.Equal(t, tc.code, code, tc.name)
		require.Contains(t, out, tc.says, tc.name)
	}
	require.Empty(t, p.overrides, "no refused request reaches the promoter")

	code, out := post(t, mux, "/api/v1/override", "admin-token", body("dev", "hotfix INC-42", strings.ToUpper(sha)))
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, []string{"dev " + sha + " carol hotfix INC-42"}, p.overrides)
	var got promote.Overridden
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, promote.Overridden{Environment: "dev", Commit: sha, User: "carol", Reason: "hotfix INC-42"}, got)

	code, _ = post(t, mux, "/api/v1/rollback", "write-token", body("dev", "broken", ""))
	require.Equal(t, http.StatusOK, code, "a rollback still needs only write permission")
}

func TestARefusedOverrideIsAConflict(t *testing.T) {
	t.Parallel()
	for _, err := range []error{promote.ErrNothingToOverride, fmt.Errorf("%w: behind", promote.ErrRefused)} {
		mux := newAPI(&promoter{refuse: err})
		code, out := post(t, mux, "/api/v1/override", "admin-token", `{"controlPlane":"org/cp","environment":"dev","reason":"hotfix"}`)
		require.Equal(t, http.StatusConflict, code)
		require.Contains(t, out, err.Error())
	}
}
