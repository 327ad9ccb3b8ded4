package config

import (
	"strconv"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// GitHubLists holds the bounds of the GitHub lists read page after page that are not
// promotion's (inlined in the github settings).
type GitHubLists struct {
	MaxCheckRuns int `yaml:"maxCheckRuns"` // check runs of one name read on one commit
	MaxComments  int `yaml:"maxComments"`  // comments read on one pull request
	// MaxRepositories bounds the repositories of one installation (github.maxRepositories).
	MaxRepositories int `yaml:"maxRepositories"`
}

// ListLimits returns the bounds of the lists read page after page, as the GitHub adapter takes them.
func (c *Config) ListLimits() ghport.Limits {
	return ghport.Limits{CheckRuns: c.GitHub.MaxCheckRuns, Comments: c.GitHub.MaxComments, Deployments: c.Promotion.MaxDeployments,
		Repositories: c.GitHub.MaxRepositories}
}

// listKeys lists the settings that bound the GitHub lists read page after page, in
// documentation order.
func listKeys() []Key {
	return []Key{
		key(ghport.SettingMaxCheckRuns, strconv.Itoa(ghport.DefaultMaxCheckRuns), "Most check runs of one name read on one commit, 100 a page, to find the app's own; a commit with more is an error naming this setting.",
			integer(func(c *Config) *int { return &c.GitHub.MaxCheckRuns })),
		key(ghport.SettingMaxComments, strconv.Itoa(ghport.DefaultMaxComments), "Most comments read on one pull request, 100 a page, to find the app's preview comment; a pull request with more is an error naming this setting.",
			integer(func(c *Config) *int { return &c.GitHub.MaxComments })),
		key(ghport.SettingMaxRepositories, strconv.Itoa(ghport.DefaultMaxRepositories), "Most repositories of one installation read, 100 a page, to find its control planes and the repositories they name; an installation with more is an error naming this setting.",
			integer(func(c *Config) *int { return &c.GitHub.MaxRepositories })),
		key(ghport.SettingMaxDeployments, strconv.Itoa(ghport.DefaultMaxDeployments), "Most GitHub Deployments read in one search, 100 a page: of a replaced commit to an environment, or of an environment for its previous successful deployment; more is an error naming this setting.",
			integer(func(c *Config) *int { return &c.Promotion.MaxDeployments })),
	}
}

// listProblems checks the bounds of the lists read page after page.
func (c *Config) listProblems() []string {
	p := appendIf(nil, c.GitHub.MaxCheckRuns < 1, ghport.SettingMaxCheckRuns, "must be at least 1")
	p = appendIf(p, c.GitHub.MaxComments < 1, ghport.SettingMaxComments, "must be at least 1")
	p = appendIf(p, c.GitHub.MaxRepositories < 1, ghport.SettingMaxRepositories, "must be at least 1")
	return appendIf(p, c.Promotion.MaxDeployments < 1, ghport.SettingMaxDeployments, "must be at least 1")
}
