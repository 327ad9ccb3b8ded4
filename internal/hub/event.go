// Package hub is the Deployment Observability Hub: it takes cluster reports (Flux
// notification-controller events signed with generic-hmac, Argo CD notifications with a bearer
// token, a generic JSON shape signed like Flux's), attributes each to a control plane,
// environment, cluster type and cluster, stores them (internal/store) and answers what runs
// where, drift, history and the DORA keys.
package hub

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Event is a report read from its wire format and validated: what the reconciler says.
type Event struct {
	Source      string // SourceFlux, SourceArgoCD or SourceGeneric
	Cluster     string
	ClusterType string
	Environment string // optional: when set, the environment must have this name
	Object      string // the reconciler object, such as Kustomization/flux-system/gitops-dev
	Branch      string // the GitOps branch of the revision ("" when it does not say)
	Commit      string // the GitOps commit, 40 lowercase hex digits
	State       string // store.StateSuccess, StateFailure or StatePending
	Reason      string
	Message     string
	Timestamp   time.Time
}

// Report sources.
const (
	SourceFlux    = "flux"
	SourceArgoCD  = "argocd"
	SourceGeneric = "generic"
)

// Bounds of the fields of a report.
const (
	maxMessage = 2000 // characters of a message kept
	maxObject  = 253
	maxReason  = 128
	maxBranch  = 255
)

// ErrInvalid wraps every reason a report body is refused as malformed.
var ErrInvalid = errors.New("invalid report")

