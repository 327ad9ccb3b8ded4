package hub

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// ConfigDiff is a config value that differs between two environments.
type ConfigDiff struct {
	Key  string `json:"key"`
	From string `json:"from"`
	To   string `json:"to"`
}

// AssignmentDiff compares one assignment key between two environments.
type AssignmentDiff struct {
	Key      string       `json:"key"`
	Workload string       `json:"workload"`
	In       string       `json:"in"` // both, from (only in the first) or to (only in the second)
	Config   []ConfigDiff `json:"config,omitempty"`
}

// Comparison is what differs between two environments of a control plane.
type Comparison struct {
	ControlPlane string           `json:"controlPlane"`
	From         string           `json:"from"`
	To           string           `json:"to"`
	Same         int              `json:"same"`        // assignments in both with the same config values
	Differences  []AssignmentDiff `json:"differences"` // the others, by key
}

// Compare answers what differs between two environments: assignments present in only one,
// and config values per assignment, from the rendered trees.
func (h *Hub) Compare(ctx context.Context, cp, from, to string) (Comparison, error) {
	c := Comparison{ControlPlane: cp, From: from, To: to, Differences: []AssignmentDiff{}}
	var sides [2]map[string]Assignment
	for i, env := range []string{from, to} {
		t, err := h.find(ctx, cp, env)
		if err != nil {
			return c, err
		}
		var d Desired
		if h.opts.Desired != nil {
			d, _ = h.opts.Desired(t)
		}
		sides[i] = map[string]Assignment{}
		for _, a := range d.Assignments {
			sides[i][a.Key] = a
		}
	}
	keys := slices.Sorted(maps.Keys(sides[0]))
	for k := range sides[1] {
		if _, ok := sides[0][k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		a, inFrom := sides[0][k]
		b, inTo := sides[1][k]
		switch {
		case !inTo:
			c.Differences = append(c.Differences, AssignmentDiff{Key: k, Workload: a.Workload, In: "from"})
		case !inFrom:
			c.Differences = append(c.Differences, AssignmentDiff{Key: k, Workload: b.Workload, In: "to"})
		default:
			if diffs := configDiffs(a.Config, b.Config); len(diffs) > 0 {
				c.Differences = append(c.Differences, AssignmentDiff{Key: k, Workload: a.Workload, In: "both", Config: diffs})
			} else {
				c.Same++
			}
		}
	}
	return c, nil
}

// configDiffs lists the keys whose values differ, by key.
func configDiffs(a, b map[string]string) []ConfigDiff {
	var out []ConfigDiff
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if a[k] != b[k] {
			out = append(out, ConfigDiff{Key: k, From: a[k], To: b[k]})
		}
	}
	return out
}

// Deployment is an entry of an environment's deployment timeline.
type Deployment struct {
	Environment     string            `json:"environment"`
	MainCommit      string            `json:"mainCommit"`
	GitOpsCommit    string            `json:"gitopsCommit"`
	Sources         map[string]string `json:"sources,omitempty"`
	CommittedAt     *time.Time        `json:"committedAt,omitempty"`
	StartedAt       time.Time         `json:"startedAt"`
	FinishedAt      *time.Time        `json:"finishedAt,omitempty"`
	State           string            `json:"state"`
	Description     string            `json:"description"`
	LeadTimeSeconds *int64            `json:"leadTimeSeconds,omitempty"`
}

// historyWindow bounds how far back history and the DORA keys look by default.
const historyWindow = 90 * 24 * time.Hour

// History lists an environment's deployments, newest first (every environment's when env is
// ""); with workload set, only those that changed that workload's version.
func (h *Hub) History(ctx context.Context, cp, env, workload string) ([]Deployment, error) {
	list, err := h.opts.Store.Deployments(ctx, cp, env, h.opts.Now().Add(-historyWindow), maxHistory)
	if err != nil {
		return nil, err
	}
	out := []Deployment{}
	last := map[string]string{} // environment → the workload's previous version (oldest first)
	for i := len(list) - 1; i >= 0; i-- {
		d := list[i]
		entry := deploymentEntry(d)
		if workload != "" {
			v := h.workloadVersion(ctx, d, workload)
			if v == "" || v == last[d.Environment] {
				continue
			}
			last[d.Environment] = v
		}
		out = append(out, entry)
	}
	slices.Reverse(out)
	return out, nil
}

