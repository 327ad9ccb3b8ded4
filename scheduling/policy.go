package scheduling

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
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

// Bounds of what a workload repository gives a deployment target.
const (
	maxManifestValue = 512       // bytes of one manifests value
	maxManifestKeys  = 16        // keys of manifests
	maxSchemaBytes   = 64 << 10  // bytes of one configSchemas document
	maxSchemas       = 16        // configSchemas documents of a target, the Workload's included
	maxSchemasBytes  = 256 << 10 // bytes of a target's configSchemas documents together
)

var (
	manifestKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)
	repoPart    = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// validateManifests checks the manifests of a deployment target that a workload repository
// gives. Values are free text, as in the reference: what keeps them from changing the output's
// structure is how they are placed (render checks that each becomes exactly the scalar its
// template puts it in). Only the keys, the sizes and the values with a meaning of their own
// (repo, branch, path) are checked here.
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
		return fmt.Errorf("invalid key %q: use letters, digits and _ only, starting with a letter", k)
	case len(v) > maxManifestValue:
		return fmt.Errorf("value is %d bytes long, at most %d are allowed", len(v), maxManifestValue)
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

// validateSchemas bounds the JSON-schema documents a workload gives a target (its own and the
// Workload's); render compiles and applies them as the reference does.
func validateSchemas(d *fieldDecoder, docs []string, path string, line int) {
	total := 0
	for i, doc := range docs {
		total += len(doc)
		if len(doc) > maxSchemaBytes {
			d.fail(d.lineOf(path, line), "%s[%d]: the schema is %d bytes long, at most %d are allowed", path, i, len(doc), maxSchemaBytes)
		}
	}
	switch {
	case len(docs) > maxSchemas:
		d.fail(d.lineOf(path, line), "%s: %d schemas, at most %d are allowed (the Workload's included)", path, len(docs), maxSchemas)
	case total > maxSchemasBytes:
		d.fail(d.lineOf(path, line), "%s: the schemas are %d bytes long together, at most %d are allowed (the Workload's included)", path, total, maxSchemasBytes)
	}
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

// CheckBranch accepts a branch name that git accepts (git check-ref-format rules).
func CheckBranch(v string) error {
	if v == "" || plumbing.NewBranchReferenceName(v).Validate() != nil {
		return fmt.Errorf("invalid branch name %q", v)
	}
	return nil
}

// CheckRelativePath accepts a clean path inside a repository: optionally starting with ./,
// never absolute, without empty, . or .. segments, backslashes or control characters.
func CheckRelativePath(v string) error {
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return fmt.Errorf("invalid path %q: control characters and backslashes are not allowed", v)
	}
	rest := strings.TrimPrefix(v, "./")
	if rest == "" || v == "." {
		return nil
	}
	for _, seg := range strings.Split(strings.TrimSuffix(rest, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("invalid path %q: it must be a clean relative path (no //, . or .. segments)", v)
		}
	}
	return nil
}
