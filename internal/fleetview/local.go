package fleetview

import (
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/gitsource"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Repos reads the app's local clones without fetching (the git cache), under their locks.
type Repos interface {
	UseCached(r gitcache.Remote, fn func(*gitcache.Session) error) error
}

// planeFacts is what the local clone of a control plane says: its promotion chain and the
// commits the page names.
type planeFacts struct {
	chain  *scheduling.Chain
	commit func(sha string) (string, *time.Time) // first message line and committer time
}

// readPlane reads main's environments from the local clone of a control plane; a clone that
// is missing or unreadable gives an empty chain. Commits are looked up later, each under the
// clone's lock: a clone is never read after its lock is released.
func readPlane(repos Repos, cp envref.Repo) planeFacts {
	facts := planeFacts{chain: &scheduling.Chain{Stages: map[string]*scheduling.Stage{}},
		commit: func(string) (string, *time.Time) { return "", nil }}
	if repos == nil {
		return facts
	}
	remote := gitcache.Remote{Owner: cp.Owner, Name: cp.Name}
	facts.commit = func(sha string) (msg string, at *time.Time) {
		_ = repos.UseCached(remote, func(s *gitcache.Session) error {
			msg, at = commitInfo(s.Repo, sha)
			return nil
		})
		return msg, at
	}
	_ = repos.UseCached(remote, func(s *gitcache.Session) error {
		envs, err := gitsource.MainEnvironments(s.Repo)
		if err != nil || envs == nil {
			return err
		}
		facts.chain, _ = scheduling.PromotionChain(envs)
		return nil
	})
	if facts.chain == nil {
		facts.chain = &scheduling.Chain{Stages: map[string]*scheduling.Stage{}}
	}
	return facts
}

// commitInfo reads a commit's first message line and committer time from a local clone; an
// unknown commit has neither.
func commitInfo(repo *git.Repository, sha string) (string, *time.Time) {
	if repo == nil || !plumbing.IsHash(sha) {
		return "", nil
	}
	c, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return "", nil
	}
	msg, _, _ := strings.Cut(c.Message, "\n")
	t := c.Committer.When.UTC()
	return ellipsis.Cut(msg, maxMessage), &t
}

// maxMessage bounds a commit message line shown.
const maxMessage = 200

// promotionOrder orders environment names by the chain: a stage after its upstream, first
// stages and siblings by name, environments without spec.promotion last, by name.
func promotionOrder(names []string, chain *scheduling.Chain) []string {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	var out []string
	seen := map[string]bool{}
	var visit func(stages []*scheduling.Stage)
	visit = func(stages []*scheduling.Stage) {
		for _, s := range stages {
			if seen[s.Env.Name] {
				continue
			}
			seen[s.Env.Name] = true
			if known[s.Env.Name] {
				out = append(out, s.Env.Name)
			}
			visit(chain.Next(s.Env.Name))
		}
	}
	visit(chain.First())
	rest := []string{}
	for _, n := range names {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
