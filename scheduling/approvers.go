package scheduling

import (
	"fmt"
	"regexp"
	"strings"
)

// A GitHub login: alphanumerics and single hyphens, not at either end, at most 39 characters;
// a team slug: lower-case alphanumerics, hyphens and underscores.
var (
	loginPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)
	slugPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,99}$`)
)

// MaxApprovers bounds the entries of spec.promotion.approvers.
const MaxApprovers = 100

// parseApprovers validates spec.promotion.approvers and required: logins or org/team slugs,
// only with approval manual, and a quorum that the named users can reach when no team is named.
func parseApprovers(e *Environment, s *Stage, errs *Errors) bool {
	p := e.Spec.Promotion
	ok := true
	fail := func(field, format string, args ...any) {
		errs.Add(e.At("spec.promotion."+field), e.Ref(), "spec.promotion."+field+": "+format, args...)
		ok = false
	}
	if !s.Manual && (len(p.Approvers) > 0 || p.Required != 0) {
		fail("approvers", "approvers and required need approval: manual")
		return false
	}
	if len(p.Approvers) > MaxApprovers {
		fail("approvers", "%d entries, more than %d", len(p.Approvers), MaxApprovers)
		return false
	}
	seen, users, teams := map[string]bool{}, 0, 0
	for i, a := range p.Approvers {
		field := fmt.Sprintf("approvers[%d]", i)
		org, slug, isTeam := strings.Cut(a, "/")
		switch {
		case isTeam && (!loginPattern.MatchString(org) || !slugPattern.MatchString(slug)):
			fail(field, "%q is not a team as org/team-slug", a)
		case !isTeam && !loginPattern.MatchString(a):
			fail(field, "%q is not a GitHub login", a)
		case seen[strings.ToLower(a)]:
			fail(field, "%q is named twice", a)
		case isTeam:
			teams++
		default:
			users++
		}
		seen[strings.ToLower(a)] = true
	}
	switch {
	case p.Required < 0:
		fail("required", "must be at least 1")
	case teams == 0 && users > 0 && p.Required > users:
		fail("required", "%d approvals cannot be reached by %d named users", p.Required, users)
	}
	s.Approvers, s.Required = p.Approvers, max(p.Required, 1)
	return ok
}
