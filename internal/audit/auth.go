package audit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Errors of authentication.
var (
	// ErrUnauthenticated: no token, or one GitHub refuses.
	ErrUnauthenticated = errors.New("a GitHub user token is required (Authorization: Bearer TOKEN)")
	// ErrForbidden: the user lacks the permission the request needs.
	ErrForbidden = errors.New("permission denied")
)

// Access is what a user may do on a repository.
type Access struct {
	Login       string
	Read, Write bool
	Admin       bool
}

// Users identifies the user of a GitHub user token and their access to a repository.
type Users interface {
	Access(ctx context.Context, token, repo string) (Access, error)
}

// GitHubUsers asks GitHub, with the user's own token: GET /user, then GET /repos/{owner}/{repo}
// for the permissions the user has there.
type GitHubUsers struct {
	APIURL string       // the REST API's base URL, https://api.github.com/ or GHES's /api/v3/
	HTTP   *http.Client // nil: http.DefaultClient
}

// Access implements Users.
func (u GitHubUsers) Access(ctx context.Context, token, repo string) (Access, error) {
	if token == "" {
		return Access{}, ErrUnauthenticated
	}
	gh, err := github.NewClient(u.HTTP).WithAuthToken(token).WithEnterpriseURLs(u.APIURL, u.APIURL)
	if err != nil {
		return Access{}, fmt.Errorf("audit: user client: %w", err)
	}
	me, resp, err := gh.Users.Get(ctx, "")
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		return Access{}, ErrUnauthenticated
	}
	if err != nil {
		return Access{}, fmt.Errorf("audit: read the token's user: %w", err)
	}
	owner, name, _ := strings.Cut(repo, "/")
	r, resp, err := gh.Repositories.Get(ctx, owner, name)
	if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden) {
		return Access{Login: me.GetLogin()}, nil
	}
	if err != nil {
		return Access{}, fmt.Errorf("audit: access of %s to %s: %w", me.GetLogin(), repo, err)
	}
	p := r.GetPermissions()
	return Access{Login: me.GetLogin(), Read: p["pull"], Write: p["push"], Admin: p["admin"]}, nil
}

// Token reads the user token of a request: Authorization: Bearer TOKEN (or token TOKEN).
func Token(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, scheme := range []string{"Bearer ", "bearer ", "token "} {
		if t, ok := strings.CutPrefix(h, scheme); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}
