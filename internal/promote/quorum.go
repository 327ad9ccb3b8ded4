package promote

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Approvals are kept on GitHub, in the summary of the "Promote to <env>" check run (a hidden
// line), so that restarts and replicas read the same ones: a click reads the check run as
// GitHub has it now.
var approvalsLine = regexp.MustCompile(`<!-- kalypso-approvals: ([A-Za-z0-9 -]*) -->`)

// approvalsOf reads the approvals recorded on an approval check run.
func approvalsOf(run *github.CheckRun) []string {
	m := approvalsLine.FindStringSubmatch(run.GetOutput().GetSummary())
	if m == nil {
		return nil
	}
	return strings.Fields(m[1])
}

// withApprovals appends the hidden record of the approvals to a summary.
func withApprovals(summary string, approved []string) string {
	if len(approved) == 0 {
		return summary
	}
	return summary + "\n\n<!-- kalypso-approvals: " + strings.Join(approved, " ") + " -->"
}

// gitHubBot is the committer GitHub records for commits made in its web interface (merges).
const gitHubBot = "web-flow"

// teamTTL is how long the members of a team are reused before they are read again.
const teamTTL = 5 * time.Minute

// teamCache keeps the members of teams read from GitHub, by "org/slug".
type teamCache struct {
	mu sync.Mutex
	m  map[string]teamEntry
}

type teamEntry struct {
	members []string
	read    time.Time
}

// members returns the members of a team, from the cache while it is fresh.
func (c *teamCache) members(ctx context.Context, gh ghport.GitHub, team string, now time.Time) ([]string, error) {
	key := strings.ToLower(team)
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Sub(e.read) < teamTTL && !now.Before(e.read) {
		return e.members, nil
	}
	org, slug, _ := strings.Cut(team, "/")
	members, err := gh.TeamMembers(ctx, org, slug)
	if err != nil {
		return nil, fmt.Errorf("members of team %s: %w", team, err)
	}
	c.mu.Lock()
	c.m[key] = teamEntry{members: members, read: now}
	c.mu.Unlock()
	return members, nil
}

// isApprover reports whether user is one of the stage's approvers (a named user or a member
// of a named team); every user is when it names none.
func (p *Promoter) isApprover(ctx context.Context, gh ghport.GitHub, s *scheduling.Stage, user string) (bool, error) {
	if len(s.Approvers) == 0 {
		return true, nil
	}
	for _, a := range s.Approvers {
		if !strings.Contains(a, "/") {
			if strings.EqualFold(a, user) {
				return true, nil
			}
			continue
		}
		members, err := p.teams.members(ctx, gh, a, p.now())
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(members, func(m string) bool { return strings.EqualFold(m, user) }) {
			return true, nil
		}
	}
	return false, nil
}

// authorsOf returns the users who made the promoted main commit: the GitHub users of its
// author and committer (GitHub's own committer of web merges left out). For a merge made on
// GitHub the author is who merged the pull request; for a squash merge, its author.
func authorsOf(ctx context.Context, gh ghport.GitHub, l Locator) ([]string, error) {
	users, err := gh.CommitUsers(ctx, l.ControlPlane, l.Commit)
	if err != nil {
		return nil, fmt.Errorf("users of main %s: %w", short(l.Commit), err)
	}
	return slices.DeleteFunc(users, func(u string) bool { return u == gitHubBot }), nil
}

// quorumRefusal says why a click by user does not count towards the quorum ("" when it does).
func (p *Promoter) quorumRefusal(ctx context.Context, gh ghport.GitHub, l Locator, s *scheduling.Stage, user string, approved []string) (string, error) {
	if slices.ContainsFunc(approved, func(a string) bool { return strings.EqualFold(a, user) }) {
		return fmt.Sprintf("@%s approved already; each approver counts once", user), nil
	}
	authors, err := authorsOf(ctx, gh, l)
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(authors, func(a string) bool { return strings.EqualFold(a, user) }) {
		return fmt.Sprintf("@%s made main %s and cannot approve its promotion (four eyes)", user, short(l.Commit)), nil
	}
	ok, err := p.isApprover(ctx, gh, s, user)
	if err != nil || ok {
		return "", err
	}
	return fmt.Sprintf("@%s is not one of the approvers (%s)", user, strings.Join(s.Approvers, ", ")), nil
}

// quorumSummary says who approved and who is awaited.
func quorumSummary(l Locator, s *scheduling.Stage, approved []string) string {
	who := "users with write permission"
	if len(s.Approvers) > 0 {
		who = strings.Join(s.Approvers, ", ")
	}
	approvedText := "nobody yet"
	if len(approved) > 0 {
		approvedText = "@" + strings.Join(approved, ", @")
	}
	return fmt.Sprintf("Promoting main %s to **%s** needs %d approval(s) from %s, not by the author of the commit.\n\n"+
		"- Approved by: %s\n- Awaited: %d more from %s",
		short(l.Commit), l.Env, s.Required, who, approvedText, max(s.Required-len(approved), 0), who)
}

// approvedBy is the reason a pin records for the approvers of a promotion.
func approvedBy(approved []string) string { return "approved by @" + strings.Join(approved, ", @") }
