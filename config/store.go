package config

import (
	"net/url"
	"time"
)

// Store holds the settings of the hub's database (reports, inventory, history, leases).
type Store struct {
	Driver    string   `yaml:"driver"`    // sqlite (default) or postgres
	Path      string   `yaml:"path"`      // SQLite file; "" keeps the database in memory
	URL       Secret   `yaml:"url"`       // PostgreSQL connection string (may hold a password)
	Retention Duration `yaml:"retention"` // how long reports and inventory events are kept; 0 forever
	// ReplicaName names this replica in the leases it holds in the store; "" is HOST/PID.
	ReplicaName string `yaml:"replicaName"`
}

// MaxReplicaName bounds store.replicaName.
const MaxReplicaName = 200

// Store drivers.
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// DefaultStoreRetention keeps 30 days of reports.
const DefaultStoreRetention = 30 * 24 * time.Hour

// defaultStore returns the store defaults.
func defaultStore() Store {
	return Store{Driver: StoreSQLite, Retention: Duration(DefaultStoreRetention)}
}

// storeKeys lists the store settings, in documentation order.
func storeKeys() []Key {
	return []Key{
		key("store.driver", StoreSQLite, "Database of the hub: sqlite (embedded, one replica) or postgres (several replicas share it).",
			str(func(c *Config) *string { return &c.Store.Driver })),
		key("store.path", "", "SQLite file of the hub, on a persistent volume; empty keeps the database in memory (lost on restart).",
			str(func(c *Config) *string { return &c.Store.Path })),
		key("store.url", "", "PostgreSQL connection string (postgres://USER:PASSWORD@HOST:5432/DB?sslmode=verify-full), required with store.driver postgres.",
			secret(func(c *Config) *Secret { return &c.Store.URL })),
		key("store.retention", "720h", "How long the history of reports and inventory events is kept; 0 keeps it forever. Each cluster's newest state, the inventory and the deployment history are always kept.",
			dur(func(c *Config) *Duration { return &c.Store.Retention })),
		key("store.replicaName", "", "Names this replica in the leases of periodic work it holds in the store (at most 200 characters), so that a restarted replica takes its leases back at once; empty is HOST/PID. Each replica needs a name of its own: the Helm chart and the kustomize base set the pod's name.",
			str(func(c *Config) *string { return &c.Store.ReplicaName })),
	}
}

// storeProblems checks the store settings.
func (c *Config) storeProblems() []string {
	s := c.Store
	var p []string
	p = appendIf(p, s.Driver != StoreSQLite && s.Driver != StorePostgres, "store.driver", "must be sqlite or postgres")
	if s.Driver == StorePostgres {
		u, err := url.Parse(s.URL.Value())
		p = appendIf(p, s.URL == "" || err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql"),
			"store.url", "must be a postgres:// connection string when store.driver is postgres")
	}
	p = appendIf(p, len(s.ReplicaName) > MaxReplicaName, "store.replicaName", "must be at most 200 characters")
	return appendIf(p, s.Retention < 0, "store.retention", "must not be negative (0 keeps the history forever)")
}
