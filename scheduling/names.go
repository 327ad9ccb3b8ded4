package scheduling

import "slices"

// nameKey is a name a workload produces: its own (a Workload name) or a deployment target's.
type nameKey struct {
	target bool
	name   string
}

// targetNames returns the names of w's deployment targets, sorted, each once: computed once
// for the workload c was made for, as they depend only on its name and spec (nil c: each time).
func (c *targetChecks) targetNames(w *Workload) []string {
	if c == nil {
		return sortedTargetNames(w)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil {
		c.names = sortedTargetNames(w)
	}
	return c.names
}

// sortedTargetNames returns the names of w's deployment targets, sorted, each once (never nil).
func sortedTargetNames(w *Workload) []string {
	names := make([]string, len(w.Spec.DeploymentTargets))
	for i, t := range w.Spec.DeploymentTargets {
		names[i] = TargetName(w.Name, t.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// sharedNames returns the names that more than one of the workloads produce, each with its
// producers in the order of ws (a workload once per name). Each workload's target names come
// from its checks when it has some. The index, when there is one, is brought to ws: when it
// finds no name produced twice, there is nothing to look for.
func sharedNames(ws []*Workload, checks map[*Workload]*targetChecks, idx *nameIndex) map[nameKey][]nameProducer {
	if idx.noneShared(ws, checks) {
		return nil
	}
	names := make([][]string, len(ws))
	n := len(ws)
	for i, w := range ws {
		names[i] = checks[w].targetNames(w)
		n += len(names[i])
	}
	// The first producer of each name, by kind of name: maps keyed by strings hash faster
	// than by a struct.
	firstTarget, firstWorkload := make(map[string]*Workload, n-len(ws)), make(map[string]*Workload, len(ws))
	var shared map[nameKey][]nameProducer
	note := func(k nameKey, w *Workload) {
		first := firstWorkload
		if k.target {
			first = firstTarget
		}
		p, ok := first[k.name]
		if !ok {
			first[k.name] = w
			return
		}
		if shared == nil {
			shared = map[nameKey][]nameProducer{}
		}
		if shared[k] == nil {
			shared[k] = []nameProducer{producerOf(p, k)}
		}
		shared[k] = append(shared[k], producerOf(w, k))
	}
	for i, w := range ws {
		for _, name := range names[i] {
			note(nameKey{target: true, name: name}, w)
		}
		note(nameKey{name: w.Name}, w)
	}
	return shared
}

// producerOf is w as the producer of the name k.
func producerOf(w *Workload, k nameKey) nameProducer {
	if k.target {
		return nameProducer{w: w, target: k.name}
	}
	return nameProducer{w: w}
}

// registrationsOf returns the distinct registrations of a name's producers.
func registrationsOf(ps []nameProducer) map[*WorkloadRegistration]bool {
	regs := map[*WorkloadRegistration]bool{}
	for _, p := range ps {
		regs[p.w.Registration] = true
	}
	return regs
}
