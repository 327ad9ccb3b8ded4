package scheduling

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"
)

func env(name, promotion string) string {
	doc := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: " + name +
		"\nspec:\n  controlPlane: {repo: https://github.com/o/cp, branch: " + name + ", path: .}\n"
	if promotion != "" {
		doc += "  promotion:\n" + promotion
	}
	return doc
}

func chainOf(t *testing.T, docs ...string) (*Chain, Errors) {
	t.Helper()
	fsys := fstest.MapFS{}
	for i, d := range docs {
		fsys[".environments/"+string(rune('a'+i))+".yaml"] = &fstest.MapFile{Data: []byte(d)}
	}
	envs, errs := LoadEnvironments(Source{FS: fsys})
	require.Empty(t, errs)
	return PromotionChain(envs)
}

func TestPromotionChain(t *testing.T) {
	c, errs := chainOf(t,
		env("dev", "    approval: automatic\n    timeout: 5m\n    compliance: {contexts: [\"kustomization/*\", \"argo/*\"], minClusters: 2}\n"),
		env("stage", "    after: dev\n    approval: manual\n    soakTime: 1m\n"),
		env("prod", "    after: stage\n"),
		env("sandbox", ""),
	)
	require.Empty(t, errs)
	require.Len(t, c.First(), 1)
	dev := c.First()[0]
	require.Equal(t, "dev", dev.Env.Name)
	require.Equal(t, 5*time.Minute, dev.Timeout)
	require.Equal(t, 2, dev.MinClusters)
	require.True(t, dev.MatchesContext("argo/cluster-1"))
	require.False(t, dev.MatchesContext("ci/build"))
	stage := c.Next("dev")[0]
	require.True(t, stage.Manual)
	require.Equal(t, time.Minute, stage.SoakTime)
	require.Equal(t, DefaultTimeout, stage.Timeout)
	require.True(t, stage.MatchesContext("kustomization/flux-system/0c9c2e41"))
	require.Equal(t, "prod", c.Next("stage")[0].Env.Name)
	require.Nil(t, c.Stages["sandbox"], "no spec.promotion: its pin is edited by hand")
}

func TestPromotionChainErrors(t *testing.T) {
	cases := map[string]struct {
		docs []string
		want string
	}{
		"unknown upstream": {[]string{env("dev", "    after: qa\n")}, `.environments/a.yaml:8: Environment "dev": spec.promotion.after: environment "qa" does not exist`},
		"cycle":            {[]string{env("a", "    after: b\n"), env("b", "    after: a\n")}, `promotion cycle [a b a]`},
		"self":             {[]string{env("a", "    after: a\n")}, `an environment cannot follow itself`},
		"bad duration":     {[]string{env("dev", "    timeout: 5 minutes\n")}, `.environments/a.yaml:8: Environment "dev": spec.promotion.timeout: "5 minutes" is not a duration`},
		"bad approval":     {[]string{env("dev", "    approval: sometimes\n")}, `spec.promotion.approval: "sometimes" is not one of automatic, manual`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for i, d := range tc.docs {
				fsys[".environments/"+string(rune('a'+i))+".yaml"] = &fstest.MapFile{Data: []byte(d)}
			}
			envs, errs := LoadEnvironments(Source{FS: fsys})
			c, cerrs := PromotionChain(envs)
			all := append(errs, cerrs...)
			require.NotEmpty(t, all)
			require.Contains(t, all.Error(), tc.want)
			require.Empty(t, c.First(), "a broken chain promotes nothing from the broken stage")
		})
	}
}
