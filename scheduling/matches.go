package scheduling

// PolicyMatches is every policy of a snapshot evaluated against the snapshot's cluster types
// and deployment targets: what Reschedule needs of the new snapshot alone. Made ahead, on
// another goroutine (MatchPolicies, or MatchPoliciesSince from an earlier evaluation), it
// takes that work out of the way of Diff and Reschedule. It is not modified after it is made.
type PolicyMatches struct {
	of   *Snapshot
	list []*policyMatch
}

// MatchPolicies evaluates the policies of a snapshot (see PolicyMatches).
func MatchPolicies(snap *Snapshot) *PolicyMatches {
	return &PolicyMatches{of: snap, list: matchPolicies(snap)}
}

// RescheduleOption changes how Reschedule works, never what it returns.
type RescheduleOption func(*rescheduleOptions)

type rescheduleOptions struct {
	matches *PolicyMatches
	rows    []int // where each cluster type's row starts in the earlier schedule
}

// WithPolicyMatches gives Reschedule the policies of the new snapshot already evaluated; it
// evaluates them itself when m is nil or was made of another snapshot.
func WithPolicyMatches(m *PolicyMatches) RescheduleOption {
	return func(o *rescheduleOptions) { o.matches = m }
}

// WithEarlierRows gives Reschedule where the row of each cluster type of the earlier snapshot
// starts in the earlier schedule, as Rescheduled.Rows does: cluster type i of prev has
// earlier[rows[i]:rows[i+1]]. Reschedule finds the rows itself when rows do not fit prev and
// the earlier schedule.
func WithEarlierRows(rows []int) RescheduleOption {
	return func(o *rescheduleOptions) { o.rows = rows }
}

func newRescheduleOptions(opts []RescheduleOption) rescheduleOptions {
	var o rescheduleOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// matchesOf returns the evaluated policies of next: those of the options, when made of next.
func (o rescheduleOptions) matchesOf(next *Snapshot) []*policyMatch {
	if o.matches != nil && o.matches.of == next {
		return o.matches.list
	}
	return matchPolicies(next)
}
