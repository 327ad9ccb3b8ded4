package githubsim

// capped is a map of computed values that keeps at most max entries, dropping the oldest
// first: the simulator's diffs and patches can always be computed again, so what it keeps
// for speed is bounded, whatever the number of pushes it serves.
type capped[K comparable, V any] struct {
	max   int
	m     map[K]V
	order []K // keys, oldest first (a key put again keeps its place)
}

// newCapped returns an empty capped map of at most max entries.
func newCapped[K comparable, V any](max int) *capped[K, V] {
	return &capped[K, V]{max: max, m: map[K]V{}}
}

// get returns the value of k, if kept.
func (c *capped[K, V]) get(k K) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

// put keeps v as the value of k, dropping the oldest entries past the bound.
func (c *capped[K, V]) put(k K, v V) {
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
	}
	c.m[k] = v
	for len(c.m) > c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	if cap(c.order) > 4*c.max { // let the dropped keys' backing array go
		c.order = append([]K(nil), c.order...)
	}
}

// len is how many entries are kept.
func (c *capped[K, V]) len() int { return len(c.m) }
