package config

import (
	"strconv"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// DefaultMaxClusters is the default of promotion.maxClusters.
const DefaultMaxClusters = ghport.DefaultMaxStatuses

// statusKeys lists the settings that bound the commit statuses read, in documentation order.
func statusKeys() []Key {
	return []Key{
		key(ghport.SettingMaxStatuses, strconv.Itoa(DefaultMaxClusters), "Clusters an environment may have that report through commit statuses: the statuses read on one commit, 100 a page; a commit with more fails its promotion with an error naming this setting.",
			integer(func(c *Config) *int { return &c.Promotion.MaxClusters })),
	}
}

// statusProblems checks the bound of the commit statuses read.
func (c *Config) statusProblems() []string {
	return appendIf(nil, c.Promotion.MaxClusters < 1, ghport.SettingMaxStatuses, "must be at least 1")
}
