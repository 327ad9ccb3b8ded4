package handlers

import (
	"context"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
)

// routePush names the branch a push moved. Deleted branches and tags name nothing; the app's
// own pushes (kalypso/<env>, pins) are echoes: whoever pushed already queued what follows.
func (c *Core) routePush(ctx context.Context, payload []byte) (bool, error) {
	ev, err := decode[github.PushEvent]("push", payload)
	if err != nil {
		return false, err
	}
	if c.fromSelf(ev.GetSender()) {
		return true, nil
	}
	branch, ok := strings.CutPrefix(ev.GetRef(), "refs/heads/")
	if !ok || ev.GetDeleted() {
		return false, nil
	}
	repo := repoOf(&github.Repository{Owner: ev.GetRepo().GetOwner(), Name: ev.GetRepo().Name})
	if branch == gitsource.MainBranch && !c.Index.Declared(repo) && declaresEnvironments(ev) {
		zerolog.Ctx(ctx).Warn().Str("repository", repo.String()).
			Msg("repository changes .environments/ but is not a declared control plane (setting controlPlanes); ignored")
	}
	return false, c.Queue.Add(ctx, BranchKey(githubapp.GetInstallationIDFromEvent(ev), repo, branch), nil)
}

// declaresEnvironments reports whether a push adds, changes or removes a file in .environments/.
func declaresEnvironments(ev *github.PushEvent) bool {
	for _, c := range ev.Commits {
		for _, files := range [][]string{c.Added, c.Modified, c.Removed} {
			for _, f := range files {
				if strings.HasPrefix(f, ".environments/") {
					return true
				}
			}
		}
	}
	return false
}
