package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

func TestRenderOnDemandIsSpacedPerEnvironment(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var asked []string
	r := newRenderOnDemand(func(env envref.Env) { asked = append(asked, env.Name) }, 5*time.Second, func() time.Time { return now })
	dev, stage := envref.Env{Installation: 1, Name: "dev"}, envref.Env{Installation: 1, Name: "stage"}
	for range 100 {
		r.request(dev)
	}
	r.request(stage)
	require.Equal(t, []string{"dev", "stage"}, asked, "a burst of reports asks once per environment")
	now = now.Add(4 * time.Second)
	r.request(dev)
	require.Len(t, asked, 2)
	now = now.Add(time.Second)
	r.request(dev)
	require.Equal(t, []string{"dev", "stage", "dev"}, asked, "asked again after the gap")
}
