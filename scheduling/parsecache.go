package scheduling

import (
	"maps"
	"slices"
	"sync"
)

// FileHasher is implemented by a file system that knows a content address of each of its files
// (a git tree knows each file's blob hash). Loading with a ParseCache parses again only the
// files whose address it has not parsed before.
type FileHasher interface {
	// FileHash returns the content address of the file at name, and whether it is known.
	FileHash(name string) (string, bool)
}

// ParseCache keeps what loading parsed from each source file, keyed by the path the file is
// shown at and its content address (FileHasher), so that the next load of the same sources
// parses only the files whose content changed. A hit is always correct: the same path and the
// same content parse to the same objects and errors. It holds the files of the last load made
// with it and nothing else, so its size follows the sources (within their limits: Policy's
// MaxSourceBytes per source); one per environment. The zero value is not usable: see
// NewParseCache. It is safe for concurrent use.
type ParseCache struct {
	mu      sync.Mutex
	entries map[string]*parsedFile
	sources map[sourceKey][]*fileToParse // what the last load found of its sources (SourceIdentifier)
	misses  int                          // files the last load parsed
	// workloads is how many workloads the last load copied from the cache.
	workloads int
	names     *nameIndex // the names the last load's workloads produce (nil: not counted)
}

// NewParseCache returns an empty cache.
func NewParseCache() *ParseCache { return &ParseCache{entries: map[string]*parsedFile{}} }

// Len is the number of files the cache holds.
func (c *ParseCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Misses is the number of files the last load made with the cache parsed: those it did not hold.
func (c *ParseCache) Misses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.misses
}

// parsedFile is what parsing one file found. It is never handed out: loading takes a copy.
type parsedFile struct {
	objs objects
	errs Errors
	// checks keeps, for each of its workloads, what checking its deployment targets found,
	// shared by the copies loads take.
	checks []*targetChecks
}

// targetChecks is what validateTargets found of a workload as parsed: the same for every copy
// of it, as it depends only on the workload's spec, name, position and field lines, and on the
// policy's manifest hosts.
type targetChecks struct {
	mu     sync.Mutex
	done   bool
	hosts  []string
	errs   Errors
	bad    map[int]bool
	anyBad bool // some target of bad is
	// made keeps, for each deployment target, the DeploymentTarget last derived from a copy
	// (nil: not yet), shared by the next snapshots while the copies' labels and workspace stay
	// those they were derived with (labels, workspace): nothing changes a DeploymentTarget
	// once loading has made it.
	made      []madeTarget
	labels    map[string]string
	workspace string
	names     []string // the names of the deployment targets, sorted, each once (nil: not yet)
}

// madeTarget is a DeploymentTarget derived from a copy of a parsed workload, and where the
// target is written.
type madeTarget struct {
	target *DeploymentTarget
	pos    targetPos
	found  bool // pos is known
}

