package promote

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/reconcile"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// maxDescendants bounds how many later commits of the GitOps branch are read for reports.
const maxDescendants = 20

// deployment describes one wait for compliance: which main commit, where it was merged.
type deployment struct {
	Inst     int64
	CP       reconcile.Repo
	Stage    *scheduling.Stage
	Main     string
	GitOps   reconcile.Repo
	Branch   string    // the GitOps environment branch
	Merge    string    // the GitOps commit the pull request was merged as
	Started  time.Time // when the wait began (the timeout counts from here)
	ID       int64     // the GitHub Deployment
	expected []string
}

// payload is stored in the GitHub Deployment, so later deployments know where this one landed.
type payload struct {
	GitOpsRepo   string `json:"gitops_repo"`
	GitOpsCommit string `json:"gitops_commit"`
}

func waitKey(cp reconcile.Repo, env string) string { return cp.String() + "/" + env }

// running is a wait in progress.
type running struct {
	main   string
	cancel context.CancelFunc
	wake   chan struct{}
}

// startWait runs a wait in the background unless the same one is already running. A wait
// needs the GitOps commit of the merge: without it there is nothing to poll.
func (p *Promoter) startWait(d *deployment) {
	if d.Merge == "" {
		logger(p.base).Error().Str("environment", d.Stage.Env.Name).Str("main", d.Main).Msg("promotion wait not started: no GitOps merge commit")
		return
	}
	key := waitKey(d.CP, d.Stage.Env.Name)
	ctx, cancel := context.WithCancel(p.base)
	r := &running{main: d.Main, cancel: cancel, wake: make(chan struct{}, 1)}
	if prev, loaded := p.waits.LoadOrStore(key, r); loaded {
		if prev.(*running).main == d.Main {
			cancel()
			return
		}
		prev.(*running).cancel()
		p.waits.Store(key, r)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		defer p.waits.CompareAndDelete(key, r)
		if err := p.run(ctx, d, r.wake); err != nil && ctx.Err() == nil {
			logger(p.base).Error().Err(err).Str("environment", d.Stage.Env.Name).Str("main", d.Main).Msg("promotion wait failed")
		}
	}()
}

// stopWait ends the wait of env if it is for main.
func (p *Promoter) stopWait(env string, cp reconcile.Repo, main string) {
	if r, ok := p.waits.Load(waitKey(cp, env)); ok && r.(*running).main == main {
		r.(*running).cancel()
	}
}

// Wake makes every running wait poll now (a status webhook arrived).
func (p *Promoter) Wake() {
	p.waits.Range(func(_, v any) bool {
		select {
		case v.(*running).wake <- struct{}{}:
		default:
		}
		return true
	})
}

// run polls cluster statuses until every expected cluster is compliant, one fails, or time runs out.
func (p *Promoter) run(ctx context.Context, d *deployment, wake <-chan struct{}) error {
	if err := p.ensureDeployment(ctx, d); err != nil {
		return err
	}
	d.expected = p.expectedClusters(ctx, d)
	last := ""
	for {
		ok, failed, err := p.observe(ctx, d)
		if err != nil {
			logger(p.base).Warn().Err(err).Str("environment", d.Stage.Env.Name).Msg("polling cluster statuses")
		}
		required := max(len(d.expected), d.Stage.MinClusters)
		switch {
		case failed != "":
			return p.finish(ctx, d, false, "cluster "+failed+" failed")
		case err == nil && len(ok) >= required && containsAll(ok, d.expected):
			return p.finish(ctx, d, true, fmt.Sprintf("deployed to %d clusters", len(ok)))
		case p.now().Sub(d.Started) >= d.Stage.Timeout:
			return p.finish(ctx, d, false, fmt.Sprintf("timed out after %s: %d/%d %s%s", d.Stage.Timeout, len(ok), required, descDeploying, missing(ok, d.expected)))
		}
		if desc := fmt.Sprintf("%d/%d %s", len(ok), required, descDeploying); desc != last {
			if err := p.status(ctx, d.Inst, d.CP, d.Main, d.Stage.Env.Name, "pending", desc); err != nil {
				return err
			}
			last = desc
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-time.After(p.poll):
		}
	}
}

