package scheduling

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestFractionalGateIsParsed(t *testing.T) {
	c, errs := chainOf(t, env("dev", "    compliance:\n      minPercent: 95\n      maxFailed: 2\n      clusterTypes:\n"+
		"      - {name: large, minPercent: 90}\n      - {name: small, maxFailed: 0}\n"))
	require.Empty(t, errs)
	g := c.Stages["dev"].Gate
	require.Equal(t, 95, g.MinPercent)
	require.Equal(t, 2, g.MaxFailed)
	require.Equal(t, Gate{MinPercent: 90}, g.ClusterTypes["large"])
	require.Equal(t, Gate{MinPercent: 100}, g.ClusterTypes["small"])
	require.Equal(t, 285, g.Required(300))
	require.Equal(t, 286, g.Required(301), "rounded up: 95% of 301 is 285.95")
	c, errs = chainOf(t, env("dev", "    timeout: 1m\n"))
	require.Empty(t, errs)
	require.Equal(t, DefaultGate(), c.Stages["dev"].Gate, "every registered cluster, no failure, by default")
	require.Equal(t, 0, DefaultGate().Required(0))
}

func TestFractionalGateErrorsAtTheirLine(t *testing.T) {
	cases := map[string]struct {
		promotion, want string
	}{
		"percent above 100": {"    compliance: {minPercent: 150}\n",
			`.environments/a.yaml:8: Environment "dev": spec.promotion.compliance.minPercent: 150 is not a percentage from 0 to 100`},
		"negative maxFailed": {"    compliance:\n      maxFailed: -1\n",
			`.environments/a.yaml:9: Environment "dev": spec.promotion.compliance.maxFailed: must not be negative`},
		"bad cluster type": {"    compliance:\n      clusterTypes:\n      - name: Large_1\n",
			`.environments/a.yaml:10: Environment "dev": spec.promotion.compliance.clusterTypes[0].name: "Large_1" is not a cluster type name`},
		"duplicate cluster type": {"    compliance:\n      clusterTypes:\n      - name: large\n      - name: large\n        minPercent: 101\n",
			`.environments/a.yaml:11: Environment "dev": spec.promotion.compliance.clusterTypes[1].name: cluster type "large" has two gates`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{".environments/a.yaml": &fstest.MapFile{Data: []byte(env("dev", tc.promotion))}}
			envs, errs := LoadEnvironments(Source{FS: fsys})
			require.NotEmpty(t, errs, "the declarations' errors include the promotion's")
			require.Contains(t, errs[0].Error(), tc.want)
			c, _ := PromotionChain(envs)
			require.Empty(t, c.First(), "a broken gate promotes nothing")
		})
	}
}

func TestFractionalGateStrictDecoding(t *testing.T) {
	fsys := fstest.MapFS{".environments/a.yaml": &fstest.MapFile{Data: []byte(env("dev", "    compliance: {minPercent: \"95\", maxFaild: 1}\n"))}}
	_, errs := LoadEnvironments(Source{FS: fsys})
	require.Len(t, errs, 2)
	require.Contains(t, errs.Error(), "minPercent: expected an integer")
	require.Contains(t, errs.Error(), "maxFaild")
}
