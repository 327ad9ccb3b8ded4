package ghport

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// Statuses are read in pages of GitHub's largest size.
const statusPage = PerPage

// DefaultMaxStatuses is the default bound of the commit statuses read on one commit: the
// clusters an environment may have that report through commit statuses.
const DefaultMaxStatuses = 10_000

// SettingMaxStatuses is the setting that bounds the statuses read on one commit.
const SettingMaxStatuses = "promotion.maxClusters"

// LimitError says that GitHub holds more of something than the app reads, and which setting
// bounds it.
type LimitError struct {
	What    string // what there is too much of, and where
	Limit   int
	Setting string
}

// Error names the limit and its setting.
func (e *LimitError) Error() string {
	return fmt.Sprintf("more than %d %s (%s)", e.Limit, e.What, e.Setting)
}

// StatusLimitError says that a commit has more than limit statuses.
func StatusLimitError(repo envref.Repo, sha string, limit int) *LimitError {
	return &LimitError{What: "commit statuses on " + repo.String() + "@" + sha[:min(7, len(sha))], Limit: limit, Setting: SettingMaxStatuses}
}

// Statuses implements GitHub: the combined status, every page of it (GitHub sends at most 100
// contexts a page). Each page is its own conditional request, so an unchanged page costs no
// rate limit. More contexts than the adapter's bound is a LimitError.
func (c REST) Statuses(ctx context.Context, repo envref.Repo, sha string) ([]*github.RepoStatus, error) {
	limit := c.maxStatuses
	if limit <= 0 {
		limit = DefaultMaxStatuses
	}
	tooMany := StatusLimitError(repo, sha, limit)
	b := bound{max: limit, what: tooMany.What, setting: tooMany.Setting}
	return all(b, func(page int) ([]*github.RepoStatus, int, error) {
		opts := &github.ListOptions{PerPage: statusPage}
		if page > 1 { // the first page's URL stays the one its conditional request is cached by
			opts.Page = page
		}
		combined, resp, err := c.gh.Repositories.GetCombinedStatus(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, 0, classify(err)
		}
		if combined.GetTotalCount() > limit {
			return nil, 0, tooMany
		}
		return combined.Statuses, NextPage(resp), nil
	})
}
