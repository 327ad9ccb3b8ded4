package handlers

import (
	"context"
	"encoding/json"
)

// routeInstallation handles `installation` and `installation_repositories`: the repositories
// the app can see changed, so the index of the installation is read again (and every key of
// it resynced: a repository added may be a control plane). An uninstalled App forgets it.
func (c *Core) routeInstallation(ctx context.Context, payload []byte) error {
	var ev struct {
		Action       string `json:"action"`
		Installation struct {
			ID int64 `json:"id"`
		} `json:"installation"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return err
	}
	if ev.Action == "deleted" {
		c.Index.Forget(ev.Installation.ID)
		return nil
	}
	return c.Queue.Add(ctx, IndexKey(ev.Installation.ID), IndexNeed{Resync: true})
}
