package handlers

import (
	"context"
	"encoding/json"
	"fmt"
)

// Installation handles `installation` and `installation_repositories`: the repositories the app
// can see changed, so the index of the installation is rebuilt when next needed.
type Installation struct{ *Core }

// Handles implements githubapp.EventHandler.
func (h Installation) Handles() []string {
	return []string{"installation", "installation_repositories"}
}

// Handle implements githubapp.EventHandler.
func (h Installation) Handle(_ context.Context, _, _ string, payload []byte) error {
	var ev struct {
		Installation struct {
			ID int64 `json:"id"`
		} `json:"installation"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return fmt.Errorf("parse installation event: %w", err)
	}
	h.Index.Forget(ev.Installation.ID)
	return nil
}
