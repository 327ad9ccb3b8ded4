package envcheck

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

func TestHoldIsShownAndTakenAway(t *testing.T) {
	valid := Content{Conclusion: "success", Title: "dev: 3 assignments", Summary: "All good.\n\nmore"}
	held := WithHold(valid, "**dev is held** by @alice: why.")
	require.Equal(t, HeldConclusion, held.Conclusion)
	require.Equal(t, TitlePrefix+"dev: 3 assignments", held.Title)
	paragraph, ok := HoldOf(held.Summary)
	require.True(t, ok)
	require.Equal(t, "**dev is held** by @alice: why.", paragraph)
	require.Equal(t, held, WithHold(held, paragraph), "shown once")

	other := WithHold(held, "**dev is held** by @bob: another.")
	paragraph, _ = HoldOf(other.Summary)
	require.Equal(t, "**dev is held** by @bob: another.", paragraph, "a new hold replaces the old one")

	back, was := WithoutHold(other)
	require.True(t, was)
	require.Equal(t, valid, back)
	same, was := WithoutHold(valid)
	require.False(t, was)
	require.Equal(t, valid, same)

	failed := WithHold(Content{Conclusion: "failure", Title: "1 error in dev", Summary: "x"}, "held")
	require.Equal(t, "failure", failed.Conclusion, "a failure says more than a hold")
	_, ok = HoldOf("**dev is held** without the marker")
	require.False(t, ok)
}

func TestExternalIDRoundTrips(t *testing.T) {
	cp := envref.Repo{Owner: "o", Name: "cp"}
	repo, env, ok := ParseExternalID(ExternalID(cp, "dev"))
	require.True(t, ok)
	require.Equal(t, cp, repo)
	require.Equal(t, "dev", env)
	_, _, ok = ParseExternalID("other:o/cp:dev")
	require.False(t, ok)
}
