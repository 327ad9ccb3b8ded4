package config

import (
	"strconv"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Defaults of the limits on reading sources (see scheduling.Policy).
const (
	DefaultMaxFileBytes   = scheduling.DefaultMaxFileBytes
	DefaultMaxSourceBytes = scheduling.DefaultMaxSourceBytes
	DefaultMaxSourceFiles = scheduling.DefaultMaxSourceFiles
	DefaultLoadTimeout    = scheduling.DefaultLoadTimeout
)

// Sources holds the limits on what is read from control-plane and workload repositories.
type Sources struct {
	MaxFileBytes   ByteSize `yaml:"maxFileBytes"`   // largest YAML file read from a repository
	MaxSourceBytes ByteSize `yaml:"maxSourceBytes"` // the YAML files of one source together
	MaxSourceFiles int      `yaml:"maxSourceFiles"` // the YAML files of one source
	LoadTimeout    Duration `yaml:"loadTimeout"`    // loading one environment's sources
	ManifestHosts  []string `yaml:"manifestHosts"`  // hosts a deployment target's manifests.repo may name
}

// defaultSources are the source limits when nothing sets them.
func defaultSources() Sources {
	return Sources{MaxFileBytes: DefaultMaxFileBytes, MaxSourceBytes: DefaultMaxSourceBytes,
		MaxSourceFiles: DefaultMaxSourceFiles, LoadTimeout: Duration(DefaultLoadTimeout)}
}

// SourcePolicy returns the settings as the scheduling package's policy.
func (c *Config) SourcePolicy() scheduling.Policy {
	return scheduling.Policy{
		ManifestHosts:  c.AllowedManifestHosts(),
		MaxFileBytes:   int64(c.Sources.MaxFileBytes),
		MaxSourceBytes: int64(c.Sources.MaxSourceBytes),
		MaxSourceFiles: c.Sources.MaxSourceFiles,
		LoadTimeout:    c.Sources.LoadTimeout.Std(),
	}
}

// sourcesKeys lists the settings of the sources, in documentation order.
func sourcesKeys() []Key {
	return []Key{
		key(scheduling.SettingMaxFileBytes, "4Mi", "Largest YAML file read from a control-plane or workload repository; a larger file is an error at its path.",
			byteSize(func(c *Config) *ByteSize { return &c.Sources.MaxFileBytes })),
		key(scheduling.SettingMaxSourceBytes, "16Mi", "Most bytes of YAML read from one source (a branch of a control plane, a registered workload folder), a file at several paths counted at each; decided from the sizes in git before anything is read. A larger source is one error and none of it is read.",
			byteSize(func(c *Config) *ByteSize { return &c.Sources.MaxSourceBytes })),
		key(scheduling.SettingMaxSourceFiles, strconv.Itoa(DefaultMaxSourceFiles), "Most YAML files read from one source; a source with more is one error and none of it is read.",
			integer(func(c *Config) *int { return &c.Sources.MaxSourceFiles })),
		key(scheduling.SettingLoadTimeout, DefaultLoadTimeout.String(), "Time limit of loading one environment's sources; the files not read by then are an error and nothing is removed.",
			dur(func(c *Config) *Duration { return &c.Sources.LoadTimeout })),
		key("sources.manifestHosts", "the host of github.webURL", "Hosts a deployment target's manifests.repo may name (comma-separated in the variable); a workload naming another host is an error at its line.",
			list(func(c *Config) *[]string { return &c.Sources.ManifestHosts })),
	}
}

// sourcesProblems checks the source limits.
func (c *Config) sourcesProblems() []string {
	var p []string
	p = appendIf(p, c.Sources.MaxFileBytes <= 0, scheduling.SettingMaxFileBytes, "must be positive")
	p = appendIf(p, c.Sources.MaxSourceBytes <= 0, scheduling.SettingMaxSourceBytes, "must be positive")
	p = appendIf(p, c.Sources.MaxSourceFiles <= 0, scheduling.SettingMaxSourceFiles, "must be positive")
	return appendIf(p, c.Sources.LoadTimeout <= 0, scheduling.SettingLoadTimeout, "must be positive")
}
