package promote

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/ghfake"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// deploy creates n GitHub Deployments of a main commit to env whose payload says they landed
// on gitops, each with a latest status of state ("" for none); it returns their IDs, oldest
// first.
func deploy(t *testing.T, gh *ghfake.GitHub, env, commit, gitops, state string, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	data, err := json.Marshal(payload{GitOpsRepo: gitopsRepo.String(), GitOpsCommit: gitops})
	require.NoError(t, err)
	var ids []int64
	for range n {
		dep, err := gh.CreateDeployment(ctx, cp, &github.DeploymentRequest{Ref: github.String(commit),
			Environment: github.String(env), Payload: json.RawMessage(data)})
		require.NoError(t, err)
		if state != "" {
			require.NoError(t, gh.CreateDeploymentStatus(ctx, cp, dep.GetID(), &github.DeploymentStatusRequest{State: github.String(state)}))
		}
		ids = append(ids, dep.GetID())
	}
	return ids
}

// latestState is the state of a deployment's newest status in the fake, "" when it has none.
func latestState(t *testing.T, gh *ghfake.GitHub, id int64) string {
	t.Helper()
	st, err := gh.LatestDeploymentStatus(context.Background(), cp, id)
	require.NoError(t, err)
	return st.GetState()
}

// TestEndDeploymentsEndsEveryPage checks that when a commit is replaced in an environment
// every unfinished Deployment of it there is ended, past the first page, and that
// finished ones keep their state.
func TestEndDeploymentsEndsEveryPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	const m = "1111111111111111111111111111111111111111"
	done := deploy(t, w.gh, "dev", m, "g0", "success", 1)
	waiting := deploy(t, w.gh, "dev", m, "g1", "in_progress", 230)
	other := deploy(t, w.gh, "stage", m, "g1", "in_progress", 1)
	require.NoError(t, w.p.endDeployments(context.Background(), w.loc("dev", m), "superseded by main 2222222"))
	for _, id := range waiting {
		require.Equal(t, "inactive", latestState(t, w.gh, id), "deployment %d of %v", id, waiting)
	}
	require.Equal(t, "success", latestState(t, w.gh, done[0]))
	require.Equal(t, "in_progress", latestState(t, w.gh, other[0]), "another environment's deployment is left alone")
	require.Equal(t, 3, w.gh.Count("Deployments"), "three pages of 100")
}

// TestEndDeploymentsPastTheLimitNamesTheSetting checks the bound of the Deployments read.
func TestEndDeploymentsPastTheLimitNamesTheSetting(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	w.gh.Lists.Deployments = 150
	const m = "1111111111111111111111111111111111111111"
	deploy(t, w.gh, "dev", m, "g1", "in_progress", 151)
	err := w.p.endDeployments(context.Background(), w.loc("dev", m), "superseded")
	var limit *ghport.LimitError
	require.True(t, errors.As(err, &limit), "%v", err)
	require.Contains(t, err.Error(), "more than 150 deployments of "+cp.String()+" to dev of 1111111 ("+ghport.SettingMaxDeployments+")")
}
