package githubsim

import (
	"maps"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// pullMap builds a pull request object; full adds the counters and
// mergeability of the single-PR endpoints. The caller holds rp.mu.
func (s *Server) pullMap(rp *repo, pr *pullRequest, full bool) (map[string]any, error) {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	self := api + "/pulls/" + itoa(pr.number)
	issue := api + "/issues/" + itoa(pr.number)
	html := s.base() + "/" + rp.fullName() + "/pull/" + itoa(pr.number)
	statuses := api + "/statuses/" + pr.headSHA
	m := map[string]any{
		"url": self, "id": pr.id, "node_id": nodeID("PullRequest", pr.id), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issue,
		"commits_url": self + "/commits", "review_comments_url": self + "/comments",
		"review_comment_url": api + "/pulls/comments{/number}", "comments_url": issue + "/comments",
		"statuses_url": statuses, "number": pr.number, "state": pr.state, "locked": false,
		"title": pr.title, "user": s.userMap(pr.user), "body": nullable(pr.body),
		"labels": s.labelMaps(rp, pr.labels), "milestone": nil, "active_lock_reason": nil,
		"created_at": tsOrNil(pr.createdAt), "updated_at": tsOrNil(pr.updatedAt),
		"closed_at": tsOrNil(pr.closedAt), "merged_at": tsOrNil(pr.mergedAt),
		"merge_commit_sha": nullable(pr.mergeCommitSHA), "assignee": nil, "assignees": []any{},
		"requested_reviewers": []any{}, "requested_teams": []any{},
		"head": s.pullHead(rp, pr), "base": s.pullBranch(rp, pr.base, pr.baseSHA),
		"_links": map[string]any{
			"self": link(self), "html": link(html), "issue": link(issue), "comments": link(issue + "/comments"),
			"review_comments": link(self + "/comments"), "review_comment": link(api + "/pulls/comments{/number}"),
			"commits": link(self + "/commits"), "statuses": link(statuses),
		},
		"author_association": authorAssociation(rp, pr.user), "auto_merge": nil, "draft": pr.draft,
	}
	if !full {
		return m, nil
	}
	return m, s.addPullCounters(rp, pr, m, true)
}

// authorAssociation is how a user relates to a repository, as GitHub says it of an author:
// OWNER for the repository's owner, COLLABORATOR for a user given a permission on it, NONE
// otherwise. The caller holds rp.mu.
func authorAssociation(rp *repo, user string) string {
	switch role := rp.perms[strings.ToLower(user)]; {
	case strings.EqualFold(user, rp.owner):
		return "OWNER"
	case role != "" && role != "none":
		return "COLLABORATOR"
	}
	return "NONE"
}

func link(href string) map[string]any { return map[string]any{"href": href} }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) pullBranch(rp *repo, branch, sha string) map[string]any {
	return map[string]any{
		"label": rp.owner + ":" + branch, "ref": branch, "sha": sha,
		"user": s.userMap(rp.owner), "repo": s.repoMap(rp),
	}
}

// pullHead is the head of a pull request; a fork's is on a repository of the fork's owner,
// which the simulator does not serve: nothing can be fetched from it.
func (s *Server) pullHead(rp *repo, pr *pullRequest) map[string]any {
	m := s.pullBranch(rp, pr.head, pr.headSHA)
	if pr.fork == "" {
		return m
	}
	repo := maps.Clone(s.repoMap(rp))
	full := pr.fork + "/" + rp.name
	repo["full_name"], repo["fork"], repo["owner"] = full, true, s.userMap(pr.fork)
	repo["clone_url"], repo["html_url"] = s.base()+"/"+full+".git", s.base()+"/"+full
	m["label"], m["user"], m["repo"] = pr.fork+":"+pr.head, s.userMap(pr.fork), repo
	return m
}

// addPullCounters fills the counters of a full pull request and, with
// withMergeable, computes mergeability (webhooks leave it null, as GitHub does).
func (s *Server) addPullCounters(rp *repo, pr *pullRequest, m map[string]any, withMergeable bool) error {
	commits, err := rp.commitsBetween(plumbing.NewHash(pr.baseSHA), plumbing.NewHash(pr.headSHA))
	if err != nil {
		return err
	}
	diffs, err := s.pullDiff(rp, pr)
	if err != nil {
		return err
	}
	add, del := 0, 0
	for _, d := range diffs {
		add, del = add+d.additions, del+d.deletions
	}
	var mergeable any
	state := "unknown"
	if pr.state == "open" && withMergeable {
		ok := s.isMergeable(rp, pr)
		mergeable, state = ok, "clean"
		if !ok {
			state = "dirty"
		}
	}
	m["merged"], m["mergeable"], m["rebaseable"], m["mergeable_state"] = pr.merged, mergeable, mergeable, state
	m["merged_by"] = s.userMap(pr.mergedBy)
	m["comments"], m["review_comments"] = rp.commentCount(pr.number), 0
	m["maintainer_can_modify"], m["commits"] = pr.maintainerCanModify, len(commits)
	m["additions"], m["deletions"], m["changed_files"] = add, del, len(diffs)
	return nil
}
