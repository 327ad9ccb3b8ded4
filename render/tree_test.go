package render

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// applyFixture is an environment with cluster type "large" rendering "large/app-web", below
// the GitOps path "clusters".
func applyFixture(incomplete bool) *Result {
	snap := &scheduling.Snapshot{
		ClusterTypes: []*scheduling.ClusterType{{Object: scheduling.Object{Kind: scheduling.KindClusterType, Name: "large"}}},
		Incomplete:   incomplete,
	}
	return &Result{
		Snapshot: snap, Root: "clusters", HasTarget: true,
		Outputs: NewOutputs(map[string]Files{"large/app-web": NewFiles([]byte("new"), []byte{}, nil, false)}),
		Failed:  map[string]*scheduling.Error{},
	}
}

// Apply removes only inside Kalypso's cluster-type folders (current ones, and former ones
// recognised by their README); other folders, whatever their depth, stay.
func TestApplyTouchesOnlyManagedFolders(t *testing.T) {
	prev := Tree{
		"clusters/large/app-web/old.yaml":         []byte("stale"),
		"clusters/large/app-gone/reconciler.yaml": []byte("removed assignment"),
		"clusters/large/notes.txt":                []byte("unmanaged file in a managed folder"),
		"clusters/retired/README.md":              []byte(ReadmeText),
		"clusters/retired/app/reconciler.yaml":    []byte("former cluster type"),
		"clusters/docs/x.md":                      []byte("docs"),
		"clusters/unrelated/sub/file.txt":         []byte("unrelated"),
		"clusters/custom/README.md":               []byte("a README of the team's own"),
		"clusters/custom/app/values.yaml":         []byte("team"),
		"clusters/README.md":                      []byte("root"),
		"clusters/.github/workflows/ci.yaml":      []byte("workflow"),
		"other/large/app-web/x.yaml":              []byte("outside the GitOps path"),
	}
	next := applyFixture(false).Apply(prev)
	for _, p := range []string{"clusters/docs/x.md", "clusters/unrelated/sub/file.txt", "clusters/custom/README.md",
		"clusters/custom/app/values.yaml", "clusters/README.md", "clusters/.github/workflows/ci.yaml", "other/large/app-web/x.yaml"} {
		require.Equal(t, prev[p], next[p], p)
	}
	for _, p := range []string{"clusters/large/app-web/old.yaml", "clusters/large/app-gone/reconciler.yaml", "clusters/large/notes.txt",
		"clusters/retired/README.md", "clusters/retired/app/reconciler.yaml"} {
		require.NotContains(t, next, p)
	}
	require.Equal(t, []byte("new"), next["clusters/large/app-web/reconciler.yaml"])
	require.Equal(t, []byte(ReadmeText), next["clusters/large/README.md"])

	kept := applyFixture(true).Apply(prev)
	require.Contains(t, kept, "clusters/large/app-gone/reconciler.yaml", "an incomplete snapshot removes nothing")
	require.Contains(t, kept, "clusters/retired/app/reconciler.yaml")
}

// Desired walks every file once, stops at the first error, and keeps everything when the
// environment has no GitOps target.
func TestDesiredWalkAndNoTarget(t *testing.T) {
	prev := Tree{"clusters/README.md": []byte("root"), "clusters/large/app-web/reconciler.yaml": []byte("old")}
	d := applyFixture(false).Desired(prev)
	require.Equal(t, 4, d.Len(), "a README, the root README kept, a reconciler and an empty namespace")
	var walked []string
	stop := errors.New("stop")
	err := d.Walk(func(p string, _ []byte) error {
		walked = append(walked, p)
		if len(walked) == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, []string{"clusters/README.md", "clusters/large/README.md"}, walked)

	r := applyFixture(false)
	r.HasTarget = false
	d = r.Desired(prev)
	require.Equal(t, 2, d.Len())
	c, ok := d.Get("clusters/large/app-web/reconciler.yaml")
	require.True(t, ok)
	require.Equal(t, "old", string(c))
	_, ok = d.Get("clusters/large/README.md")
	require.False(t, ok)
}

// Has tells, without making the content, whether Get finds a file: generated, kept or neither.
func TestDesiredHas(t *testing.T) {
	prev := Tree{"clusters/README.md": []byte("root"), "clusters/large/app-web/old.yaml": []byte("old"), "elsewhere/x": []byte("x")}
	for _, r := range []*Result{applyFixture(false), applyFixture(true), {Snapshot: applyFixture(false).Snapshot}} {
		d := r.Desired(prev)
		paths := []string{"clusters/large/app-web/platform-config.yaml", "clusters/large/app-web/x/reconciler.yaml",
			"clusters/large/README.md/x", "clusters", "clusters/" + PromotedCommitPath, "large/app-web/reconciler.yaml"}
		for p := range d.Tree() {
			paths = append(paths, p)
		}
		for p := range prev {
			paths = append(paths, p)
		}
		for _, p := range paths {
			_, ok := d.Get(p)
			require.Equal(t, ok, d.Has(p), p)
		}
	}
}