// targets appends to out the DeploymentTargets of the targets of w in environment env that
// are not bad, w being a copy of the workload c was made for: those made last time are shared
// when w's labels and workspace are the same, compared once for the workload (nil c: made each
// time).
func (c *targetChecks) targets(w *Workload, env string, bad map[int]bool, out []*DeploymentTarget) []*DeploymentTarget {
	if c == nil {
		for i, t := range w.Spec.DeploymentTargets {
			if !bad[i] && t.Environment == env {
				out = append(out, workloadTarget(w, i, t, targetPosOf(w, i)))
			}
		}
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made == nil {
		c.made = make([]madeTarget, len(w.Spec.DeploymentTargets))
	}
	if ws := workspaceOf(w); c.labels == nil || c.workspace != ws || !maps.Equal(c.labels, w.Labels) {
		for i := range c.made {
			c.made[i].target = nil
		}
		c.labels, c.workspace = maps.Clone(w.Labels), ws
	}
	for i, t := range w.Spec.DeploymentTargets {
		if bad[i] || t.Environment != env {
			continue
		}
		m := &c.made[i]
		if m.target == nil {
			if !m.found {
				m.pos, m.found = targetPosOf(w, i), true
			}
			m.target = workloadTarget(w, i, t, m.pos)
		}
		out = append(out, m.target)
	}
	return out
}

// validate returns validateTargets of w, a copy of the workload c was made for, and whether
// any target is bad, adding copies of its errors to errs: found once per policy's manifest
// hosts (nil c: found each time).
func (c *targetChecks) validate(w *Workload, errs *Errors, pol Policy) (map[int]bool, bool) {
	if c == nil {
		bad := validateTargets(w, errs, pol)
		return bad, anyTrue(bad)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done || !slices.Equal(c.hosts, pol.ManifestHosts) {
		var found Errors
		c.bad = validateTargets(w, &found, pol)
		c.errs, c.hosts, c.done, c.anyBad = found, slices.Clone(pol.ManifestHosts), true, anyTrue(c.bad)
	}
	copyErrors(c.errs, errs)
	return c.bad, c.anyBad
}

// anyTrue tells whether some value of m is true.
func anyTrue[K comparable](m map[K]bool) bool {
	for _, v := range m {
		if v {
			return true
		}
	}
	return false
}

// copyErrors adds a copy of each error of from to errs.
func copyErrors(from Errors, errs *Errors) {
	for _, e := range from {
		c := *e
		*errs = append(*errs, &c)
	}
}

// get returns the file parsed under key, if any (none without a cache).
func (c *ParseCache) get(key string) *parsedFile {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

// keep replaces the cache's files and sources by those of one load, which parsed misses of
// the files, copied workloads of them and counted their names: what is no longer read is
// forgotten.
func (c *ParseCache) keep(files map[string]*parsedFile, sources map[sourceKey][]*fileToParse, misses, workloads int, names *nameIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.sources, c.misses, c.workloads, c.names = files, sources, misses, workloads, names
}

// sizes returns how many files, sources and workloads the last load kept, which the next
// load, of about the same sources, makes room for.
func (c *ParseCache) sizes() (files, sources, workloads int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), len(c.sources), c.workloads
}

// cacheKey is the key of a file shown at display with content address hash.
func cacheKey(display, hash string) string { return display + "\x00" + hash }

// addTo adds a copy of the file's objects and errors to a load's, so that what the load
// changes afterwards (a workload's labels and registration) never reaches the cache; checks
// gets the checks of each copied workload.
func (p *parsedFile) addTo(objs *objects, errs *Errors, checks map[*Workload]*targetChecks) {
	start := len(objs.workloads)
	objs.addCopies(&p.objs)
	for i, w := range objs.workloads[start:] {
		if i < len(p.checks) {
			checks[w] = p.checks[i]
		}
	}
	copyErrors(p.errs, errs)
}

// addCopies adds a copy of every object of o, with its own labels; specs and field lines are
// shared, as nothing changes them after decoding.
func (o *objects) addCopies(from *objects) {
	o.environments = appendCopies(o.environments, from.environments)
	o.baseRepos = appendCopies(o.baseRepos, from.baseRepos)
	o.gitopsRepos = appendCopies(o.gitopsRepos, from.gitopsRepos)
	o.registrations = appendCopies(o.registrations, from.registrations)
	o.workloads = appendCopies(o.workloads, from.workloads)
	o.targets = appendCopies(o.targets, from.targets)
	o.clusterTypes = appendCopies(o.clusterTypes, from.clusterTypes)
	o.templates = appendCopies(o.templates, from.templates)
	o.policies = appendCopies(o.policies, from.policies)
	o.schemas = appendCopies(o.schemas, from.schemas)
	o.configMaps = appendCopies(o.configMaps, from.configMaps)
	o.freezes = appendCopies(o.freezes, from.freezes)
	o.broken = appendCopies(o.broken, from.broken)
	o.unusableTemplates = appendCopies(o.unusableTemplates, from.unusableTemplates)
	o.foreign = appendCopies(o.foreign, from.foreign)
	o.unreadable = o.unreadable || from.unreadable
}

// appendCopies appends a copy of each object of a list to out (see objects.addCopies).
func appendCopies[T any, P interface {
	*T
	named
}](out, list []P) []P {
	for _, x := range list {
		c := P(new(T))
		*c = *x
		o := c.obj()
		o.Labels = maps.Clone(o.Labels) // field lines are shared: nothing changes them after decoding
		out = append(out, c)
	}
	return out
}
