package githubsim

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestRefUpdates(t *testing.T) {
	f := newFixture(t)
	main := f.seed
	side, err := f.sim.CommitFiles(testOwner, testRepo, "side", map[string]*string{"side.txt": ptr("x")}, "side")
	require.NoError(t, err)
	ahead, err := f.sim.CommitFiles(testOwner, testRepo, "main", map[string]*string{"a.txt": ptr("a")}, "ahead")
	require.NoError(t, err)
	f.hooks.reset()
	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		want    int
		message string
	}{
		{"create existing", "POST", "/git/refs", map[string]string{"ref": "refs/heads/main", "sha": main}, 422, "Reference already exists"},
		{"create bad name", "POST", "/git/refs", map[string]string{"ref": "heads/x", "sha": main}, 422, "Reference name must start with 'refs/' and have at least two slashes."},
		{"create unknown sha", "POST", "/git/refs", map[string]string{"ref": "refs/heads/x", "sha": "1111111111111111111111111111111111111111"}, 422, "Object does not exist"},
		{"non fast forward", "PATCH", "/git/refs/heads/main", map[string]any{"sha": side}, 422, "Update is not a fast forward"},
		{"update missing", "PATCH", "/git/refs/heads/nope", map[string]any{"sha": main}, 422, "Reference does not exist"},
		{"delete missing", "DELETE", "/git/refs/heads/nope", nil, 422, "Reference does not exist"},
		{"create", "POST", "/git/refs", map[string]string{"ref": "refs/heads/gitops/dev", "sha": main}, 201, ""},
		{"fast forward", "PATCH", "/git/refs/heads/gitops/dev", map[string]any{"sha": ahead}, 200, ""},
		{"forced", "PATCH", "/git/refs/heads/gitops/dev", map[string]any{"sha": side, "force": true}, 200, ""},
		{"delete", "DELETE", "/git/refs/heads/gitops/dev", nil, 204, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := f.do(t, tt.method, repoPath(tt.path), tt.body)
			require.Equal(t, tt.want, code, string(body))
			if tt.message != "" {
				var e struct{ Message string }
				require.NoError(t, json.Unmarshal(body, &e))
				require.Equal(t, tt.message, e.Message)
			}
		})
	}
	var pushes []*github.PushEvent
	for _, r := range f.hooks.all() {
		pushes = append(pushes, r.payload.(*github.PushEvent))
	}
	require.Len(t, pushes, 4, "one push webhook per successful ref change")
	require.True(t, pushes[0].GetCreated())
	require.False(t, pushes[1].GetForced())
	require.True(t, pushes[2].GetForced())
	require.True(t, pushes[3].GetDeleted())
	require.Nil(t, pushes[3].HeadCommit)
}

func TestMatchingRefs(t *testing.T) {
	f := newFixture(t)
	for _, b := range []string{"gitops/dev", "gitops/prod", "other"} {
		_, _, err := f.client.Git.CreateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("refs/heads/" + b), Object: &github.GitObject{SHA: &f.seed}})
		require.NoError(t, err)
	}
	refs, _, err := f.client.Git.ListMatchingRefs(ctx(), testOwner, testRepo, &github.ReferenceListOptions{Ref: "heads/gitops/"})
	require.NoError(t, err)
	require.Len(t, refs, 2)
	require.Equal(t, "refs/heads/gitops/dev", refs[0].GetRef())
	none, _, err := f.client.Git.ListMatchingRefs(ctx(), testOwner, testRepo, &github.ReferenceListOptions{Ref: "heads/nothing"})
	require.NoError(t, err)
	require.Empty(t, none)
	ref, _, err := f.client.Git.GetRef(ctx(), testOwner, testRepo, "heads/gitops/prod")
	require.NoError(t, err)
	require.Equal(t, f.seed, ref.GetObject().GetSHA())
	require.Equal(t, http.StatusNotFound, func() int {
		_, r, _ := f.client.Git.GetRef(ctx(), testOwner, testRepo, "heads/gitops")
		return r.StatusCode
	}())
}
