package githubsim

import (
	"net/http"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"
)

// checkRun is a simulated check run; it is guarded by its repo's mu.
type checkRun struct {
	id          int64
	name        string
	headSHA     string
	externalID  string
	detailsURL  string
	status      string
	conclusion  string
	startedAt   time.Time
	completedAt time.Time
	title       *string
	summary     *string
	text        *string
	annotations []*github.CheckRunAnnotation
	actions     []*github.CheckRunAction
	suiteID     int64
}

// checkRunInput is the body of create and update check run requests.
type checkRunInput struct {
	Name        *string                  `json:"name"`
	HeadSHA     *string                  `json:"head_sha"`
	DetailsURL  *string                  `json:"details_url"`
	ExternalID  *string                  `json:"external_id"`
	Status      *string                  `json:"status"`
	Conclusion  *string                  `json:"conclusion"`
	StartedAt   *github.Timestamp        `json:"started_at"`
	CompletedAt *github.Timestamp        `json:"completed_at"`
	Output      *github.CheckRunOutput   `json:"output"`
	Actions     []*github.CheckRunAction `json:"actions"`
}

func (s *Server) createCheckRun(c *call) (int, any, error) {
	var in checkRunInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if in.Name == nil || *in.Name == "" || in.HeadSHA == nil {
		return 0, nil, validation("CheckRun", "", "name and head_sha are required")
	}
	if err := validateCheckRun(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	head, err := rp.resolve(*in.HeadSHA)
	if err != nil || !fullSHA.MatchString(*in.HeadSHA) {
		return 0, nil, unprocessable("No commit found for SHA: %s", *in.HeadSHA)
	}
	cr := &checkRun{id: s.nextID(), name: *in.Name, headSHA: head.Hash.String(), status: "queued", startedAt: s.now()}
	cr.suiteID = rp.suiteFor(s, cr.headSHA)
	s.applyCheckRun(cr, &in)
	rp.checkRuns = append(rp.checkRuns, cr)
	c.emit(s.checkRunEvent(rp, cr, "created", c.actor, ""))
	return http.StatusCreated, s.checkRunMap(rp, cr), nil
}

func (rp *repo) suiteFor(s *Server, sha string) int64 {
	if id, ok := rp.suites[sha]; ok {
		return id
	}
	id := s.nextID()
	rp.suites[sha] = id
	return id
}

func (s *Server) updateCheckRun(c *call) (int, any, error) {
	var in checkRunInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if err := validateCheckRun(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cr, err := c.checkRun()
	if err != nil {
		return 0, nil, err
	}
	wasDone := cr.status == "completed"
	if in.Name != nil && *in.Name != "" {
		cr.name = *in.Name
	}
	s.applyCheckRun(cr, &in)
	if !wasDone && cr.status == "completed" {
		c.emit(s.checkRunEvent(rp, cr, "completed", c.actor, ""))
	}
	return http.StatusOK, s.checkRunMap(rp, cr), nil
}

// applyCheckRun copies validated input onto a run, appending annotations.
func (s *Server) applyCheckRun(cr *checkRun, in *checkRunInput) {
	setIf(&cr.detailsURL, in.DetailsURL)
	setIf(&cr.externalID, in.ExternalID)
	setIf(&cr.status, in.Status)
	if in.StartedAt != nil {
		cr.startedAt = in.StartedAt.Time.UTC()
	}
	if in.Conclusion != nil {
		cr.conclusion, cr.status = *in.Conclusion, "completed"
	}
	if cr.status == "completed" && cr.completedAt.IsZero() {
		cr.completedAt = s.now()
	}
	if in.CompletedAt != nil {
		cr.completedAt = in.CompletedAt.Time.UTC()
	}
	if in.Output != nil {
		cr.title, cr.summary = in.Output.Title, in.Output.Summary
		if in.Output.Text != nil {
			cr.text = in.Output.Text
		}
		cr.annotations = append(cr.annotations, in.Output.Annotations...)
	}
	if in.Actions != nil {
		cr.actions = in.Actions
	}
}

func setIf(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func (c *call) checkRun() (*checkRun, error) {
	id, err := c.intParam("check_run_id")
	if err != nil {
		return nil, err
	}
	for _, cr := range c.repo.checkRuns {
		if cr.id == id {
			return cr, nil
		}
	}
	return nil, notFound()
}

func (s *Server) getCheckRun(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cr, err := c.checkRun()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.checkRunMap(rp, cr), nil
}

func (s *Server) listCheckRunAnnotations(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cr, err := c.checkRun()
	if err != nil {
		return 0, nil, err
	}
	out := make([]map[string]any, 0, len(cr.annotations))
	for _, a := range cr.annotations {
		m := toMap(a)
		m["blob_href"] = s.base() + "/" + rp.fullName() + "/blob/" + cr.headSHA + "/" + a.GetPath()
		out = append(out, m)
	}
	return http.StatusOK, paginate(c, out), nil
}

func (s *Server) listCheckRunsForRef(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cm, err := rp.resolve(c.params["ref"])
	if err != nil {
		return 0, nil, unprocessable("No commit found for SHA: %s", c.params["ref"])
	}
	runs := rp.runsFor(cm.Hash, c.query("check_name"), c.query("status"), c.query("filter") != "all")
	all := make([]map[string]any, 0, len(runs))
	for _, cr := range runs {
		all = append(all, s.checkRunMap(rp, cr))
	}
	return http.StatusOK, map[string]any{"total_count": len(all), "check_runs": paginate(c, all)}, nil
}

// runsFor lists runs on a commit, newest first; latest keeps one per name.
func (rp *repo) runsFor(sha plumbing.Hash, name, status string, latest bool) []*checkRun {
	var out []*checkRun
	seen := map[string]bool{}
	for i := len(rp.checkRuns) - 1; i >= 0; i-- {
		cr := rp.checkRuns[i]
		if cr.headSHA != sha.String() || (name != "" && cr.name != name) || (status != "" && cr.status != status) {
			continue
		}
		if latest && seen[cr.name] {
			continue
		}
		seen[cr.name] = true
		out = append(out, cr)
	}
	return out
}

// rerequestCheckRun sends check_run rerequested, as the Re-run button does.
func (s *Server) rerequestCheckRun(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	cr, err := c.checkRun()
	if err != nil {
		return 0, nil, err
	}
	c.emit(s.checkRunEvent(rp, cr, "rerequested", c.actor, ""))
	return http.StatusCreated, map[string]any{}, nil
}
