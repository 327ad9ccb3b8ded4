// Package fleetview shows what runs where: per control plane, its environments in promotion
// order with their pinned main commit, GitOps pull request, promotion state and history, and
// per environment the cluster types × deployment targets the app rendered. It serves the data
// as JSON (/api/v1/fleet) and HTML (/fleet) behind sign-in with GitHub, status badges, and
// Prometheus gauges. It reads the app's own in-memory state and a few conditional REST calls
// per environment.
package fleetview

import "time"

// Promotion states of an environment (the State field of Promotion).
const (
	StateUnknown          = "unknown"           // no kalypso/<env> status on the pinned commit
	StateAwaitingMerge    = "awaiting-merge"    // the GitOps pull request is not merged yet
	StateWaiting          = "waiting"           // merged; waiting for the clusters (k/N compliant)
	StateDeployed         = "deployed"          // every expected cluster is compliant
	StateFailed           = "failed"            // a cluster failed, or the wait timed out
	StateSuperseded       = "superseded"        // a newer commit replaced this one
	StateAwaitingApproval = "awaiting-approval" // deployed upstream; a Promote click is needed
)

// Fleet is everything a user may see: the control planes they can read.
type Fleet struct {
	GeneratedAt   time.Time      `json:"generatedAt"`
	ControlPlanes []ControlPlane `json:"controlPlanes"`
}

// ControlPlane is one control-plane repository and its environments in promotion order.
type ControlPlane struct {
	Repo         string        `json:"repo"` // OWNER/NAME
	URL          string        `json:"url"`
	Installation int64         `json:"-"`
	Environments []Environment `json:"environments"`
}

// Environment is one environment of a control plane.
type Environment struct {
	Name        string       `json:"name"`
	After       string       `json:"after,omitempty"` // upstream environment in the promotion chain
	Approval    string       `json:"approval"`        // automatic or manual ("" without spec.promotion)
	Main        *Commit      `json:"main,omitempty"`  // the main commit its base-repo.yaml pins
	GitOps      GitOps       `json:"gitops"`
	Promotion   Promotion    `json:"promotion"`
	Render      Render       `json:"render"`              // how the last render went
	Sources     []Source     `json:"sources"`             // the commits the last render came from
	Assignments []Assignment `json:"assignments"`         // cluster types × deployment targets, held ones included
	Errors      []Problem    `json:"errors"`              // every problem of the last render
	History     []Deployment `json:"history"`             // the last promotions, newest first
	ReadError   string       `json:"readError,omitempty"` // why part of it could not be read from GitHub
	Governance  Governance   `json:"governance"`          // windows, approvers, hold
}

// Commit is a commit with its link.
type Commit struct {
	SHA     string     `json:"sha"`
	Short   string     `json:"short"`
	Message string     `json:"message,omitempty"` // first line
	Time    *time.Time `json:"time,omitempty"`
	URL     string     `json:"url"`
}

// GitOps is where an environment's manifests go.
type GitOps struct {
	Repo        string       `json:"repo"`
	Branch      string       `json:"branch"`
	Path        string       `json:"path"`
	Head        *Commit      `json:"head,omitempty"`
	PullRequest *PullRequest `json:"pullRequest,omitempty"` // the app's open pull request
}

// PullRequest is the app's open pull request of an environment.
type PullRequest struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	URL    string `json:"url"`
	Head   string `json:"head"`
}

// Promotion is where the pinned commit is in its environment, from the kalypso/<env> commit
// status and the GitHub Deployments the app writes.
type Promotion struct {
	State         string         `json:"state"`
	Description   string         `json:"description,omitempty"`
	Compliant     int            `json:"compliant"`               // clusters compliant (waiting or deployed)
	Expected      int            `json:"expected"`                // clusters expected (waiting or deployed)
	FailedCluster string         `json:"failedCluster,omitempty"` // the cluster that failed
	Approval      *PendingChange `json:"approval,omitempty"`      // a commit waiting for a Promote click
	DeployedAt    *time.Time     `json:"deployedAt,omitempty"`    // when the last promotion succeeded
	Duration      *Seconds       `json:"durationSeconds,omitempty"`
	LeadTime      *Seconds       `json:"leadTimeSeconds,omitempty"` // from the main commit to deployed
	Deployed      *Commit        `json:"deployed,omitempty"`        // the commit of the last successful promotion
}

// PendingChange is a commit deployed upstream that waits for approval here.
type PendingChange struct {
	Commit    Commit `json:"commit"`
	From      string `json:"from"`
	Approvers string `json:"approvers"` // who may click Promote
}

// Seconds is a duration in whole seconds.
type Seconds int64

// secondsOf converts a duration.
func secondsOf(d time.Duration) *Seconds {
	s := Seconds(d / time.Second)
	return &s
}

// Source is a commit an environment was rendered from.
type Source struct {
	Name   string `json:"name"` // main, the environment branch, or "workload <registration>"
	Repo   string `json:"repo,omitempty"`
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit"`
}

// Render is how an environment's last render went.
type Render struct {
	State   string  `json:"state"`             // RenderOK, RenderError or RenderUnknown
	Errors  int     `json:"errors"`            // problems of the render, at file and line (Environment.Errors)
	Held    int     `json:"held"`              // assignments whose last good output stays in GitOps
	Summary string  `json:"summary,omitempty"` // for an error: "2 errors, changes held back"
	Commit  *Commit `json:"commit,omitempty"`  // the environment branch's commit the render read
}

// Assignment is one deployment target on one cluster type.
type Assignment struct {
	ClusterType string   `json:"clusterType"`
	Target      string   `json:"target"`
	Workload    string   `json:"workload,omitempty"` // unknown for an assignment held by a broken cluster type
	Folder      string   `json:"folder"`
	URL         string   `json:"url"`
	State       string   `json:"state"`           // AssignmentRendered, AssignmentFailed or AssignmentHeld
	Error       *Problem `json:"error,omitempty"` // why it did not render (its last good output stays)
	// The commits it was rendered from: main (templates), the environment branch (cluster
	// type, configs) and the workload's registered branch.
	MainCommit        string `json:"mainCommit,omitempty"`
	EnvironmentCommit string `json:"environmentCommit,omitempty"`
	WorkloadCommit    string `json:"workloadCommit,omitempty"`
}

// Problem is an error at a file and line.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
}

// Deployment is one promotion of a main commit to an environment (a GitHub Deployment).
type Deployment struct {
	ID         int64      `json:"id"`
	Commit     Commit     `json:"commit"`
	State      string     `json:"state"` // the latest deployment status: in_progress, success, failure, inactive, …
	Created    time.Time  `json:"created"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Duration   *Seconds   `json:"durationSeconds,omitempty"`
	LeadTime   *Seconds   `json:"leadTimeSeconds,omitempty"`
}
