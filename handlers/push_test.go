package handlers

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

// Routing a push reads only what it needs: the file lists of the commits are not kept, whether
// the push is the app's own echo, a push of a declared control plane's branch, or a push to
// main of an undeclared repository (read only for whether a path is in .environments/).
func TestRoutingAPushKeepsNotItsFileLists(t *testing.T) {
	files := make([]string, 20_000)
	for i := range files {
		files[i] = fmt.Sprintf("clusters/ct-%05d/assignment-%05d/reconciler.yaml", i, i)
	}
	echo := pushEvent(gitopsR, "refs/heads/kalypso/dev", "k1", files...)
	echo.Sender = &github.User{Login: github.String(bot)}
	for name, tc := range map[string]struct {
		ev       *github.PushEvent
		maxAlloc float64
	}{
		"the app's own push":               {echo, 40},
		"a push to an environment branch":  {pushEvent(plane, "refs/heads/dev", "d1", files...), 60},
		"main of an undeclared repository": {pushEvent(stranger, "refs/heads/main", "s1", append(files, ".environments/dev.yaml")...), 100},
	} {
		t.Run(name, func(t *testing.T) {
			c := newFake().core()
			c.Queue = &queued{}
			c.Self = Identity{AppID: 7, Bot: func() string { return bot }}
			data := payload(t, tc.ev)
			allocs := testing.AllocsPerRun(3, func() {
				_, err := c.Route(context.Background(), "push", data)
				require.NoError(t, err)
			})
			// Decoding the whole event allocates a string per path (and more).
			require.LessOrEqual(t, allocs, tc.maxAlloc, "allocations to route a push of %d files", len(files))
		})
	}
	require.True(t, declaresEnvironments(payload(t, pushEvent(stranger, "refs/heads/main", "s1", append(files, ".environments/dev.yaml")...))))
	require.False(t, declaresEnvironments(payload(t, pushEvent(stranger, "refs/heads/main", "s1", files...))))
	require.False(t, declaresEnvironments([]byte("{")), "an unreadable payload declares nothing")
	escaped := []byte(`{"commits":[{"added":["README.md","\u002eenvironments/dev.yaml"]}]}`)
	require.True(t, declaresEnvironments(escaped), "a path written with escapes is read as JSON says")
}
