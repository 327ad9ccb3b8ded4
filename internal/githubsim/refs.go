package githubsim

import (
	"net/http"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeRef points a ref at h (zero deletes it) and returns the webhook
// events the change causes. The caller holds rp.mu.
func (s *Server) writeRef(rp *repo, name string, h plumbing.Hash, actor string) ([]*hookEvent, error) {
	old, _ := rp.refHash(name)
	var err error
	if h.IsZero() {
		err = rp.git.Storer.RemoveReference(plumbing.ReferenceName(name))
	} else {
		err = rp.git.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h))
	}
	if err != nil {
		return nil, err
	}
	return s.refChanged(rp, name, old, h, actor), nil
}

// refChanged reacts to a ref that moved from old to h (zero = absent):
// a push webhook, then pull request updates. The caller holds rp.mu.
func (s *Server) refChanged(rp *repo, name string, old, h plumbing.Hash, actor string) []*hookEvent {
	if old == h || !(strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/")) {
		return nil
	}
	rp.pushedAt = s.now()
	events := []*hookEvent{s.pushEvent(rp, name, old, h, actor)}
	if branch, ok := strings.CutPrefix(name, "refs/heads/"); ok {
		events = append(events, s.syncPulls(rp, branch, old, h, actor)...)
	}
	return events
}

func (s *Server) refObject(rp *repo, name string, h plumbing.Hash) map[string]any {
	typ := "commit"
	kind := "commits"
	if t, ok := rp.objectType(h); ok && t == plumbing.TagObject {
		typ, kind = "tag", "tags"
	}
	return map[string]any{
		"ref": name, "node_id": nodeID("Ref", rp.id) + h.String()[:8],
		"url":    s.base() + "/api/v3/repos/" + rp.fullName() + "/git/" + pathEscape(name),
		"object": map[string]any{"type": typ, "sha": h.String(), "url": s.gitURL(rp, kind, h.String())},
	}
}

func (s *Server) getRef(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	name := "refs/" + c.params["ref"]
	h, ok := rp.refHash(name)
	if !ok {
		return 0, nil, notFound()
	}
	return http.StatusOK, s.refObject(rp, name, h), nil
}

// listRefs is the legacy GET git/refs/{ref}: one ref if exact, else a list.
func (s *Server) listRefs(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	name := strings.TrimSuffix("refs/"+c.params["ref"], "/")
	if h, ok := rp.refHash(name); ok {
		return http.StatusOK, s.refObject(rp, name, h), nil
	}
	list, err := s.matchingRefs(rp, name+"/")
	if err != nil {
		return 0, nil, err
	}
	if len(list) == 0 {
		return 0, nil, notFound()
	}
	return http.StatusOK, paginate(c, list), nil
}

func (s *Server) getMatchingRefs(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	list, err := s.matchingRefs(rp, "refs/"+c.params["ref"])
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, paginate(c, list), nil
}

func (s *Server) matchingRefs(rp *repo, prefix string) ([]map[string]any, error) {
	all, err := rp.refs()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for n := range all {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		out = append(out, s.refObject(rp, n, all[n]))
	}
	return out, nil
}

func validRefName(name string) bool {
	return strings.HasPrefix(name, "refs/") && strings.Count(name, "/") >= 2 &&
		!strings.Contains(name, "..") && !strings.HasSuffix(name, "/") && !strings.ContainsAny(name, " ~^:?*[\\")
}

func (s *Server) createRef(c *call) (int, any, error) {
	var in struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if !validRefName(in.Ref) {
		return 0, nil, unprocessable("Reference name must start with 'refs/' and have at least two slashes.")
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if _, ok := rp.refHash(in.Ref); ok {
		return 0, nil, unprocessable("Reference already exists")
	}
	h := plumbing.NewHash(in.SHA)
	if _, ok := rp.objectType(h); !fullSHA.MatchString(in.SHA) || !ok {
		return 0, nil, unprocessable("Object does not exist")
	}
	events, err := s.writeRef(rp, in.Ref, h, c.actor)
	if err != nil {
		return 0, nil, err
	}
	c.events = append(c.events, events...)
	return http.StatusCreated, s.refObject(rp, in.Ref, h), nil
}

func (s *Server) updateRef(c *call) (int, any, error) {
	var in struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	name := "refs/" + c.params["ref"]
	old, ok := rp.refHash(name)
	if !ok {
		return 0, nil, unprocessable("Reference does not exist")
	}
	h := plumbing.NewHash(in.SHA)
	if _, ok := rp.objectType(h); !fullSHA.MatchString(in.SHA) || !ok {
		return 0, nil, unprocessable("Object does not exist")
	}
	if !in.Force {
		ff, err := rp.isAncestor(old, h)
		if err != nil || !ff {
			return 0, nil, unprocessable("Update is not a fast forward")
		}
	}
	events, err := s.writeRef(rp, name, h, c.actor)
	if err != nil {
		return 0, nil, err
	}
	c.events = append(c.events, events...)
	return http.StatusOK, s.refObject(rp, name, h), nil
}

func (s *Server) deleteRef(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	name := "refs/" + c.params["ref"]
	if _, ok := rp.refHash(name); !ok {
		return 0, nil, unprocessable("Reference does not exist")
	}
	events, err := s.writeRef(rp, name, plumbing.ZeroHash, c.actor)
	if err != nil {
		return 0, nil, err
	}
	c.events = append(c.events, events...)
	return http.StatusNoContent, nil, nil
}