// wire has the fields of both shapes: Flux's Event and the JSON of Argo CD and scripts.
type wire struct {
	// Flux notification-controller (github.com/fluxcd/pkg/apis/event/v1beta1.Event).
	InvolvedObject *struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"involvedObject"`
	Severity string            `json:"severity"`
	Metadata map[string]string `json:"metadata"`
	// The generic shape (Argo CD's template produces it with source "argocd").
	Source         string `json:"source"`
	Cluster        string `json:"cluster"`
	ClusterType    string `json:"clusterType"`
	Environment    string `json:"environment"`
	Destination    string `json:"destination"`
	Application    string `json:"application"`
	Object         string `json:"object"`
	Revision       string `json:"revision"`
	TargetRevision string `json:"targetRevision"`
	Branch         string `json:"branch"`
	State          string `json:"state"`
	Health         string `json:"health"`
	Phase          string `json:"phase"`
	// Both.
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

// ParseEvent reads a report body in either shape and validates every field it uses.
func ParseEvent(body []byte) (Event, error) {
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		return Event{}, fmt.Errorf("%w: not a JSON object of a known shape: %v", ErrInvalid, err)
	}
	var e Event
	var err error
	if w.InvolvedObject != nil {
		e, err = w.flux()
	} else {
		e, err = w.generic()
	}
	if err != nil {
		return Event{}, err
	}
	return e, e.validate()
}

// flux reads Flux's event: metadata cluster, clusterType, environment and revision.
func (w *wire) flux() (Event, error) {
	o := w.InvolvedObject
	e := Event{Source: SourceFlux, Cluster: w.Metadata["cluster"], ClusterType: w.Metadata["clusterType"],
		Environment: w.Metadata["environment"], Object: o.Kind + "/" + o.Namespace + "/" + o.Name, Reason: w.Reason, Message: w.Message}
	switch {
	case w.Severity == "error":
		e.State = store.StateFailure
	case w.Severity == "info" && w.Reason == "ReconciliationSucceeded":
		e.State = store.StateSuccess
	case w.Severity == "info":
		e.State = store.StatePending // Progressing, DependencyNotReady: not a verdict yet
	default:
		return e, fmt.Errorf("%w: severity %q is neither info nor error", ErrInvalid, w.Severity)
	}
	var err error
	if e.Branch, e.Commit, err = ParseRevision(w.Metadata["revision"]); err != nil {
		return e, err
	}
	e.Timestamp, err = parseTime(w.Timestamp)
	return e, err
}

// generic reads the JSON shape of Argo CD's template and of scripts.
func (w *wire) generic() (Event, error) {
	e := Event{Source: w.Source, Cluster: w.Cluster, ClusterType: w.ClusterType, Environment: w.Environment,
		Object: w.Object, Reason: w.Reason, Message: w.Message, State: w.State}
	switch w.Source {
	case SourceArgoCD:
		if e.Cluster == "" {
			e.Cluster = w.Destination // one Argo CD for many clusters: the destination names the cluster
		}
		if e.Object == "" {
			e.Object = "Application/" + w.Application
		}
		if e.Reason == "" {
			e.Reason = strings.Trim(w.Phase+"/"+w.Health, "/")
		}
	case SourceGeneric:
		if e.Object == "" {
			e.Object = "generic"
		}
	default:
		return e, fmt.Errorf("%w: source %q: use argocd or generic (Flux events carry involvedObject)", ErrInvalid, w.Source)
	}
	if e.State != store.StateSuccess && e.State != store.StateFailure && e.State != store.StatePending {
		return e, fmt.Errorf("%w: state %q: use success, failure or pending", ErrInvalid, e.State)
	}
	var err error
	if e.Branch, e.Commit, err = ParseRevision(w.Revision); err != nil {
		return e, err
	}
	if e.Branch == "" {
		e.Branch = w.Branch
	}
	if e.Branch == "" && w.TargetRevision != "HEAD" && !isSHA(w.TargetRevision) {
		e.Branch = strings.TrimPrefix(w.TargetRevision, "refs/heads/")
	}
	e.Timestamp, err = parseTime(w.Timestamp)
	return e, err
}

// ParseRevision reads a revision as Flux's source-controller writes it — BRANCH@sha1:SHA,
// refs/heads/BRANCH@sha1:SHA, sha1:SHA, the legacy BRANCH/SHA — or a bare SHA (Argo CD).
func ParseRevision(rev string) (branch, sha string, err error) {
	switch {
	case rev == "":
		return "", "", fmt.Errorf("%w: no revision (Flux metadata.revision, or revision in the JSON)", ErrInvalid)
	case strings.Contains(rev, "@sha1:"):
		i := strings.LastIndex(rev, "@sha1:")
		branch, sha = rev[:i], rev[i+len("@sha1:"):]
	case strings.HasPrefix(rev, "sha1:"):
		sha = rev[len("sha1:"):]
	case isSHA(rev):
		sha = rev
	case strings.Contains(rev, "/"):
		i := strings.LastIndex(rev, "/")
		branch, sha = rev[:i], rev[i+1:]
		if branch == "HEAD" {
			branch = ""
		}
	}
	if !isSHA(sha) {
		return "", "", fmt.Errorf("%w: revision %q does not end with a 40-digit git SHA-1", ErrInvalid, clip(rev, 100))
	}
	return strings.TrimPrefix(branch, "refs/heads/"), sha, nil
}

func isSHA(s string) bool {
	if len(s) != 40 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// parseTime reads an RFC 3339 timestamp.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: timestamp %q is not RFC 3339 (such as 2026-08-24T09:15:42Z)", ErrInvalid, clip(s, 40))
	}
	return t.UTC(), nil
}

var (
	clusterRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
	branchRE  = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
	reasonRE  = regexp.MustCompile(`^[A-Za-z0-9 ._/:-]*$`)
)

// validate checks the names a report brings and bounds its texts.
func (e *Event) validate() error {
	if !clusterRE.MatchString(e.Cluster) {
		return fmt.Errorf("%w: cluster %q: name it with 1 to 63 letters, digits, '.', '_' or '-' (Flux: Alert eventMetadata.cluster)", ErrInvalid, clip(e.Cluster, 70))
	}
	if len(validation.IsDNS1123Label(e.ClusterType)) > 0 {
		return fmt.Errorf("%w: clusterType %q is not a cluster type name (Flux: Alert eventMetadata.clusterType)", ErrInvalid, clip(e.ClusterType, 70))
	}
	if e.Environment != "" && len(validation.IsDNS1123Label(e.Environment)) > 0 {
		return fmt.Errorf("%w: environment %q is not an environment name", ErrInvalid, clip(e.Environment, 70))
	}
	if e.Branch != "" && (len(e.Branch) > maxBranch || !branchRE.MatchString(e.Branch) || strings.Contains(e.Branch, "..")) {
		return fmt.Errorf("%w: branch %q is not a branch name", ErrInvalid, clip(e.Branch, 70))
	}
	if len(e.Object) > maxObject || !utf8.ValidString(e.Object) {
		return fmt.Errorf("%w: object name longer than %d bytes", ErrInvalid, maxObject)
	}
	if len(e.Reason) > maxReason || !reasonRE.MatchString(e.Reason) {
		return fmt.Errorf("%w: reason %q", ErrInvalid, clip(e.Reason, 70))
	}
	e.Message = clip(strings.ToValidUTF8(e.Message, "\uFFFD"), maxMessage)
	return nil
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
