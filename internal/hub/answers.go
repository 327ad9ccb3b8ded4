package hub

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// EnvironmentSummary counts an environment's clusters against its desired GitOps commit.
type EnvironmentSummary struct {
	ControlPlane  string `json:"controlPlane"`
	Environment   string `json:"environment"`
	GitOpsRepo    string `json:"gitopsRepo"`
	GitOpsBranch  string `json:"gitopsBranch"`
	DesiredCommit string `json:"desiredCommit,omitempty"`
	Registered    int    `json:"registered"`
	Compliant     int    `json:"compliant"` // reporting success on the desired commit
	Failed        int    `json:"failed"`    // reporting a failure (on any commit)
	Behind        int    `json:"behind"`    // not on the desired commit
}

// Environments summarises every environment of the control planes keep accepts.
func (h *Hub) Environments(ctx context.Context, keep func(controlPlane string) bool) ([]EnvironmentSummary, error) {
	all, err := h.opts.Directory.All(ctx)
	if err != nil {
		return nil, err
	}
	out := []EnvironmentSummary{}
	for _, t := range all {
		if !keep(t.ControlPlane) {
			continue
		}
		s, err := h.summary(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b EnvironmentSummary) int {
		return strings.Compare(a.ControlPlane+"/"+a.Environment, b.ControlPlane+"/"+b.Environment)
	})
	return out, nil
}

// summary counts one environment's clusters from the grouped states.
func (h *Hub) summary(ctx context.Context, t Target) (EnvironmentSummary, error) {
	s := EnvironmentSummary{ControlPlane: t.ControlPlane, Environment: t.Environment, GitOpsRepo: t.GitOpsRepo, GitOpsBranch: t.GitOpsBranch}
	s.DesiredCommit, _ = h.heads.get(ctx, t)
	n, err := h.opts.Store.ClusterCount(ctx, t.ControlPlane, t.Environment)
	if err != nil {
		return s, err
	}
	s.Registered = n
	counts, err := h.commitCounts(ctx, t.ControlPlane, t.Environment)
	if err != nil {
		return s, err
	}
	onDesired := 0
	for _, c := range counts {
		if c.State == store.StateFailure {
			s.Failed += c.Clusters
		}
		if c.GitOpsCommit == s.DesiredCommit {
			onDesired += c.Clusters
			if c.State == store.StateSuccess {
				s.Compliant += c.Clusters
			}
		}
	}
	if s.DesiredCommit != "" {
		s.Behind = max(0, s.Registered-onDesired)
	}
	return s, nil
}

// DriftEntry is a cluster behind its environment's desired GitOps commit.
type DriftEntry struct {
	Cluster       string    `json:"cluster"`
	ClusterType   string    `json:"clusterType"`
	GitOpsCommit  string    `json:"gitopsCommit"`
	State         string    `json:"state"`
	BehindSince   time.Time `json:"behindSince"` // when the desired commit was made, or the cluster registered if later
	BehindSeconds int64     `json:"behindSeconds"`
}

// Drift lists the clusters of an environment behind its desired commit, longest first.
type Drift struct {
	ControlPlane  string       `json:"controlPlane"`
	Environment   string       `json:"environment"`
	DesiredCommit string       `json:"desiredCommit,omitempty"`
	DesiredSince  time.Time    `json:"desiredSince"`
	BehindCount   int          `json:"behindCount"`
	Behind        []DriftEntry `json:"behind"` // at most 500
}

// Drift answers which clusters of an environment are behind its GitOps branch, for how long.
func (h *Hub) Drift(ctx context.Context, cp, env string) (Drift, error) {
	t, err := h.find(ctx, cp, env)
	if err != nil {
		return Drift{}, err
	}
	d := Drift{ControlPlane: cp, Environment: env, Behind: []DriftEntry{}}
	d.DesiredCommit, d.DesiredSince = h.heads.get(ctx, t)
	if d.DesiredCommit == "" {
		return d, nil
	}
	behind, err := cachedOf(h.answers, cp+"/"+env, "behind\x00"+d.DesiredCommit, func() (behindList, error) {
		n, states, err := h.opts.Store.Behind(ctx, cp, env, d.DesiredCommit, maxDriftListed)
		return behindList{n, states}, err
	})
	if err != nil {
		return d, err
	}
	n, states := behind.count, behind.states
	d.BehindCount = n
	now := h.opts.Now()
	for _, s := range states {
		c := clusterInfo(s, nil, nil, d.DesiredCommit)
		since := d.DesiredSince
		if s.FirstSeen.After(since) {
			since = s.FirstSeen
		}
		d.Behind = append(d.Behind, DriftEntry{Cluster: c.Name, ClusterType: c.ClusterType, GitOpsCommit: c.GitOpsCommit, State: c.State,
			BehindSince: since, BehindSeconds: int64(now.Sub(since).Seconds())})
	}
	slices.SortStableFunc(d.Behind, func(a, b DriftEntry) int { return a.BehindSince.Compare(b.BehindSince) })
	return d, nil
}

