package scheduling

// PolicyMatches is every policy of a snapshot evaluated against the snapshot's cluster types
// and deployment targets: what Reschedule needs of the new snapshot alone. Made ahead, on
// another goroutine (MatchPolicies), it takes that work out of the way of Diff and Reschedule.
// It is not modified after it is made.
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
}

// WithPolicyMatches gives Reschedule the policies of the new snapshot already evaluated; it
// evaluates them itself when m is nil or was made of another snapshot.
func WithPolicyMatches(m *PolicyMatches) RescheduleOption {
	return func(o *rescheduleOptions) { o.matches = m }
}

// matchesOf returns the evaluated policies of next: those of the options, when made of next.
func matchesOf(next *Snapshot, opts []RescheduleOption) []*policyMatch {
	var o rescheduleOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.matches != nil && o.matches.of == next {
		return o.matches.list
	}
	return matchPolicies(next)
}
