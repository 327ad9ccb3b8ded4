package scheduling

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/window"
)

// Promotion defaults.
const (
	DefaultApproval = "automatic"
	DefaultTimeout  = 30 * time.Minute
)

// DefaultStatusContexts match the commit statuses Flux's notification-controller posts.
func DefaultStatusContexts() []string { return []string{"kustomization/*"} }

// Stage is an environment's place in the promotion chain, with its settings parsed.
type Stage struct {
	Env         *Environment
	After       string
	Manual      bool
	SoakTime    time.Duration
	Timeout     time.Duration
	Contexts    []string
	MinClusters int
	Gate        Gate // the fractional gate over the clusters registered in the hub
	// Windows are the environment's promotion windows, then the deny windows of the Freezes
	// declared on main that select it.
	Windows []window.Window
	// Approvers are the users and teams (org/slug) who may approve a manual promotion (none:
	// every writer); Required is how many distinct ones must.
	Approvers []string
	Required  int
}

// Chain is the promotion graph of the environments declared on main.
type Chain struct {
	Stages map[string]*Stage // environments with spec.promotion, by name
}

// First returns the environments main is promoted into directly, sorted.
func (c *Chain) First() []*Stage {
	return c.filter(func(s *Stage) bool { return s.After == "" })
}

// Next returns the environments promoted from env, sorted.
func (c *Chain) Next(env string) []*Stage {
	return c.filter(func(s *Stage) bool { return s.After == env && env != "" })
}

func (c *Chain) filter(keep func(*Stage) bool) []*Stage {
	var out []*Stage
	for _, s := range c.Stages {
		if keep(s) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Env.Name < out[j].Env.Name })
	return out
}

// MatchesContext reports whether a commit-status context counts as a cluster of this stage.
// In the patterns `*` matches any text, slashes included, and `?` one character.
func (s *Stage) MatchesContext(context string) bool {
	for _, p := range s.Contexts {
		if globRegexp(p).MatchString(context) {
			return true
		}
	}
	return false
}

func globRegexp(pattern string) *regexp.Regexp {
	q := regexp.QuoteMeta(pattern)
	q = strings.ReplaceAll(strings.ReplaceAll(q, `\*`, ".*"), `\?`, ".")
	return regexp.MustCompile("^" + q + "$")
}

// PromotionChain validates the environments' spec.promotion and builds the chain: unknown
// upstreams, cycles and bad durations are errors at their line; such environments are left out.
func PromotionChain(envs []*Environment) (*Chain, Errors) {
	var errs Errors
	c := &Chain{Stages: map[string]*Stage{}}
	for _, e := range envs {
		if e.Spec.Promotion == nil {
			continue
		}
		if s, ok := parseStage(e, &errs); ok {
			c.Stages[e.Name] = s
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Stages)) {
		s := c.Stages[name]
		if s.After != "" && c.Stages[s.After] == nil {
			errs.Add(s.Env.At("spec.promotion.after"), s.Env.Ref(), "spec.promotion.after: environment %q does not exist or has no spec.promotion", s.After)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Stages)) {
		if cycle := c.cycleFrom(name); cycle != "" {
			s := c.Stages[name]
			errs.Add(s.Env.At("spec.promotion.after"), s.Env.Ref(), "spec.promotion.after: promotion cycle %s", cycle)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Stages)) { // drop what cannot be reached from a first stage
		if s := c.Stages[name]; s.After != "" && (c.Stages[s.After] == nil || c.cycleFrom(name) != "") {
			delete(c.Stages, name)
		}
	}
	return c, errs.Sorted()
}

// cycleFrom follows `after` from name and describes the cycle it runs into, if any.
func (c *Chain) cycleFrom(name string) string {
	seen := map[string]bool{}
	trail := []string{}
	for cur := name; cur != ""; {
		if seen[cur] {
			return fmt.Sprintf("%v", append(trail, cur))
		}
		seen[cur] = true
		trail = append(trail, cur)
		s := c.Stages[cur]
		if s == nil {
			return ""
		}
		cur = s.After
	}
	return ""
}

func parseStage(e *Environment, errs *Errors) (*Stage, bool) {
	p := e.Spec.Promotion
	s := &Stage{Env: e, After: p.After, Manual: p.Approval == "manual", Timeout: DefaultTimeout, Contexts: DefaultStatusContexts(),
		Gate: DefaultGate()}
	ok := true
	parse := func(field, value string, min time.Duration, into *time.Duration) {
		if value == "" {
			return
		}
		d, err := time.ParseDuration(value)
		if err != nil || d < min {
			errs.Add(e.At("spec.promotion."+field), e.Ref(), "spec.promotion.%s: %q is not a duration such as 30s, 10m or 1h", field, value)
			ok = false
			return
		}
		*into = d
	}
	parse("soakTime", p.SoakTime, 0, &s.SoakTime)
	parse("timeout", p.Timeout, time.Second, &s.Timeout)
	if c := p.Compliance; c != nil {
		if len(c.Contexts) > 0 {
			s.Contexts = c.Contexts
		}
		for i, pat := range s.Contexts {
			if pat == "" {
				errs.Add(e.At(fmt.Sprintf("spec.promotion.compliance.contexts[%d]", i)), e.Ref(), "spec.promotion.compliance.contexts[%d]: empty pattern", i)
				ok = false
			}
		}
		if c.MinClusters < 0 {
			errs.Add(e.At("spec.promotion.compliance.minClusters"), e.Ref(), "spec.promotion.compliance.minClusters: must not be negative")
			ok = false
		}
		s.MinClusters = c.MinClusters
		if !parseGates(e, c, &s.Gate, errs) {
			ok = false
		}
	}
	if !parseApprovers(e, s, errs) {
		ok = false
	}
	windows, good := parseWindows(e, errs)
	s.Windows, ok = windows, ok && good
	if p.After == e.Name {
		errs.Add(e.At("spec.promotion.after"), e.Ref(), "spec.promotion.after: an environment cannot follow itself")
		ok = false
	}
	return s, ok
}
