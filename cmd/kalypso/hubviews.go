package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/hub"
	"github.com/kalypso-gitops/kalypso/render"
)

// envOf names the environment of a target for the reconciler's results.
func envOf(t hub.Target) envref.Env {
	owner, name, _ := strings.Cut(t.ControlPlane, "/")
	return envref.Env{Installation: t.Installation, ControlPlane: envref.Repo{Owner: owner, Name: name}, Name: t.Environment}
}

// desiredStates reads the environments' rendered assignments and config values from the
// reconciler's last results, parsing each result once.
func desiredStates(results fleetview.Results) hub.DesiredState {
	var mu sync.Mutex
	parsed := map[string]struct {
		res *render.Result
		d   hub.Desired
	}{}
	return func(t hub.Target) (hub.Desired, bool) {
		res, _, ok := results.LastResult(envOf(t))
		if !ok || res.Snapshot == nil {
			return hub.Desired{}, false
		}
		mu.Lock()
		defer mu.Unlock()
		if p, ok := parsed[t.Key()]; ok && p.res == res {
			return p.d, true
		}
		d := renderedOf(res)
		parsed[t.Key()] = struct {
			res *render.Result
			d   hub.Desired
		}{res, d}
		return d, true
	}
}

// renderedOf lists a result's assignments with their platform config values.
func renderedOf(res *render.Result) hub.Desired {
	d := hub.Desired{Registrations: map[string]string{}}
	for _, w := range res.Snapshot.Workloads {
		if w.Registration != nil {
			d.Registrations[w.Name] = w.Registration.Name
		}
	}
	for _, a := range res.Assignments {
		out := hub.Assignment{Key: a.Key(), ClusterType: a.ClusterType.Name, Target: a.Target.Name, Workload: a.Target.Workload}
		if files, ok := res.Outputs.Get(a.Key()); ok {
			var cm struct {
				Data map[string]string `json:"data"`
			}
			if yaml.Unmarshal(files.File(render.ConfigFileYAML), &cm) == nil {
				out.Config = cm.Data
			}
		}
		d.Assignments = append(d.Assignments, out)
	}
	return d
}

// gitopsHeads reads the head of an environment's GitOps branch from the git cache.
func gitopsHeads(cache *gitcache.Cache, clients *serverClients) hub.Head {
	return func(ctx context.Context, t hub.Target) (string, time.Time, error) {
		owner, name, _ := strings.Cut(t.GitOpsRepo, "/")
		token, err := clients.Token(ctx, t.Installation)
		if err != nil {
			return "", time.Time{}, err
		}
		var sha string
		var at time.Time
		err = cache.Use(ctx, gitcache.Remote{Owner: owner, Name: name, Token: token}, []string{t.GitOpsBranch}, func(s *gitcache.Session) error {
			head := s.Head(t.GitOpsBranch)
			if head.IsZero() {
				return fmt.Errorf("GitOps branch %s of %s not found", t.GitOpsBranch, t.GitOpsRepo)
			}
			c, err := s.Repo.CommitObject(head)
			if err != nil {
				return err
			}
			sha, at = head.String(), c.Committer.When.UTC()
			return nil
		})
		return sha, at, err
	}
}
