package ghport

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// PerPage is the page size the app asks for: the largest GitHub sends of every list it reads
// (check runs, deployments, issue comments, commit statuses).
const PerPage = 100

// The settings that bound the lists read page after page, and their defaults.
const (
	SettingMaxCheckRuns    = "github.maxCheckRuns"
	SettingMaxComments     = "github.maxComments"
	SettingMaxDeployments  = "promotion.maxDeployments"
	SettingMaxRepositories = "github.maxRepositories"

	DefaultMaxCheckRuns    = 1000
	DefaultMaxComments     = 1000
	DefaultMaxDeployments  = 1000
	DefaultMaxRepositories = 10_000
)

// Limits bounds the lists read from GitHub page after page; a list longer than its bound is a
// *LimitError naming its setting. A zero field takes its default.
type Limits struct {
	CheckRuns   int // check runs of one name on one commit (github.maxCheckRuns)
	Comments    int // comments of one pull request (github.maxComments)
	Deployments int // deployments read in one search of a commit or an environment (promotion.maxDeployments)
	// Repositories bounds the repositories of an installation (github.maxRepositories).
	Repositories int
}

// withDefaults fills the zero fields of l with the defaults.
func (l Limits) withDefaults() Limits {
	l.CheckRuns = orDefault(l.CheckRuns, DefaultMaxCheckRuns)
	l.Comments = orDefault(l.Comments, DefaultMaxComments)
	l.Deployments = orDefault(l.Deployments, DefaultMaxDeployments)
	l.Repositories = orDefault(l.Repositories, DefaultMaxRepositories)
	return l
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// bound names one list's limit and the setting that raises it.
type bound struct {
	max     int
	what    string
	setting string
}

func (b bound) exceeded() *LimitError {
	return &LimitError{What: b.what, Limit: b.max, Setting: b.setting}
}

// each reads a list page after page (read returns one page and the number of the next, 0
// after the last) and gives its items to yield, in order, until yield reports false. A list
// longer than b.max, or one whose pages do not end, is a *LimitError.
func each[T any](b bound, read func(page int) ([]T, int, error), yield func(T) (bool, error)) error {
	seen := 0
	for page, pages := 1, 0; ; pages++ {
		if pages > b.max/PerPage { // a server that keeps offering pages beyond its items
			return b.exceeded()
		}
		items, next, err := read(page)
		if err != nil {
			return err
		}
		for _, item := range items {
			if seen++; seen > b.max {
				return b.exceeded()
			}
			more, err := yield(item)
			if err != nil || !more {
				return err
			}
		}
		if next == 0 || len(items) == 0 {
			return nil
		}
		page = next
	}
}

// ReadPages reads every item of a list page after page: read returns one page and the number
// of the next, 0 after the last. More than max items, or pages that do not end, is a
// *LimitError saying "more than max what (setting)".
func ReadPages[T any](max int, what, setting string, read func(page int) ([]T, int, error)) ([]T, error) {
	return all(bound{max: max, what: what, setting: setting}, read)
}

// NextPage is the page after resp's, 0 after the last (or without an answer).
func NextPage(resp *github.Response) int {
	if resp == nil {
		return 0
	}
	return resp.NextPage
}

// all reads every item of a list with each.
func all[T any](b bound, read func(page int) ([]T, int, error)) ([]T, error) {
	var out []T
	err := each(b, read, func(item T) (bool, error) { out = append(out, item); return true, nil })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AllCheckRuns lists every check run named name on a commit, of every check suite, page after
// page; more than Limits().CheckRuns is a *LimitError.
func AllCheckRuns(ctx context.Context, gh GitHub, repo envref.Repo, sha, name string) ([]*github.CheckRun, error) {
	b := bound{max: gh.Limits().withDefaults().CheckRuns, setting: SettingMaxCheckRuns,
		what: fmt.Sprintf("check runs named %q on %s@%s", name, repo, short(sha))}
	return all(b, func(page int) ([]*github.CheckRun, int, error) {
		return gh.CheckRuns(ctx, repo, sha, name, page)
	})
}

// AllComments lists every comment of a pull request or issue, oldest first, page after page;
// more than Limits().Comments is a *LimitError.
func AllComments(ctx context.Context, gh GitHub, repo envref.Repo, number int) ([]*github.IssueComment, error) {
	b := bound{max: gh.Limits().withDefaults().Comments, setting: SettingMaxComments,
		what: fmt.Sprintf("comments on %s#%d", repo, number)}
	return all(b, func(page int) ([]*github.IssueComment, int, error) {
		return gh.Comments(ctx, repo, number, page)
	})
}

// EachDeployment gives the deployments opts selects, newest first, to yield until it reports
// false, reading page after page (opts' own paging is ignored); reading more than
// Limits().Deployments is a *LimitError.
func EachDeployment(ctx context.Context, gh GitHub, repo envref.Repo, opts github.DeploymentsListOptions, yield func(*github.Deployment) (bool, error)) error {
	what := "deployments of " + repo.String()
	if opts.Environment != "" {
		what += " to " + opts.Environment
	}
	if opts.SHA != "" {
		what += " of " + short(opts.SHA)
	}
	b := bound{max: gh.Limits().withDefaults().Deployments, setting: SettingMaxDeployments, what: what}
	return each(b, func(page int) ([]*github.Deployment, int, error) {
		o := opts
		o.ListOptions = github.ListOptions{Page: page, PerPage: PerPage}
		return gh.Deployments(ctx, repo, &o)
	}, yield)
}

// short is a commit's first seven characters.
func short(sha string) string { return sha[:min(7, len(sha))] }