// workloadVersion is the source commit of workload a deployment deployed ("" when none).
func (h *Hub) workloadVersion(ctx context.Context, d store.Deployment, workload string) string {
	t, err := h.find(ctx, d.ControlPlane, d.Environment)
	if err != nil {
		return ""
	}
	reg := h.registrations(t)[workload]
	for _, s := range d.Sources {
		if s.Name == "workload "+reg {
			return s.Commit
		}
	}
	return ""
}

func deploymentEntry(d store.Deployment) Deployment {
	e := Deployment{Environment: d.Environment, MainCommit: d.MainCommit, GitOpsCommit: d.GitOpsCommit, StartedAt: d.StartedAt,
		FinishedAt: d.FinishedAt, State: d.State, Description: d.Description}
	if !d.CommittedAt.IsZero() && d.CommittedAt.Unix() > 0 {
		at := d.CommittedAt
		e.CommittedAt = &at
	}
	if lead, ok := d.LeadTime(); ok && e.CommittedAt != nil {
		s := int64(lead.Seconds())
		e.LeadTimeSeconds = &s
	}
	if len(d.Sources) > 0 {
		e.Sources = map[string]string{}
		for _, s := range d.Sources {
			e.Sources[s.Name] = s.Commit
		}
	}
	return e
}

// DORA are the four keys of an environment over a window, from its deployment history.
type DORA struct {
	ControlPlane string `json:"controlPlane"`
	Environment  string `json:"environment"`
	Days         int    `json:"days"`
	Deployments  int    `json:"deployments"` // finished, successful or not
	// DeploymentsPerDay is the deployment frequency: successful deployments per day.
	DeploymentsPerDay float64 `json:"deploymentsPerDay"`
	// LeadTimeSeconds is the median time from a main commit to its successful deployment.
	LeadTimeSeconds *float64 `json:"leadTimeSeconds"`
	// ChangeFailureRate is the share of finished deployments that failed.
	ChangeFailureRate *float64 `json:"changeFailureRate"`
	// TimeToRestoreSeconds is the median time from a failed deployment to the next success.
	TimeToRestoreSeconds *float64 `json:"timeToRestoreSeconds"`
}

// DORA computes the four keys of an environment over the last days.
func (h *Hub) DORA(ctx context.Context, cp, env string, days int) (DORA, error) {
	if _, err := h.find(ctx, cp, env); err != nil {
		return DORA{}, err
	}
	days = min(max(days, 1), 365)
	list, err := h.opts.Store.Deployments(ctx, cp, env, h.opts.Now().AddDate(0, 0, -days), 100000)
	if err != nil {
		return DORA{}, err
	}
	return doraOf(cp, env, days, list), nil
}

// doraOf computes the keys from deployments, newest first.
func doraOf(cp, env string, days int, list []store.Deployment) DORA {
	k := DORA{ControlPlane: cp, Environment: env, Days: days}
	var leads, restores []float64
	var failed, succeeded int
	var failedSince *time.Time
	for i := len(list) - 1; i >= 0; i-- { // oldest first
		d := list[i]
		if d.FinishedAt == nil || (d.State != "success" && d.State != "failure") {
			continue
		}
		k.Deployments++
		if d.State == "failure" {
			failed++
			if failedSince == nil {
				failedSince = d.FinishedAt
			}
			continue
		}
		succeeded++
		if lead, ok := d.LeadTime(); ok && d.CommittedAt.Unix() > 0 {
			leads = append(leads, lead.Seconds())
		}
		if failedSince != nil {
			restores = append(restores, d.FinishedAt.Sub(*failedSince).Seconds())
			failedSince = nil
		}
	}
	k.DeploymentsPerDay = float64(succeeded) / float64(days)
	k.LeadTimeSeconds, k.TimeToRestoreSeconds = median(leads), median(restores)
	if k.Deployments > 0 {
		r := float64(failed) / float64(k.Deployments)
		k.ChangeFailureRate = &r
	}
	return k
}

// median returns the median of values, nil for none.
func median(values []float64) *float64 {
	if len(values) == 0 {
		return nil
	}
	sort.Float64s(values)
	m := values[len(values)/2]
	if len(values)%2 == 0 {
		m = (values[len(values)/2-1] + m) / 2
	}
	return &m
}
