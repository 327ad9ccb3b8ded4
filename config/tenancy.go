package config

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DefaultCacheMaxBytes is the default size of the git cache: 1 GiB of cached repositories.
const DefaultCacheMaxBytes = 1 << 30

// listSeparator separates the items of a list setting in its environment variable.
const listSeparator = ","

// AllowedManifestHosts returns sources.manifestHosts, or the host of github.webURL when unset.
func (c *Config) AllowedManifestHosts() []string {
	if len(c.Sources.ManifestHosts) > 0 {
		return c.Sources.ManifestHosts
	}
	if u, err := url.Parse(c.GitHub.WebURL); err == nil && u.Host != "" {
		return []string{u.Host}
	}
	return nil
}

// ByteSize is a size in bytes, read as an integer or a Kubernetes quantity such as 512Mi or 1Gi.
type ByteSize int64

// UnmarshalYAML parses a scalar size and reports the line of a bad value.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeError(n, "expected a size such as 4Mi, 1Gi or 1048576")
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return typeError(n, err.Error())
	}
	*b = v
	return nil
}

// ParseByteSize parses a byte count, optionally with a binary (Ki, Mi, Gi) or decimal (K, M, G)
// suffix as Kubernetes quantities have: 4Mi, 1Gi, 500M.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	num, mult := s, int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q (use bytes or a quantity such as 4Mi or 1Gi)", s)
	}
	return ByteSize(v * mult), nil
}

// byteUnits are the accepted suffixes, two-letter ones first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}

// byteSize sets a ByteSize field.
func byteSize(field func(*Config) *ByteSize) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := ParseByteSize(v)
		if err != nil {
			return err
		}
		*field(c) = b
		return nil
	}
}

// list sets a list of strings from a comma-separated variable.
func list(field func(*Config) *[]string) func(*Config, string) error {
	return func(c *Config, v string) error {
		var out []string
		for _, s := range strings.Split(v, listSeparator) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		*field(c) = out
		return nil
	}
}

// IsControlPlane reports whether owner/name matches one of the controlPlanes patterns
// (path.Match globs such as org/platform-*, compared case-insensitively as GitHub does).
func (c *Config) IsControlPlane(owner, name string) bool {
	return MatchControlPlane(c.ControlPlanes, owner, name)
}

// MatchControlPlane reports whether owner/name matches one of patterns.
func MatchControlPlane(patterns []string, owner, name string) bool {
	full := strings.ToLower(owner + "/" + name)
	for _, p := range patterns {
		if ok, err := path.Match(strings.ToLower(p), full); err == nil && ok {
			return true
		}
	}
	return false
}

// tenancyProblems checks the control-plane patterns and the memory limits.
func (c *Config) tenancyProblems() []string {
	var p []string
	for _, pat := range c.ControlPlanes {
		if err := checkPattern(pat); err != nil {
			p = append(p, fmt.Sprintf("%s: %v", named("controlPlanes"), err))
		}
	}
	for _, h := range c.Sources.ManifestHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			p = append(p, fmt.Sprintf("%s: %q is not a host name (such as github.com or github.example.com:8443)", named("sources.manifestHosts"), h))
		}
	}
	p = appendIf(p, c.Cache.MaxBytes < 0, "cache.maxBytes", "must not be negative (0 means no limit)")
	return append(p, c.sourcesProblems()...)
}

// checkPattern accepts OWNER/REPO patterns whose parts are globs.
func checkPattern(pat string) error {
	owner, repo, ok := strings.Cut(pat, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return fmt.Errorf("pattern %q is not of the form OWNER/REPO (globs allowed, e.g. my-org/platform-*)", pat)
	}
	if _, err := path.Match(pat, ""); err != nil {
		return fmt.Errorf("pattern %q: %w", pat, err)
	}
	return nil
}
