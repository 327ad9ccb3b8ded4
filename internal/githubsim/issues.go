package githubsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// issueComment is a comment on a pull request's conversation.
type issueComment struct {
	id        int64
	number    int
	user      string
	body      string
	createdAt time.Time
	updatedAt time.Time
}

func (rp *repo) commentCount(number int) int {
	n := 0
	for _, c := range rp.comments {
		if c.number == number {
			n++
		}
	}
	return n
}

func (s *Server) commentMap(rp *repo, cm *issueComment) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	return map[string]any{
		"id": cm.id, "node_id": nodeID("IssueComment", cm.id),
		"url":      api + "/issues/comments/" + itoa64(cm.id),
		"html_url": s.base() + "/" + rp.fullName() + "/pull/" + itoa(cm.number) + "#issuecomment-" + itoa64(cm.id),
		"body":     cm.body, "user": s.userMap(cm.user), "issue_url": api + "/issues/" + itoa(cm.number),
		"created_at": tsOrNil(cm.createdAt), "updated_at": tsOrNil(cm.updatedAt), "author_association": "NONE",
	}
}

// issue resolves {issue_number} to a pull request (the only issues simulated).
func (c *call) issue() (*pullRequest, error) {
	n, err := c.intParam("issue_number")
	if err != nil {
		return nil, err
	}
	pr := c.repo.pull(int(n))
	if pr == nil {
		return nil, notFound()
	}
	return pr, nil
}

func (s *Server) createComment(c *call) (int, any, error) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.Body == nil {
		return 0, nil, validation("IssueComment", "body", "body is missing")
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	now := s.now()
	cm := &issueComment{id: s.nextID(), number: pr.number, user: c.actor, body: *in.Body, createdAt: now, updatedAt: now}
	rp.comments = append(rp.comments, cm)
	return http.StatusCreated, s.commentMap(rp, cm), nil
}

func (s *Server) listComments(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	out := []map[string]any{}
	for _, cm := range rp.comments {
		if cm.number == pr.number {
			out = append(out, s.commentMap(rp, cm))
		}
	}
	return http.StatusOK, paginate(c, out), nil
}

func (s *Server) updateComment(c *call) (int, any, error) {
	var in struct {
		Body string `json:"body"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	id, err := c.intParam("comment_id")
	if err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, cm := range rp.comments {
		if cm.id == id {
			if !strings.EqualFold(cm.user, c.actor) {
				return 0, nil, newError(http.StatusForbidden, "Resource not accessible by integration")
			}
			cm.body, cm.updatedAt = in.Body, s.now()
			return http.StatusOK, s.commentMap(rp, cm), nil
		}
	}
	return 0, nil, notFound()
}

// labelNames accepts ["a"], {"labels": ["a"]} and {"labels": [{"name": "a"}]}.
func labelNames(raw json.RawMessage) ([]string, error) {
	var names []string
	if err := json.Unmarshal(raw, &names); err == nil {
		return names, nil
	}
	var wrapped struct {
		Labels json.RawMessage `json:"labels"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil || wrapped.Labels == nil {
		return nil, validation("Label", "labels", "labels are missing")
	}
	if err := json.Unmarshal(wrapped.Labels, &names); err == nil {
		return names, nil
	}
	var objs []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(wrapped.Labels, &objs); err != nil {
		return nil, validation("Label", "labels", "labels are invalid")
	}
	for _, o := range objs {
		names = append(names, o.Name)
	}
	return names, nil
}

func (s *Server) addLabels(c *call) (int, any, error) {
	var raw json.RawMessage
	if err := c.decode(&raw); err != nil {
		return 0, nil, err
	}
	names, err := labelNames(raw)
	if err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	for _, n := range names {
		s.ensureLabel(rp, n)
		if !slices.Contains(pr.labels, n) {
			pr.labels = append(pr.labels, n)
		}
	}
	return http.StatusOK, s.labelMaps(rp, pr.labels), nil
}

func (s *Server) listLabels(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, paginate(c, s.labelMaps(rp, pr.labels)), nil
}

func (s *Server) removeLabel(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	name := c.params["name"]
	if !slices.Contains(pr.labels, name) {
		return 0, nil, notFoundMsg("Label does not exist")
	}
	var kept []string
	for _, l := range pr.labels {
		if l != name {
			kept = append(kept, l)
		}
	}
	pr.labels = kept
	return http.StatusOK, s.labelMaps(rp, pr.labels), nil
}

func (s *Server) ensureLabel(rp *repo, name string) *github.Label {
	if l, ok := rp.labels[name]; ok {
		return l
	}
	id := s.nextID()
	l := &github.Label{
		ID: ptr(id), NodeID: ptr(nodeID("Label", id)), Name: ptr(name), Color: ptr("ededed"), Default: ptr(false), Description: ptr(""),
		URL: ptr(s.base() + "/api/v3/repos/" + rp.fullName() + "/labels/" + url.PathEscape(name)),
	}
	rp.labels[name] = l
	return l
}

func (s *Server) labelMaps(rp *repo, names []string) []map[string]any {
	out := []map[string]any{}
	for _, n := range names {
		out = append(out, toMap(s.ensureLabel(rp, n)))
	}
	return out
}
