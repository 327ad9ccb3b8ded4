package handlers

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

func TestInstallationEventsForgetTheIndex(t *testing.T) {
	h := Installation{Core: &Core{Index: envref.NewIndex(nil, nil)}}
	require.ElementsMatch(t, []string{"installation", "installation_repositories"}, h.Handles())
	for _, name := range []string{"installation.created.json", "installation.deleted.json", "installation_repositories.added.json", "installation_repositories.removed.json"} {
		payload, err := os.ReadFile("../internal/githubsim/payloads/" + name)
		require.NoError(t, err, name)
		require.NoError(t, h.Handle(context.Background(), "installation", "d", payload), name)
	}
	require.Error(t, h.Handle(context.Background(), "installation", "d", []byte("{")))
}
