package scheduling

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Policy is what the operator allows an environment's sources: it bounds what is read and
// which values a workload repository, whose authors are not trusted, may give. Unset limits
// take their defaults (see WithDefaults).
type Policy struct {
	// ManifestHosts are the hosts a deployment target's manifests.repo may name (e.g.
	// github.com, or a GitHub Enterprise Server host); empty allows any host.
	ManifestHosts []string
	// MaxFileBytes is the size of the largest YAML file read from a source.
	MaxFileBytes int64
	// MaxSourceBytes bounds the YAML files read from one source together, each path counted.
	MaxSourceBytes int64
	// MaxSourceFiles bounds the number of YAML files read from one source.
	MaxSourceFiles int
	// LoadTimeout bounds the loading of one environment's sources.
	LoadTimeout time.Duration
}

// Maximum lengths of values a workload repository gives a deployment target.
const (
	maxManifestValue = 512
	maxManifestKeys  = 16
)

var (
	manifestKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)
	// safeValue is what any manifests value may contain: no whitespace, quotes, backslashes,
	// braces, brackets, comment or flow characters that could change YAML or template structure.
	safeValue   = regexp.MustCompile(`^([A-Za-z0-9._/][A-Za-z0-9._/:@+=~-]*)?$`)
	repoPart    = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	pathValue   = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
	branchValue = regexp.MustCompile(`^[A-Za-z0-9._/+-]+$`)
)

// validateManifests checks the manifests of a deployment target that a workload repository
// gives: every value to its format, so that no value can break the YAML or template it is
// written into.
func validateManifests(d *fieldDecoder, m map[string]string, path string, pol Policy) {
	if len(m) > maxManifestKeys {
		d.fail(d.lineOf(path, d.pos.Line), "%s: %d keys, at most %d are allowed", path, len(m), maxManifestKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		line := d.lineOf(path+"."+k, d.lineOf(path, d.pos.Line))
		if err := manifestValue(k, m[k], pol); err != nil {
			d.fail(line, "%s.%s: %v", path, k, err)
		}
	}
}

// manifestValue checks one key and value of a workload's manifests.
func manifestValue(k, v string, pol Policy) error {
	switch {
	case !manifestKey.MatchString(k):
		return fmt.Errorf("invalid key %q: use letters, digits and _ only", k)
	case len(v) > maxManifestValue:
		return fmt.Errorf("value is %d characters long, at most %d are allowed", len(v), maxManifestValue)
	case !safeValue.MatchString(v) || strings.HasSuffix(v, ":"):
		return fmt.Errorf("invalid value %q: only letters, digits and . _ / : @ + = ~ - are allowed, starting with a letter, digit, . _ or / and not ending with :", v)
	}
	switch k {
	case "repo":
		return CheckRepoURL(v, pol.ManifestHosts)
	case "branch":
		return CheckBranch(v)
	case "path":
		return CheckRelativePath(v)
	}
	return nil
}

// CheckRepoURL accepts https://HOST/OWNER/REPO(.git) on one of hosts (any host when empty).
func CheckRepoURL(v string, hosts []string) error {
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("repository %q is not a URL of the form https://HOST/OWNER/REPO", v)
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 2 || !repoPart.MatchString(parts[0]) || !repoPart.MatchString(parts[1]) ||
		strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[1], ".") {
		return fmt.Errorf("repository %q is not a URL of the form https://HOST/OWNER/REPO", v)
	}
	if len(hosts) == 0 {
		return nil
	}
	for _, h := range hosts {
		if strings.EqualFold(u.Host, h) {
			return nil
		}
	}
	return fmt.Errorf("repository %q is not on an allowed host (%s)", v, strings.Join(hosts, ", "))
}

// CheckBranch accepts a branch name that git accepts (git check-ref-format) and that is
// made of letters, digits and . _ / + -.
func CheckBranch(v string) error {
	bad := v == "" || v == "@" || !branchValue.MatchString(v) ||
		strings.Contains(v, "..") || strings.Contains(v, "//") || strings.HasPrefix(v, "/") ||
		strings.HasSuffix(v, "/") || strings.HasSuffix(v, ".") || strings.HasPrefix(v, "-")
	for _, seg := range strings.Split(v, "/") {
		bad = bad || strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock")
	}
	if bad {
		return fmt.Errorf("invalid branch name %q", v)
	}
	return nil
}

// CheckRelativePath accepts a clean path inside a repository: segments of letters, digits and
// . _ -, optionally starting with ./, never .. nor absolute.
func CheckRelativePath(v string) error {
	rest := strings.TrimPrefix(v, "./")
	if rest == "" || v == "." {
		return nil
	}
	if !pathValue.MatchString(rest) {
		return fmt.Errorf("invalid path %q: use letters, digits and . _ - / only", v)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(rest, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("invalid path %q: it must be a clean relative path (no //, . or .. segments)", v)
		}
	}
	return nil
}
