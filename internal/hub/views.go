package hub

import (
	"context"
	"sync"
	"time"
)

// Assignment is one rendered assignment of an environment: a deployment target of a
// workload in a cluster type, with its platform config values.
type Assignment struct {
	Key         string            `json:"key"` // <clusterType>/<deploymentTarget>
	ClusterType string            `json:"clusterType"`
	Target      string            `json:"deploymentTarget"`
	Workload    string            `json:"workload"`
	Config      map[string]string `json:"config,omitempty"`
}

// Desired is what the app renders for an environment.
type Desired struct {
	Assignments []Assignment // sorted by key
	// Registrations maps a workload to the registration that delivers it, whose source
	// commit is recorded as the trailer "Kalypso-Source: workload <registration> <sha>".
	Registrations map[string]string
}

// DesiredState returns the last rendered state of an environment, false when this replica
// has none yet.
type DesiredState func(t Target) (Desired, bool)

// Head reads the head commit of an environment's GitOps branch and its commit time.
type Head func(ctx context.Context, t Target) (sha string, at time.Time, err error)

// headTTL is how long a GitOps branch head is used before it is read again.
const headTTL = 15 * time.Second

// headCache keeps each environment's GitOps head for headTTL, so that queries cost no git
// fetch each.
type headCache struct {
	read Head
	now  func() time.Time
	mu   sync.Mutex
	m    map[string]cachedHead
}

type cachedHead struct {
	sha     string
	at      time.Time
	fetched time.Time
}

func newHeadCache(read Head, now func() time.Time) *headCache {
	return &headCache{read: read, now: now, m: map[string]cachedHead{}}
}

// get returns the head of t's GitOps branch ("" when it cannot be read).
func (c *headCache) get(ctx context.Context, t Target) (string, time.Time) {
	if c.read == nil {
		return "", time.Time{}
	}
	c.mu.Lock()
	h, ok := c.m[t.Key()]
	c.mu.Unlock()
	if ok && c.now().Sub(h.fetched) < headTTL {
		return h.sha, h.at
	}
	sha, at, err := c.read(ctx, t)
	if err != nil {
		return h.sha, h.at
	}
	c.mu.Lock()
	c.m[t.Key()] = cachedHead{sha: sha, at: at, fetched: c.now()}
	c.mu.Unlock()
	return sha, at
}

// saw notes that a cluster of an environment reported commit sha: a commit other than the
// cached head means the branch may have moved, so the head is read again on next use.
func (c *headCache) saw(key, sha string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.m[key]; ok && h.sha != sha {
		h.fetched = time.Time{}
		c.m[key] = h
	}
}
