package promote

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

// pinnedToDev promotes a new main commit to dev and returns it.
func (w *world) pinnedToDev(file string) string {
	w.t.Helper()
	m := w.main(file)
	require.NoError(w.t, w.p.PromoteMain(context.Background(), w.loc("", m)))
	return m
}

func TestResumeAfterRestart(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		before   func(w *world, m string) // what happened before the restart
		devState string                   // kalypso/dev on the commit afterwards
		stage    bool                     // stage pins the commit afterwards
	}{
		"not merged yet: nothing to do": {func(*world, string) {}, "pending", false},
		"merged while down": {func(w *world, m string) {
			w.gh.SetStatus(gitopsRepo, w.merge("dev", m), cluster1, "success")
		}, "success", true},
		"a wait under way": {func(w *world, m string) {
			merge := w.merge("dev", m)
			w.remotes.Commit(gitopsRepo, "dev", map[string]*string{"unrelated": &m}, "Later")
			w.gh.SetStatus(gitopsRepo, merge, cluster1, "success")
			w.deployment(m, merge)
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m), "pending", "0/1 clusters compliant"))
		}, "success", true},
		"a wait written without its merge commit": {func(w *world, m string) {
			w.gh.SetStatus(gitopsRepo, w.merge("dev", m), cluster1, "success")
			w.deployment(m, "")
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m), "pending", "0/1 clusters compliant"))
		}, "success", true},
		"deployed, not promoted further yet": {func(w *world, m string) {
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m), "success", "deployed to 1 cluster"))
		}, "success", true},
		"deployed and promoted further": {func(w *world, m string) {
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m), "success", "deployed to 1 cluster"))
			require.NoError(t, w.p.status(context.Background(), w.loc("stage", m), "failure", "cluster x failed"))
		}, "success", false},
		"failed": {func(w *world, m string) {
			require.NoError(t, w.p.status(context.Background(), w.loc("dev", m), "failure", "cluster x failed"))
		}, "failure", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "    compliance: {minClusters: 1}\n", stageAuto)
			m := w.pinnedToDev("a")
			tc.before(w, m)
			w.start(w.cache) // a restart: nothing in memory; the resync makes every promotion due
			w.settle("dev", "stage")
			state, _ := w.status("dev", m)
			require.Equal(t, tc.devState, state)
			require.Equal(t, tc.stage, w.pin("stage") == m)
		})
	}
}

// deployment records a GitHub Deployment of main to dev, as a wait before a restart did.
func (w *world) deployment(main, merge string) {
	w.t.Helper()
	pl, err := json.Marshal(payload{GitOpsRepo: gitopsRepo.String(), GitOpsCommit: merge})
	require.NoError(w.t, err)
	_, err = w.gh.CreateDeployment(context.Background(), cp, &github.DeploymentRequest{Ref: &main, Environment: github.String("dev"), Payload: json.RawMessage(pl)})
	require.NoError(w.t, err)
}

func TestResumeWithoutChain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "")
	w.settle("dev", "stage")
	require.Empty(t, w.gh.Calls(), "no spec.promotion: the pins are edited by hand")
}

func TestExpectedClustersAreThoseOfTheLastDeployment(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "    compliance: {minClusters: 1}\n", stageManual)
	m1 := w.pinnedToDev("a")
	merge1 := w.merge("dev", m1)
	w.gh.SetStatus(gitopsRepo, merge1, cluster1, "success")
	w.gh.SetStatus(gitopsRepo, merge1, cluster2, "success")
	w.settle("dev")
	state, desc := w.status("dev", m1)
	require.Equal(t, "success", state)
	require.Equal(t, "deployed to 2 clusters", desc)

	m2 := w.pinnedToDev("b")
	merge2 := w.merge("dev", m2)
	w.gh.SetStatus(gitopsRepo, merge2, cluster1, "success")
	w.settle("dev")
	w.advance(time.Hour)
	w.settle("dev")
	state, desc = w.status("dev", m2)
	require.Equal(t, "failure", state)
	require.Equal(t, "timed out after 30m0s: 1/2 clusters compliant (missing "+cluster2+")", desc, "both clusters of the last deployment are expected")
}