// Placement is where a workload runs in one environment.
type Placement struct {
	Environment  string         `json:"environment"`
	ClusterTypes []string       `json:"clusterTypes"`
	Desired      string         `json:"desiredVersion,omitempty"` // the source commit the GitOps branch head deploys
	Versions     map[string]int `json:"versions"`                 // source commit → clusters running it
	Healthy      int            `json:"healthy"`
	Failed       int            `json:"failed"`
	Pending      int            `json:"pending"`
}

// WorkloadInfo is where a workload runs, per environment.
type WorkloadInfo struct {
	Name       string      `json:"name"`
	Placements []Placement `json:"placements"`
}

// Workloads answers where each workload of a control plane runs, at which version, how healthy.
func (h *Hub) Workloads(ctx context.Context, cp string) ([]WorkloadInfo, error) {
	all, err := h.opts.Directory.All(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*WorkloadInfo{}
	for _, t := range all {
		if t.ControlPlane != cp || h.opts.Desired == nil {
			continue
		}
		desired, ok := h.opts.Desired(t)
		if !ok {
			continue
		}
		if err := h.place(ctx, t, desired, by); err != nil {
			return nil, err
		}
	}
	out := []WorkloadInfo{}
	for _, name := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[name])
	}
	return out, nil
}

// place adds the placements of one environment's workloads.
func (h *Hub) place(ctx context.Context, t Target, desired Desired, by map[string]*WorkloadInfo) error {
	types := map[string]map[string]bool{} // workload → cluster types
	for _, a := range desired.Assignments {
		if types[a.Workload] == nil {
			types[a.Workload] = map[string]bool{}
		}
		types[a.Workload][a.ClusterType] = true
	}
	counts, err := h.commitCounts(ctx, t.ControlPlane, t.Environment)
	if err != nil {
		return err
	}
	commits, err := h.opts.Store.Commits(ctx, t.ControlPlane, t.Environment)
	if err != nil {
		return err
	}
	head, _ := h.heads.get(ctx, t)
	for _, w := range slices.Sorted(maps.Keys(types)) {
		p := Placement{Environment: t.Environment, ClusterTypes: slices.Sorted(maps.Keys(types[w])), Versions: map[string]int{}}
		reg := desired.Registrations[w]
		p.Desired = workloadVersions(commits[head], map[string]string{w: reg})[w]
		for _, c := range counts {
			if !types[w][c.ClusterType] {
				continue
			}
			version := workloadVersions(commits[c.GitOpsCommit], map[string]string{w: reg})[w]
			if version == "" {
				version = "unknown"
			}
			p.Versions[version] += c.Clusters
			switch c.State {
			case store.StateSuccess:
				p.Healthy += c.Clusters
			case store.StateFailure:
				p.Failed += c.Clusters
			default:
				p.Pending += c.Clusters
			}
		}
		if by[w] == nil {
			by[w] = &WorkloadInfo{Name: w}
		}
		by[w].Placements = append(by[w].Placements, p)
	}
	return nil
}

// behindList is what the store says of the clusters behind a commit.
type behindList struct {
	count  int
	states []store.ClusterState
}

// commitCounts groups an environment's clusters by cluster type, commit and state, from the
// cache of aggregates.
func (h *Hub) commitCounts(ctx context.Context, cp, env string) ([]store.CommitCount, error) {
	return cachedOf(h.answers, cp+"/"+env, "counts", func() ([]store.CommitCount, error) {
		return h.opts.Store.CommitCounts(ctx, cp, env)
	})
}
