package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// ErrNotFound is returned for an environment or cluster the hub does not know.
var ErrNotFound = errors.New("not found")

// Query limits: the most clusters one page lists, and the most drift entries one answer holds.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
	maxDriftListed  = 500
	maxHistory      = 200
)

// ClusterInfo is what a cluster runs and reports, as the hub knows it.
type ClusterInfo struct {
	Name         string            `json:"name"`
	ClusterType  string            `json:"clusterType"`
	State        string            `json:"state"` // success, failure or pending, over its objects' newest reports
	GitOpsCommit string            `json:"gitopsCommit"`
	MainCommit   string            `json:"mainCommit,omitempty"`
	Workloads    map[string]string `json:"workloads,omitempty"` // workload → the source commit it runs
	Since        time.Time         `json:"since"`               // since when it runs its GitOps commit
	LastReport   time.Time         `json:"lastReport"`
	FirstSeen    time.Time         `json:"firstSeen"`
	Reason       string            `json:"reason,omitempty"`
	Message      string            `json:"message,omitempty"`
	Behind       bool              `json:"behind"` // its commit is not the GitOps branch's head
}

// ClustersPage is one page of an environment's clusters, by name.
type ClustersPage struct {
	ControlPlane  string        `json:"controlPlane"`
	Environment   string        `json:"environment"`
	DesiredCommit string        `json:"desiredCommit,omitempty"` // the head of the GitOps branch
	Clusters      []ClusterInfo `json:"clusters"`
	Next          string        `json:"next,omitempty"` // pass as after= for the next page
}

// find returns the environment of a control plane, or an error naming it.
func (h *Hub) find(ctx context.Context, cp, env string) (Target, error) {
	all, err := h.opts.Directory.All(ctx)
	if err != nil {
		return Target{}, err
	}
	for _, t := range all {
		if t.ControlPlane == cp && t.Environment == env {
			return t, nil
		}
	}
	return Target{}, fmt.Errorf("%w: environment %s/%s", ErrNotFound, cp, env)
}

// Clusters lists a page of an environment's registered clusters (after the name after,
// at most limit, of one cluster type when clusterType is set).
func (h *Hub) Clusters(ctx context.Context, cp, env, clusterType, after string, limit int) (ClustersPage, error) {
	t, err := h.find(ctx, cp, env)
	if err != nil {
		return ClustersPage{}, err
	}
	limit = min(max(limit, 1), MaxPageSize)
	states, err := h.opts.Store.States(ctx, store.StateQuery{ControlPlane: cp, Environment: env, ClusterType: clusterType, After: after, Limit: limit + 1})
	if err != nil {
		return ClustersPage{}, err
	}
	page := ClustersPage{ControlPlane: cp, Environment: env, Clusters: []ClusterInfo{}}
	page.DesiredCommit, _ = h.heads.get(ctx, t)
	commits, err := h.opts.Store.Commits(ctx, cp, env)
	if err != nil {
		return ClustersPage{}, err
	}
	regs := h.registrations(t)
	for i, s := range states {
		if i == limit {
			page.Next = states[i-1].Name
			break
		}
		page.Clusters = append(page.Clusters, clusterInfo(s, commits, regs, page.DesiredCommit))
	}
	return page, nil
}

// registrations maps workloads to their registrations, from the rendered state.
func (h *Hub) registrations(t Target) map[string]string {
	if h.opts.Desired == nil {
		return nil
	}
	d, _ := h.opts.Desired(t)
	return d.Registrations
}

// clusterInfo summarises a cluster's objects: the worst state, the newest commit.
func clusterInfo(s store.ClusterState, commits map[string]store.CommitInfo, regs map[string]string, desired string) ClusterInfo {
	c := ClusterInfo{Name: s.Name, ClusterType: s.ClusterType, State: store.StatePending, FirstSeen: s.FirstSeen}
	rank := map[string]int{store.StateSuccess: 0, store.StatePending: 1, store.StateFailure: 2}
	for i, o := range s.Objects {
		if i == 0 || rank[o.State] > rank[c.State] {
			c.State, c.Reason, c.Message = o.State, o.Reason, o.Message
		}
		if o.EventAt.After(c.LastReport) {
			c.LastReport, c.GitOpsCommit, c.Since = o.EventAt, o.GitOpsCommit, o.Since
		}
	}
	if info, ok := commits[c.GitOpsCommit]; ok {
		c.MainCommit = info.MainCommit
		c.Workloads = workloadVersions(info, regs)
	}
	c.Behind = desired != "" && c.GitOpsCommit != desired
	return c
}

// workloadVersions reads the source commit of each workload from a commit's trailers.
func workloadVersions(info store.CommitInfo, regs map[string]string) map[string]string {
	bySource := map[string]string{}
	for _, s := range info.Sources {
		bySource[s.Name] = s.Commit
	}
	out := map[string]string{}
	for w, reg := range regs {
		if v, ok := bySource["workload "+reg]; ok {
			out[w] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ClusterDetail is a cluster with its newest reports.
type ClusterDetail struct {
	ClusterInfo
	Reports []store.HistoryEntry `json:"reports"`
}

// Cluster returns one cluster of an environment with its last reports.
func (h *Hub) Cluster(ctx context.Context, cp, env, name string) (ClusterDetail, error) {
	t, err := h.find(ctx, cp, env)
	if err != nil {
		return ClusterDetail{}, err
	}
	states, err := h.opts.Store.States(ctx, store.StateQuery{ControlPlane: cp, Environment: env, Name: name})
	if err != nil {
		return ClusterDetail{}, err
	}
	if len(states) == 0 {
		return ClusterDetail{}, fmt.Errorf("%w: cluster %s in %s/%s", ErrNotFound, name, cp, env)
	}
	commits, err := h.opts.Store.Commits(ctx, cp, env)
	if err != nil {
		return ClusterDetail{}, err
	}
	desired, _ := h.heads.get(ctx, t)
	hist, err := h.opts.Store.ClusterHistory(ctx, cp, env, name, maxHistory)
	if err != nil {
		return ClusterDetail{}, err
	}
	return ClusterDetail{ClusterInfo: clusterInfo(states[0], commits, h.registrations(t), desired), Reports: hist}, nil
}
