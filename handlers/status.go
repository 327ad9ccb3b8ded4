package handlers

import (
	"context"
)

// Status handles `status`: a cluster reported, so running compliance waits poll now instead of
// at their next interval. Polling alone is enough; this only makes it faster.
type Status struct{ *Core }

// Handles implements githubapp.EventHandler.
func (h Status) Handles() []string { return []string{"status"} }

// Handle implements githubapp.EventHandler.
func (h Status) Handle(context.Context, string, string, []byte) error {
	h.Promoter.Wake()
	return nil
}
