package githubsim

import (
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The builders below run with rp.mu held, so payloads show the state at
// the moment of the change.

const maxPushCommits = 2048

// pushEvent builds a push delivery for a ref that moved from before to after.
func (s *Server) pushEvent(rp *repo, ref string, before, after plumbing.Hash, pusher string) *hookEvent {
	t := s.envelope("push.json", rp, pusher)
	created, deleted := before.IsZero(), after.IsZero()
	forced := false
	if !created && !deleted {
		ff, err := rp.isAncestor(before, after)
		forced = err == nil && !ff
	}
	t["ref"], t["before"], t["after"] = ref, before.String(), after.String()
	t["created"], t["deleted"], t["forced"], t["base_ref"] = created, deleted, forced, nil
	t["compare"] = s.base() + "/" + rp.fullName() + "/compare/" + shortSHA12(before.String()) + "..." + shortSHA12(after.String())
	name, email := s.gitIdentity(pusher)
	t["pusher"] = map[string]any{"name": name, "email": email}
	commits := []map[string]any{}
	t["head_commit"] = nil
	if !deleted {
		for _, c := range s.pushedCommits(rp, ref, before, after) {
			commits = append(commits, s.pushCommit(rp, c))
		}
		if hc, err := rp.commitObj(after); err == nil {
			t["head_commit"] = s.pushCommit(rp, hc)
		}
	}
	t["commits"] = commits
	return newEvent("push", t)
}

// pushedCommits lists the commits a push brings: since before, or for a
// new ref those not on any other branch.
func (s *Server) pushedCommits(rp *repo, ref string, before, after plumbing.Hash) []*object.Commit {
	exclude := []plumbing.Hash{before}
	if before.IsZero() {
		refs, _ := rp.refs()
		for name, h := range refs {
			if name != ref && strings.HasPrefix(name, "refs/heads/") {
				exclude = append(exclude, h)
			}
		}
	}
	seen, err := rp.reachable(exclude...)
	if err != nil {
		return nil
	}
	all, err := rp.commitsBetween(plumbing.ZeroHash, after)
	if err != nil {
		return nil
	}
	var out []*object.Commit
	for _, c := range all {
		if !seen[c.Hash] {
			out = append(out, c)
		}
	}
	if len(out) > maxPushCommits {
		out = out[len(out)-maxPushCommits:]
	}
	return out
}

func (s *Server) pushCommit(rp *repo, c *object.Commit) map[string]any {
	added, removed, modified := rp.changedPaths(c)
	return map[string]any{
		"id": c.Hash.String(), "tree_id": c.TreeHash.String(), "distinct": true,
		"message": c.Message, "timestamp": c.Committer.When.Format(time.RFC3339),
		"url":    s.htmlCommitURL(rp, c.Hash.String()),
		"author": gitPerson(c.Author), "committer": gitPerson(c.Committer),
		"added": added, "removed": removed, "modified": modified,
	}
}

func gitPerson(sig object.Signature) map[string]any {
	m := map[string]any{"name": sig.Name, "email": sig.Email}
	if u := noreplyEmail.FindStringSubmatch(sig.Email); u != nil {
		m["username"] = u[1]
	}
	return m
}

// changedPaths compares a commit with its first parent, through the same diffs as pull
// requests (a large one is derived from the previous, so a push's cost follows its change); a
// rename is a removal and an addition, as in GitHub's push payloads.
func (rp *repo) changedPaths(c *object.Commit) (added, removed, modified []string) {
	added, removed, modified = []string{}, []string{}, []string{}
	parentTree := plumbing.ZeroHash
	if len(c.ParentHashes) > 0 {
		if p, err := rp.commitObj(c.ParentHashes[0]); err == nil {
			parentTree = p.TreeHash
		}
	}
	diffs, err := rp.diffTrees(parentTree, c.TreeHash)
	if err != nil {
		return
	}
	for _, d := range diffs {
		switch d.status {
		case "added":
			added = append(added, d.path)
		case "removed":
			removed = append(removed, d.path)
		case "renamed":
			removed, added = append(removed, d.previous), append(added, d.path)
		default:
			modified = append(modified, d.path)
		}
	}
	sortStrings(added, removed, modified)
	return
}

// pullEvent builds a pull_request delivery; extra sets top-level keys
// such as before/after or changes.
func (s *Server) pullEvent(rp *repo, pr *pullRequest, action, sender string, extra map[string]any) *hookEvent {
	t := s.envelope(pullTemplate(action, pr.merged), rp, sender)
	m, err := s.pullMap(rp, pr, false)
	if err != nil {
		return nil
	}
	if err := s.addPullCounters(rp, pr, m, false); err != nil {
		return nil
	}
	delete(t, "before")
	delete(t, "after")
	overlay(t, "pull_request", m)
	t["action"], t["number"] = action, pr.number
	for k, v := range extra {
		t[k] = v
	}
	return newEvent("pull_request", t)
}

// checkRunEvent builds a check_run delivery; identifier is set for requested_action.
func (s *Server) checkRunEvent(rp *repo, cr *checkRun, action, sender, identifier string) *hookEvent {
	t := s.envelope("check_run."+action+".json", rp, sender)
	m := s.checkRunMap(rp, cr)
	m["check_suite"] = s.checkSuiteMap(rp, cr)
	overlay(t, "check_run", m)
	t["action"] = action
	if identifier != "" {
		t["requested_action"] = map[string]any{"identifier": identifier}
	}
	return newEvent("check_run", t)
}

func (s *Server) checkSuiteMap(rp *repo, cr *checkRun) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	return map[string]any{
		"id": cr.suiteID, "node_id": nodeID("CheckSuite", cr.suiteID), "head_branch": nullable(rp.branchAt(cr.headSHA)),
		"head_sha": cr.headSHA, "status": cr.status, "conclusion": nullable(cr.conclusion),
		"url": api + "/check-suites/" + itoa64(cr.suiteID), "before": nil, "after": cr.headSHA,
		"pull_requests": s.minimalPulls(rp, cr.headSHA), "app": s.appMap(),
		"created_at": tsOrNil(cr.startedAt), "updated_at": tsOrNil(s.now()),
	}
}

