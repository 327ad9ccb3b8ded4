package scheduling

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"
)

const freezesDoc = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Freeze
metadata:
  name: year-end
spec:
  schedule: "0 0 20 12 *"
  duration: 336h
  timeZone: Europe/Paris
  environments:
    matchLabels: {tier: production}
`

func labelled(doc, labels string) string {
	return strings.Replace(doc, "metadata:\n", "metadata:\n  labels: {"+labels+"}\n", 1)
}

func TestWindowsAndFreezes(t *testing.T) {
	fsys := fstest.MapFS{
		".environments/dev.yaml":     {Data: []byte(env("dev", "    windows:\n    - {name: business-hours, kind: allow, schedule: \"0 9 * * 1-5\", duration: 8h, timeZone: Europe/Paris}\n    - {kind: deny, schedule: \"@daily\", duration: 1h}\n"))},
		".environments/prod.yaml":    {Data: []byte(labelled(env("prod", "    after: dev\n"), "tier: production"))},
		".environments/freezes.yaml": {Data: []byte(freezesDoc)},
	}
	envs, errs := LoadEnvironments(Source{FS: fsys})
	require.Empty(t, errs)
	c, errs := PromotionChain(envs)
	require.Empty(t, errs)
	dev, prod := c.Stages["dev"], c.Stages["prod"]
	require.Len(t, dev.Windows, 2, "the freeze selects production only")
	require.Equal(t, "business-hours", dev.Windows[0].Name)
	require.Equal(t, "Europe/Paris", dev.Windows[0].Location.String())
	require.Equal(t, "deny-1", dev.Windows[1].Name, "an unnamed window is named by kind and index")
	require.Equal(t, 8*time.Hour, dev.Windows[0].Duration)
	require.Len(t, prod.Windows, 1)
	require.Equal(t, "freeze year-end", prod.Windows[0].Name)
	require.Equal(t, "deny", string(prod.Windows[0].Kind))
}

func TestWindowErrorsAtTheirLines(t *testing.T) {
	cases := map[string]struct {
		file, doc, want string
	}{
		"bad schedule": {".environments/a.yaml", env("dev", "    windows:\n    - kind: allow\n      schedule: \"0 9 * *\"\n      duration: 8h\n"),
			`.environments/a.yaml:10: Environment "dev": spec.promotion.windows[0].schedule: invalid window: schedule "0 9 * *": expected exactly 5 fields`},
		"bad kind": {".environments/a.yaml", env("dev", "    windows:\n    - kind: maybe\n      schedule: \"0 9 * * *\"\n      duration: 8h\n"),
			`.environments/a.yaml:9: Environment "dev": spec.promotion.windows[0].kind: "maybe" is not one of allow, deny`},
		"bad duration": {".environments/a.yaml", env("dev", "    windows:\n    - kind: deny\n      schedule: \"0 9 * * *\"\n      duration: forever\n"),
			`.environments/a.yaml:11: Environment "dev": spec.promotion.windows[0].duration: "forever" is not a positive duration`},
		"bad time zone": {".environments/a.yaml", env("dev", "    windows:\n    - kind: deny\n      schedule: \"0 9 * * *\"\n      duration: 1h\n      timeZone: Mars/Olympus\n"),
			`.environments/a.yaml:12: Environment "dev": spec.promotion.windows[0].timeZone: invalid window: time zone "Mars/Olympus"`},
		"unknown field": {".environments/a.yaml", env("dev", "    windows:\n    - kind: deny\n      schedule: \"0 9 * * *\"\n      duration: 1h\n      zone: UTC\n"),
			`.environments/a.yaml:12: Environment "dev": spec.promotion.windows[0]: unknown field "zone"`},
		"freeze schedule": {".environments/freezes.yaml", strings.Replace(freezesDoc, `"0 0 20 12 *"`, `"0 0 32 12 *"`, 1),
			`.environments/freezes.yaml:6: Freeze "year-end": spec.schedule: invalid window`},
		"freeze selector": {".environments/freezes.yaml", strings.Replace(freezesDoc, "matchLabels: {tier: production}", "matchExpressions: [{key: tier, operator: Near}]", 1),
			`.environments/freezes.yaml:9: Freeze "year-end": spec.environments: `},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.file: {Data: []byte(tc.doc)}}
			_, errs := LoadEnvironments(Source{FS: fsys})
			require.NotEmpty(t, errs)
			require.Contains(t, errs.Error(), tc.want)
		})
	}
}

func TestApprovers(t *testing.T) {
	c, errs := chainOf(t, env("dev", "    timeout: 1m\n"), env("stage", "    after: dev\n    approval: manual\n    approvers: [alice, my-org/release-managers]\n    required: 2\n"))
	require.Empty(t, errs)
	require.Equal(t, []string{"alice", "my-org/release-managers"}, c.Stages["stage"].Approvers)
	require.Equal(t, 2, c.Stages["stage"].Required)
	c, _ = chainOf(t, env("dev", "    approval: manual\n"))
	require.Equal(t, 1, c.Stages["dev"].Required, "one approval by default")

	cases := map[string]struct{ promotion, want string }{
		"automatic": {"    approvers: [alice]\n", `spec.promotion.approvers: approvers and required need approval: manual`},
		"bad login": {"    approval: manual\n    approvers: [-alice]\n", `spec.promotion.approvers[0]: "-alice" is not a GitHub login`},
		"bad team":  {"    approval: manual\n    approvers: [org/Team One]\n", `spec.promotion.approvers[0]: "org/Team One" is not a team`},
		"twice":     {"    approval: manual\n    approvers: [alice, Alice]\n", `spec.promotion.approvers[1]: "Alice" is named twice`},
		"unreachable": {"    approval: manual\n    approvers: [alice]\n    required: 2\n",
			`spec.promotion.required: 2 approvals cannot be reached by 1 named users`},
		"negative": {"    approval: manual\n    required: -1\n", `spec.promotion.required: must be at least 1`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{".environments/a.yaml": {Data: []byte(env("dev", tc.promotion))}}
			_, errs := LoadEnvironments(Source{FS: fsys})
			require.Contains(t, errs.Error(), tc.want)
		})
	}
}
