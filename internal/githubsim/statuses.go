package githubsim

import (
	"net/http"
	"slices"
	"time"
	"unicode/utf8"
)

// commitStatus is one commit status; it is guarded by its repo's mu.
type commitStatus struct {
	id          int64
	sha         string
	state       string
	context     string
	description string
	targetURL   string
	creator     string
	createdAt   time.Time
}

const (
	maxStatusDescription  = 140
	maxStatusesPerContext = 1000
)

var statusStates = []string{"error", "failure", "pending", "success"}

type statusInput struct {
	State       string `json:"state"`
	TargetURL   string `json:"target_url"`
	Description string `json:"description"`
	Context     string `json:"context"`
}

func (s *Server) createStatus(c *call) (int, any, error) {
	var in statusInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	st, err := s.addStatus(rp, c.params["sha"], in, c.actor)
	if err != nil {
		return 0, nil, err
	}
	c.emit(s.statusEvent(rp, st, c.actor))
	return http.StatusCreated, s.statusMap(rp, st), nil
}

// addStatus validates and records a status. The caller holds rp.mu.
func (s *Server) addStatus(rp *repo, sha string, in statusInput, creator string) (*commitStatus, error) {
	if !slices.Contains(statusStates, in.State) {
		return nil, validation("Status", "state", "state %q is not included in the list", in.State)
	}
	if utf8.RuneCountInString(in.Description) > maxStatusDescription {
		return nil, validation("Status", "description", "description is too long (maximum is %d characters)", maxStatusDescription)
	}
	cm, err := rp.resolve(sha)
	if err != nil || !fullSHA.MatchString(sha) {
		return nil, unprocessable("No commit found for SHA: %s", sha)
	}
	if in.Context == "" {
		in.Context = "default"
	}
	n := 0
	for _, st := range rp.statuses {
		if st.sha == cm.Hash.String() && st.context == in.Context {
			n++
		}
	}
	if n >= maxStatusesPerContext {
		return nil, validation("Status", "", "This SHA and context has reached the maximum number of statuses.")
	}
	st := &commitStatus{
		id: s.nextID(), sha: cm.Hash.String(), state: in.State, context: in.Context,
		description: in.Description, targetURL: in.TargetURL, creator: creator, createdAt: s.now(),
	}
	rp.statuses = append(rp.statuses, st)
	return st, nil
}

func (s *Server) statusMap(rp *repo, st *commitStatus) map[string]any {
	creator := s.userMap(st.creator)
	return map[string]any{
		"url":        s.base() + "/api/v3/repos/" + rp.fullName() + "/statuses/" + st.sha,
		"avatar_url": creator["avatar_url"], "id": st.id, "node_id": nodeID("StatusContext", st.id),
		"state": st.state, "description": nullable(st.description), "target_url": nullable(st.targetURL),
		"context": st.context, "created_at": tsOrNil(st.createdAt), "updated_at": tsOrNil(st.createdAt),
		"creator": creator,
	}
}

// statusesFor lists a commit's statuses, newest first.
func (rp *repo) statusesFor(sha string) []*commitStatus {
	var out []*commitStatus
	for i := len(rp.statuses) - 1; i >= 0; i-- {
		if rp.statuses[i].sha == sha {
			out = append(out, rp.statuses[i])
		}
	}
	return out
}

// latestStatuses keeps the newest status of each context, ordered by context.
func latestStatuses(all []*commitStatus) []*commitStatus {
	seen := map[string]bool{}
	var out []*commitStatus
	for _, st := range all {
		if !seen[st.context] {
			seen[st.context] = true
			out = append(out, st)
		}
	}
	sortBy(out, func(st *commitStatus) string { return st.context })
	return out
}

// combinedState is failure if any context failed or errored, pending if
// any is pending or none exist, else success.
func combinedState(latest []*commitStatus) string {
	if len(latest) == 0 {
		return "pending"
	}
	state := "success"
	for _, st := range latest {
		switch st.state {
		case "failure", "error":
			return "failure"
		case "pending":
			state = "pending"
		}
	}
	return state
}

func (s *Server) listStatuses(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cm, err := rp.resolve(c.params["ref"])
	if err != nil {
		return 0, nil, notFound()
	}
	out := []map[string]any{}
	for _, st := range rp.statusesFor(cm.Hash.String()) {
		out = append(out, s.statusMap(rp, st))
	}
	return http.StatusOK, paginate(c, out), nil
}

func (s *Server) combinedStatus(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cm, err := rp.resolve(c.params["ref"])
	if err != nil {
		return 0, nil, notFound()
	}
	sha := cm.Hash.String()
	latest := latestStatuses(rp.statusesFor(sha))
	items := []map[string]any{}
	for _, st := range latest {
		m := s.statusMap(rp, st)
		delete(m, "creator")
		items = append(items, m)
	}
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	return http.StatusOK, map[string]any{
		"state": combinedState(latest), "statuses": paginate(c, items), "sha": sha,
		"total_count": len(items), "repository": s.repoMap(rp),
		"commit_url": api + "/commits/" + sha, "url": api + "/commits/" + sha + "/status",
	}, nil
}