// branchAt returns a branch whose tip is sha (the default branch first).
func (rp *repo) branchAt(sha string) string {
	if h, ok := rp.branchHash(rp.defaultBranch); ok && h.String() == sha {
		return rp.defaultBranch
	}
	for _, b := range rp.branchesAt(sha) {
		return b
	}
	return ""
}

func (rp *repo) branchesAt(sha string) []string {
	refs, err := rp.refs()
	if err != nil {
		return nil
	}
	var out []string
	for name, h := range refs {
		if b, ok := strings.CutPrefix(name, "refs/heads/"); ok && h.String() == sha {
			out = append(out, b)
		}
	}
	sortStrings(out)
	return out
}

// statusEvent builds a status delivery.
func (s *Server) statusEvent(rp *repo, st *commitStatus, sender string) *hookEvent {
	t := s.envelope("status.json", rp, sender)
	sm := s.statusMap(rp, st)
	for _, k := range []string{"id", "context", "description", "state", "target_url", "created_at", "updated_at", "avatar_url"} {
		t[k] = sm[k]
	}
	t["sha"], t["name"] = st.sha, rp.fullName()
	if c, err := rp.commitObj(plumbing.NewHash(st.sha)); err == nil {
		t["commit"] = s.commitMap(rp, c)
	}
	branches := []map[string]any{}
	for _, b := range rp.branchesAt(st.sha) {
		branches = append(branches, map[string]any{
			"name": b, "protected": false,
			"commit": map[string]any{"sha": st.sha, "url": s.base() + "/api/v3/repos/" + rp.fullName() + "/commits/" + st.sha},
		})
	}
	t["branches"] = branches
	return newEvent("status", t)
}

// dispatchEvent builds a repository_dispatch delivery.
func (s *Server) dispatchEvent(rp *repo, eventType string, payload map[string]any, sender string) *hookEvent {
	t := map[string]any{}
	t["repository"] = s.repoMap(rp)
	t["sender"] = s.userMap(sender)
	t["installation"] = map[string]any{"id": rp.installID, "node_id": nodeID("Installation", rp.installID)}
	if s.userType(rp.owner) == "Organization" {
		t["organization"] = s.orgMap(rp.owner)
	}
	t["action"], t["branch"], t["client_payload"] = eventType, rp.defaultBranch, payload
	return newEvent("repository_dispatch", t)
}
