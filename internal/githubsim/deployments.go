package githubsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// deployment is a simulated deployment with its statuses, guarded by the repo's mu.
type deployment struct {
	id          int64
	sha, ref    string
	task        string
	environment string
	description string
	payload     json.RawMessage
	creator     string
	transient   bool
	production  bool
	createdAt   time.Time
	statuses    []*deploymentStatus
}

type deploymentStatus struct {
	id             int64
	state          string
	description    string
	environment    string
	targetURL      string
	logURL         string
	environmentURL string
	creator        string
	createdAt      time.Time
}

var deploymentStates = []string{"error", "failure", "inactive", "pending", "success", "queued", "in_progress"}

type deploymentInput struct {
	Ref                   string          `json:"ref"`
	Task                  string          `json:"task"`
	Payload               json.RawMessage `json:"payload"`
	Environment           string          `json:"environment"`
	Description           string          `json:"description"`
	TransientEnvironment  bool            `json:"transient_environment"`
	ProductionEnvironment *bool           `json:"production_environment"`
}

func (s *Server) createDeployment(c *call) (int, any, error) {
	var in deploymentInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	d, err := s.addDeployment(rp, in, c.actor)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.deploymentMap(rp, d), nil
}

// addDeployment records a deployment of a ref. The caller holds rp.mu.
func (s *Server) addDeployment(rp *repo, in deploymentInput, creator string) (*deployment, error) {
	cm, err := rp.resolve(in.Ref)
	if err != nil {
		return nil, validation("Deployment", "ref", "No ref found for: %s", in.Ref)
	}
	d := &deployment{
		id: s.nextID(), sha: cm.Hash.String(), ref: in.Ref, task: firstNonEmpty(in.Task, "deploy"),
		environment: firstNonEmpty(in.Environment, "production"), description: in.Description,
		payload: in.Payload, creator: creator, transient: in.TransientEnvironment, createdAt: s.now(),
	}
	d.production = d.environment == "production"
	if in.ProductionEnvironment != nil {
		d.production = *in.ProductionEnvironment
	}
	if len(d.payload) == 0 || string(d.payload) == "null" {
		d.payload = json.RawMessage(`{}`)
	}
	rp.deployments = append(rp.deployments, d)
	return d, nil
}

func (s *Server) deploymentMap(rp *repo, d *deployment) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	self := api + "/deployments/" + itoa64(d.id)
	return map[string]any{
		"url": self, "id": d.id, "node_id": nodeID("Deployment", d.id), "sha": d.sha, "ref": d.ref,
		"task": d.task, "payload": d.payload, "original_environment": d.environment,
		"environment": d.environment, "description": nullable(d.description), "creator": s.userMap(d.creator),
		"created_at": tsOrNil(d.createdAt), "updated_at": tsOrNil(d.createdAt),
		"statuses_url": self + "/statuses", "repository_url": api,
		"transient_environment": d.transient, "production_environment": d.production,
	}
}

func (s *Server) listDeployments(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	q := c.r.URL.Query()
	out := []map[string]any{}
	for i := len(rp.deployments) - 1; i >= 0; i-- {
		d := rp.deployments[i]
		if !matchOpt(q.Get("sha"), d.sha) || !matchOpt(q.Get("ref"), d.ref) ||
			!matchOpt(q.Get("task"), d.task) || !matchOpt(q.Get("environment"), d.environment) {
			continue
		}
		out = append(out, s.deploymentMap(rp, d))
	}
	return http.StatusOK, paginate(c, out), nil
}

func matchOpt(want, have string) bool { return want == "" || want == have }

func (c *call) deployment() (*deployment, error) {
	id, err := c.intParam("deployment_id")
	if err != nil {
		return nil, err
	}
	for _, d := range c.repo.deployments {
		if d.id == id {
			return d, nil
		}
	}
	return nil, notFound()
}

func (s *Server) getDeployment(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	d, err := c.deployment()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.deploymentMap(rp, d), nil
}

type deploymentStatusInput struct {
	State          string `json:"state"`
	TargetURL      string `json:"target_url"`
	LogURL         string `json:"log_url"`
	Description    string `json:"description"`
	Environment    string `json:"environment"`
	EnvironmentURL string `json:"environment_url"`
}

func (s *Server) createDeploymentStatus(c *call) (int, any, error) {
	var in deploymentStatusInput
	if err := c.decode(&in); err != nil {
		return 0, nil, err
	}
	if !slices.Contains(deploymentStates, in.State) {
		return 0, nil, validation("DeploymentStatus", "state", "state %q is not included in the list", in.State)
	}
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	d, err := c.deployment()
	if err != nil {
		return 0, nil, err
	}
	ds := &deploymentStatus{
		id: s.nextID(), state: in.State, description: in.Description,
		environment: firstNonEmpty(in.Environment, d.environment), targetURL: firstNonEmpty(in.LogURL, in.TargetURL),
		logURL: firstNonEmpty(in.LogURL, in.TargetURL), environmentURL: in.EnvironmentURL,
		creator: c.actor, createdAt: s.now(),
	}
	d.statuses = append(d.statuses, ds)
	return http.StatusCreated, s.deploymentStatusMap(rp, d, ds), nil
}

func (s *Server) deploymentStatusMap(rp *repo, d *deployment, ds *deploymentStatus) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	dep := api + "/deployments/" + itoa64(d.id)
	return map[string]any{
		"url": dep + "/statuses/" + itoa64(ds.id), "id": ds.id, "node_id": nodeID("DeploymentStatus", ds.id),
		"state": ds.state, "creator": s.userMap(ds.creator), "description": ds.description,
		"environment": ds.environment, "target_url": ds.targetURL, "log_url": ds.logURL,
		"environment_url": ds.environmentURL, "created_at": tsOrNil(ds.createdAt),
		"updated_at": tsOrNil(ds.createdAt), "deployment_url": dep, "repository_url": api,
	}
}

func (s *Server) listDeploymentStatuses(c *call) (int, any, error) {
	rp := c.repo
	rp.mu.Lock()
	defer rp.mu.Unlock()
	d, err := c.deployment()
	if err != nil {
		return 0, nil, err
	}
	out := []map[string]any{}
	for i := len(d.statuses) - 1; i >= 0; i-- {
		out = append(out, s.deploymentStatusMap(rp, d, d.statuses[i]))
	}
	return http.StatusOK, paginate(c, out), nil
}
