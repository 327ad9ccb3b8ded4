package githubsim

import (
	"net/http"

	"github.com/go-git/go-git/v5/plumbing"
)

type updatePullInput struct {
	Title               *string `json:"title"`
	Body                *string `json:"body"`
	State               *string `json:"state"`
	Base                *string `json:"base"`
	MaintainerCanModify *bool   `json:"maintainer_can_modify"`
}

func (s *Server) updatePull(c *call) (int, any, error) {
	var in updatePullInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pr, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	events, err := s.editPull(rp, pr, in, c.actor)
	if err != nil {
		return 0, nil, err
	}
	c.events = append(c.events, events...)
	m, err := s.pullMap(rp, pr, true)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}

// editPull applies a PATCH and returns the resulting webhook events. The caller holds rp.mu.
func (s *Server) editPull(rp *repo, pr *pullRequest, in updatePullInput, actor string) ([]*hookEvent, error) {
	changes := map[string]any{}
	if in.Base != nil && *in.Base != pr.base {
		h, ok := rp.branchHash(*in.Base)
		if !ok || *in.Base == pr.head {
			return nil, validation("PullRequest", "base", "Proposed base branch %q was not found", *in.Base)
		}
		changes["base"] = map[string]any{"ref": map[string]any{"from": pr.base}, "sha": map[string]any{"from": pr.baseSHA}}
		pr.base, pr.baseSHA = *in.Base, h.String()
	}
	if in.Title != nil && *in.Title != pr.title {
		changes["title"] = map[string]any{"from": pr.title}
		pr.title = *in.Title
	}
	if in.Body != nil && *in.Body != pr.body {
		changes["body"] = map[string]any{"from": pr.body}
		pr.body = *in.Body
	}
	if in.MaintainerCanModify != nil {
		pr.maintainerCanModify = *in.MaintainerCanModify
	}
	pr.updatedAt = s.now()
	var events []*hookEvent
	if len(changes) > 0 {
		events = append(events, s.pullEvent(rp, pr, "edited", actor, map[string]any{"changes": changes}))
	}
	if in.State != nil && *in.State != pr.state {
		ev, err := s.setPullState(rp, pr, *in.State, actor)
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func (s *Server) setPullState(rp *repo, pr *pullRequest, state, actor string) (*hookEvent, error) {
	switch state {
	case "closed":
		s.closePull(pr)
		return s.pullEvent(rp, pr, "closed", actor, nil), nil
	case "open":
		if pr.merged {
			return nil, unprocessable("state cannot be changed. The pull request has been merged.")
		}
		h, ok := rp.branchHash(pr.head)
		if !ok {
			return nil, unprocessable("state cannot be changed. The %s branch has been deleted.", pr.head)
		}
		pr.state, pr.closedAt, pr.headSHA = "open", zeroTime, h.String()
		if err := rp.setPullRef(pr); err != nil {
			return nil, err
		}
		return s.pullEvent(rp, pr, "reopened", actor, nil), nil
	}
	return nil, validation("PullRequest", "state", "state %q is not valid", state)
}

func (s *Server) closePull(pr *pullRequest) {
	pr.state, pr.closedAt, pr.updatedAt = "closed", s.now(), s.now()
}

// syncPulls updates open pull requests after branch moved from old to h:
// head pushes synchronize, deleted branches close, and a base that now
// contains the head marks the pull request merged. The caller holds rp.mu.
func (s *Server) syncPulls(rp *repo, branch string, old, h plumbing.Hash, actor string) []*hookEvent {
	var events []*hookEvent
	for _, pr := range rp.pulls {
		if pr.state != "open" {
			continue
		}
		if pr.head == branch {
			events = append(events, s.headMoved(rp, pr, old, h, actor))
		}
		if pr.base == branch && pr.state == "open" {
			events = append(events, s.baseMoved(rp, pr, h, actor))
		}
	}
	return events
}

func (s *Server) headMoved(rp *repo, pr *pullRequest, old, h plumbing.Hash, actor string) *hookEvent {
	if h.IsZero() {
		s.closePull(pr)
		return s.pullEvent(rp, pr, "closed", actor, nil)
	}
	before := pr.headSHA
	pr.headSHA, pr.updatedAt = h.String(), s.now()
	_ = rp.setPullRef(pr)
	return s.pullEvent(rp, pr, "synchronize", actor, map[string]any{"before": before, "after": h.String()})
}

func (s *Server) baseMoved(rp *repo, pr *pullRequest, h plumbing.Hash, actor string) *hookEvent {
	if h.IsZero() {
		s.closePull(pr)
		return s.pullEvent(rp, pr, "closed", actor, nil)
	}
	pr.baseSHA = h.String()
	if in, err := rp.isAncestor(plumbing.NewHash(pr.headSHA), h); err != nil || !in {
		_ = rp.setMergeRef(pr) // GitHub's test merge follows the base
		return nil
	}
	s.closePull(pr)
	pr.merged, pr.mergedAt, pr.mergedBy, pr.mergeCommitSHA = true, s.now(), actor, pr.headSHA
	return s.pullEvent(rp, pr, "closed", actor, nil)
}
