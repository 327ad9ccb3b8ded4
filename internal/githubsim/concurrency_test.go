package githubsim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

// TestConcurrentClients mixes REST writes and git fetches on one repository.
func TestConcurrentClients(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			branch := fmt.Sprintf("refs/heads/w%d", i)
			if _, _, err := f.client.Git.CreateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: &branch, Object: &github.GitObject{SHA: &f.seed}}); err != nil {
				errs <- err
			}
			if _, _, err := f.client.Repositories.CreateStatus(ctx(), testOwner, testRepo, f.seed, &github.RepoStatus{State: ptr("success"), Context: ptr(branch)}); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			_, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{
				URL: f.sim.GitURL(testOwner, testRepo), Auth: &githttp.BasicAuth{Username: "x-access-token", Password: f.token},
			})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	branches, err := f.sim.Branches(testOwner, testRepo)
	require.NoError(t, err)
	require.Len(t, branches, 5)
	require.Len(t, f.sim.Statuses(testOwner, testRepo, f.seed), 4)
	require.Len(t, f.hooks.all(), 8)
}

// TestHandlerLearnsBaseURL serves the Handler from httptest without SetBaseURL.
func TestHandlerLearnsBaseURL(t *testing.T) {
	key, err := testKey()
	require.NoError(t, err)
	sim, err := New(Options{Dir: t.TempDir(), PrivateKey: key, CacheControl: "private, max-age=60, s-maxage=60"})
	require.NoError(t, err)
	srv := httptest.NewServer(sim)
	defer srv.Close()
	inst := sim.CreateInstallation("o")
	require.NoError(t, sim.CreateRepo(inst, "o", "r", "main"))
	_, err = sim.CommitFiles("o", "r", "main", map[string]*string{"a": ptr("a")}, "seed")
	require.NoError(t, err)
	tok, err := sim.InstallationToken(inst)
	require.NoError(t, err)
	req, err := http.NewRequest("GET", srv.URL+"/api/v3/repos/o/r", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "private, max-age=60, s-maxage=60", resp.Header.Get("Cache-Control"))
	require.Equal(t, srv.URL, sim.URL())
	require.Equal(t, srv.URL+"/o/r.git", sim.GitURL("o", "r"))
}