// observe reads the reports of the clusters on the merged commit and its descendants: the
// compliant clusters, and the first failing one (a cluster's newest report counts).
func (p *Promoter) observe(ctx context.Context, d *deployment) (ok []string, failed string, err error) {
	commits, err := p.descendants(ctx, d)
	if err != nil {
		return nil, "", err
	}
	gh, err := p.clients.Client(ctx, d.Inst)
	if err != nil {
		return nil, "", err
	}
	state := map[string]string{}
	for _, sha := range commits { // newest first
		combined, _, err := gh.Repositories.GetCombinedStatus(ctx, d.GitOps.Owner, d.GitOps.Name, sha, &github.ListOptions{PerPage: 100})
		if err != nil {
			return nil, "", fmt.Errorf("statuses of %s@%s: %w", d.GitOps, short(sha), err)
		}
		for _, st := range combined.Statuses {
			if _, seen := state[st.GetContext()]; !seen && d.Stage.MatchesContext(st.GetContext()) {
				state[st.GetContext()] = st.GetState()
			}
		}
	}
	for _, c := range sortedKeys(state) {
		switch state[c] {
		case "success":
			ok = append(ok, c)
		case "failure", "error":
			if failed == "" {
				failed = c
			}
		}
	}
	return ok, failed, nil
}

// descendants lists the merged commit and the later commits of the GitOps branch, newest first.
func (p *Promoter) descendants(ctx context.Context, d *deployment) ([]string, error) {
	token, err := p.clients.Token(ctx, d.Inst)
	if err != nil {
		return nil, err
	}
	unlock := p.cache.Lock(d.GitOps.Owner, d.GitOps.Name)
	defer unlock()
	repo, err := p.cache.Fetch(ctx, d.GitOps.Owner, d.GitOps.Name, token, d.Branch)
	if err != nil {
		return nil, err
	}
	merge := plumbing.NewHash(d.Merge)
	var out []string
	for h := gitcache.Head(repo, d.Branch); !h.IsZero() && len(out) < maxDescendants; {
		out = append(out, h.String())
		if h == merge {
			return out, nil
		}
		c, err := repo.CommitObject(h)
		if err != nil || len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	if len(out) == maxDescendants {
		return append(out[:maxDescendants-1], d.Merge), nil
	}
	return []string{d.Merge}, nil // the merge commit is no longer on the branch: read it alone
}

// expectedClusters are the clusters that reported success on the previous deployment of the
// environment (read from that deployment's GitOps commit).
func (p *Promoter) expectedClusters(ctx context.Context, d *deployment) []string {
	gh, err := p.clients.Client(ctx, d.Inst)
	if err != nil {
		return nil
	}
	list, _, err := gh.Repositories.ListDeployments(ctx, d.CP.Owner, d.CP.Name, &github.DeploymentsListOptions{Environment: d.Stage.Env.Name, ListOptions: github.ListOptions{PerPage: 10}})
	if err != nil {
		return nil
	}
	for _, dep := range list {
		var pl payload
		if dep.GetID() == d.ID || json.Unmarshal(dep.Payload, &pl) != nil || pl.GitOpsCommit == "" || pl.GitOpsRepo != d.GitOps.String() {
			continue
		}
		statuses, _, err := gh.Repositories.ListDeploymentStatuses(ctx, d.CP.Owner, d.CP.Name, dep.GetID(), &github.ListOptions{PerPage: 1})
		if err != nil || len(statuses) == 0 || statuses[0].GetState() != "success" {
			continue
		}
		prev := &deployment{Inst: d.Inst, GitOps: d.GitOps, Stage: d.Stage, Merge: pl.GitOpsCommit}
		ok, _, _ := p.observeOne(ctx, prev)
		return ok
	}
	return nil
}

// observeOne reads the compliant clusters of a single GitOps commit.
func (p *Promoter) observeOne(ctx context.Context, d *deployment) ([]string, string, error) {
	if d.Merge == "" {
		return nil, "", nil
	}
	gh, err := p.clients.Client(ctx, d.Inst)
	if err != nil {
		return nil, "", err
	}
	combined, _, err := gh.Repositories.GetCombinedStatus(ctx, d.GitOps.Owner, d.GitOps.Name, d.Merge, &github.ListOptions{PerPage: 100})
	if err != nil {
		return nil, "", err
	}
	var ok []string
	for _, st := range combined.Statuses {
		if d.Stage.MatchesContext(st.GetContext()) && st.GetState() == "success" {
			ok = append(ok, st.GetContext())
		}
	}
	sort.Strings(ok)
	return ok, "", nil
}

func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func missing(have, want []string) string {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, w := range want {
		if !set[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (missing " + strings.Join(out, ", ") + ")"
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
