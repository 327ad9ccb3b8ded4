package ghport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// restAnswering returns an adapter whose every request gets status and body.
func restAnswering(t *testing.T, status int, body string) REST {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	gh, err := github.NewClient(srv.Client()).WithEnterpriseURLs(srv.URL+"/", srv.URL+"/")
	require.NoError(t, err)
	return NewREST(gh)
}

func TestRESTClassifiesErrors(t *testing.T) {
	repo := envref.Repo{Owner: "o", Name: "g"}
	pr := &github.NewPullRequest{Title: github.String("t"), Head: github.String("kalypso/dev"), Base: github.String("main")}
	cases := map[string]struct {
		status int
		body   string
		want   error
	}{
		"an open pull request": {422, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for o:kalypso/dev."}]}`, ErrPullRequestExists},
		"no commits":           {422, `{"message":"Validation Failed","errors":[{"message":"No commits between main and kalypso/dev"}]}`, ErrNoCommits},
		"another validation":   {422, `{"message":"Validation Failed","errors":[{"message":"Base does not exist"}]}`, nil},
		"gone":                 {404, `{"message":"Not Found"}`, ErrNotFound},
		"a server error":       {500, `{"message":"boom"}`, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := restAnswering(t, tc.status, tc.body).CreatePullRequest(context.Background(), repo, pr)
			require.Error(t, err)
			var ge *github.ErrorResponse
			require.True(t, errors.As(err, &ge), "the go-github error stays reachable")
			for _, kind := range []error{ErrPullRequestExists, ErrNotFound, ErrNoCommits} {
				require.Equal(t, kind == tc.want, errors.Is(err, kind), "%v", kind)
			}
			require.Equal(t, ge.Error(), err.Error(), "the text is GitHub's")
		})
	}
}

func TestCanWrite(t *testing.T) {
	for level, want := range map[string]bool{"admin": true, "maintain": true, "write": true, "triage": false, "read": false, "none": false, "": false} {
		if CanWrite(level) != want {
			t.Errorf("CanWrite(%q) = %v, want %v", level, !want, want)
		}
	}
}
