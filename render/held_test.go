package render

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// HeldBack names exactly the folders whose last good output the result keeps without
// rendering them, and agrees with what Apply keeps.
func TestHeldBackIsWhatApplyKeepsUnrendered(t *testing.T) {
	folders := []string{"large/app-web", "large/app-gone", "large/app-failing", "broken/app-web", "custom/app", "large/deep/er"}
	prev := Tree{}
	for _, f := range folders {
		prev["clusters/"+f+"/reconciler.yaml"] = []byte("last good")
	}
	for name, tc := range map[string]struct {
		incomplete, brokenCT bool
		want                 []string
	}{
		"a failed assignment":                {false, false, []string{"large/app-failing"}},
		"and a broken cluster type":          {false, true, []string{"broken/app-web", "large/app-failing"}},
		"objects that could not all be read": {true, false, []string{"large/app-failing", "large/app-gone"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := applyFixture(tc.incomplete)
			r.Failed["large/app-failing"] = &scheduling.Error{Msg: "boom"}
			if tc.brokenCT {
				r.Snapshot.Broken = []*scheduling.Object{{Kind: scheduling.KindClusterType, Name: "broken"}}
			}
			held := r.HeldBack(folders)
			require.Equal(t, tc.want, held)
			next := r.Apply(prev)
			for _, f := range held {
				require.Equal(t, []byte("last good"), next["clusters/"+f+"/reconciler.yaml"], "%s stays as it was", f)
			}
			require.NotEqual(t, []byte("last good"), next["clusters/large/app-web/reconciler.yaml"], "a rendered folder is not held")
		})
	}
	require.Nil(t, (&Result{Snapshot: &scheduling.Snapshot{}}).HeldBack(folders), "without a GitOps target nothing is written, nothing held")
}
