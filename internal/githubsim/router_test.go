package githubsim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRouterMatch(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		method, path string
		route        string
		params       map[string]string
	}{
		{"GET", "/repos/o/r/git/ref/heads/gitops/dev", "GET /repos/{owner}/{repo}/git/ref/{ref}", map[string]string{"ref": "heads/gitops/dev"}},
		{"GET", "/repos/o/r/git/ref/heads%2Fgitops%2Fdev", "GET /repos/{owner}/{repo}/git/ref/{ref}", map[string]string{"ref": "heads/gitops/dev"}},
		{"GET", "/repos/o/r/commits/gitops/dev/status", "GET /repos/{owner}/{repo}/commits/{ref}/status", map[string]string{"ref": "gitops/dev"}},
		{"GET", "/repos/o/r/commits/abc", "GET /repos/{owner}/{repo}/commits/{ref}", map[string]string{"ref": "abc"}},
		{"GET", "/repos/o/r/contents/", "GET /repos/{owner}/{repo}/contents/{path}", map[string]string{"path": ""}},
		{"GET", "/repos/o/r/contents/a/b%20c.yaml", "GET /repos/{owner}/{repo}/contents/{path}", map[string]string{"path": "a/b c.yaml"}},
		{"GET", "/repos/o/r/compare/main...gitops/dev", "GET /repos/{owner}/{repo}/compare/{basehead}", map[string]string{"basehead": "main...gitops/dev"}},
		{"PUT", "/repos/o/r/pulls/3/merge", "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", map[string]string{"pull_number": "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rt, params, _ := f.sim.router.match(tt.method, tt.path)
			require.NotNil(t, rt)
			require.Equal(t, tt.route, rt.name())
			for k, v := range tt.params {
				require.Equal(t, v, params[k])
			}
		})
	}
	rt, _, pathFound := f.sim.router.match("DELETE", "/repos/o/r/pulls/3")
	require.Nil(t, rt)
	require.True(t, pathFound)
}
