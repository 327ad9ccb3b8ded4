package scheduling

// nameIndex counts the names the workloads of a load produce — their own and their deployment
// targets' — kept by a parse cache from one load to the next, so that telling whether any name
// is produced twice costs the workloads that changed, not all of them. Workloads are told
// apart by their checks (one per workload as parsed, shared by its copies), which decide the
// names they produce.
type nameIndex struct {
	targets, workloads map[string]int // how many workloads produce each name
	shared             int            // names produced more than once
	counted            map[*targetChecks]*countedWorkload
}

// countedWorkload is a workload as parsed whose names an index counts, and how many of the
// load's workloads are copies of it.
type countedWorkload struct {
	name    string
	targets []string
	times   int
}

func newNameIndex() *nameIndex {
	return &nameIndex{targets: map[string]int{}, workloads: map[string]int{}, counted: map[*targetChecks]*countedWorkload{}}
}

// follow brings the index to the names ws produce, counting only the workloads added or
// removed since it was last brought to a list, and reports whether it could: every workload
// has checks (nil checks: none).
func (x *nameIndex) follow(ws []*Workload, checks map[*Workload]*targetChecks) bool {
	now := make(map[*targetChecks]int, len(ws))
	for _, w := range ws {
		c := checks[w]
		if c == nil {
			return false
		}
		now[c]++
	}
	for c, cw := range x.counted {
		for ; cw.times > now[c]; cw.times-- {
			x.count(cw, -1)
		}
		if cw.times == 0 {
			delete(x.counted, c)
		}
	}
	for _, w := range ws {
		c := checks[w]
		cw := x.counted[c]
		if cw == nil {
			cw = &countedWorkload{name: w.Name, targets: c.targetNames(w)}
			x.counted[c] = cw
		}
		if cw.times < now[c] {
			cw.times++
			x.count(cw, 1)
		}
	}
	return true
}

// count adds by (1 or -1) to the count of each name cw produces.
func (x *nameIndex) count(cw *countedWorkload, by int) {
	x.add(x.workloads, cw.name, by)
	for _, t := range cw.targets {
		x.add(x.targets, t, by)
	}
}

func (x *nameIndex) add(counts map[string]int, name string, by int) {
	n := counts[name] + by
	switch {
	case by > 0 && n == 2:
		x.shared++
	case by < 0 && n == 1:
		x.shared--
	}
	if n == 0 {
		delete(counts, name)
		return
	}
	counts[name] = n
}

// noneShared tells whether the index, brought to ws, finds that no name is produced twice
// (false when it cannot tell: nil index, or a workload without checks).
func (x *nameIndex) noneShared(ws []*Workload, checks map[*Workload]*targetChecks) bool {
	return x != nil && x.follow(ws, checks) && x.shared == 0
}

// takeNames hands the index of the last load made with the cache to the next one (a new one
// when there is none, or another load has it).
func (c *ParseCache) takeNames() *nameIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.names
	c.names = nil
	if x == nil {
		x = newNameIndex()
	}
	return x
}
