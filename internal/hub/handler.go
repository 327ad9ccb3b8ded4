package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// ReportsPath is where clusters post their reports.
const ReportsPath = "/api/v1/reports"

// Register adds POST /api/v1/reports to mux.
func (h *Hub) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST "+ReportsPath, h.ServeReport)
}

// Answer is the JSON body of every answer of the reports endpoint.
type Answer struct {
	Accepted     bool   `json:"accepted"`
	Error        string `json:"error,omitempty"`
	ControlPlane string `json:"controlPlane,omitempty"`
	Environment  string `json:"environment,omitempty"`
	Cluster      string `json:"cluster,omitempty"`
}

// ServeReport takes one report: bounded in concurrency and size before it is read, then
// authenticated, parsed, checked for age, attributed, and stored (in a group commit) before
// it is answered 202. Nothing is kept of a refused report.
func (h *Hub) ServeReport(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		h.refuse(w, "busy", http.StatusServiceUnavailable, "too many reports at once (reports.maxConcurrent); retry")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	auth, err := authenticate(r, body, h.opts.Keys)
	if err != nil {
		h.refuse(w, "unauthenticated", http.StatusUnauthorized, err.Error())
		return
	}
	ev, err := ParseEvent(body)
	if err != nil {
		h.refuse(w, "invalid", http.StatusBadRequest, err.Error())
		return
	}
	if msg := h.checkAge(ev); msg != "" {
		h.refuse(w, "stale", http.StatusBadRequest, msg)
		return
	}
	t, err := attribute(r.Context(), h.opts.Directory, h.opts.Keys, auth, ev)
	if err != nil {
		var ref *Refusal
		if errors.As(err, &ref) {
			h.refuse(w, "unattributed", ref.Status, ref.Reason)
			return
		}
		h.refuse(w, "error", http.StatusInternalServerError, "attribution failed")
		return
	}
	h.store(w, r, t, ev, body)
}

// readBody reads at most reports.maxBodyBytes; a larger body is refused unread when its
// length is announced, and cut off otherwise.
func (h *Hub) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := h.opts.Limits.MaxBodyBytes
	tooLarge := fmt.Sprintf("body larger than %d bytes (reports.maxBodyBytes)", limit)
	if r.ContentLength > limit {
		h.refuse(w, "too_large", http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		h.refuse(w, "too_large", http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	case err != nil:
		h.refuse(w, "invalid", http.StatusBadRequest, "the body could not be read")
		return nil, false
	}
	return body, true
}

// checkAge refuses reports older than reports.maxAge or dated too far ahead.
func (h *Hub) checkAge(ev Event) string {
	now, l := h.opts.Now(), h.opts.Limits
	switch {
	case ev.Timestamp.Before(now.Add(-l.MaxAge)):
		return fmt.Sprintf("stale: timestamp %s is older than %s (reports.maxAge)", ev.Timestamp.Format("2006-01-02T15:04:05Z07:00"), l.MaxAge)
	case ev.Timestamp.After(now.Add(l.ClockSkew)):
		return fmt.Sprintf("timestamp %s is in the future by more than %s (reports.clockSkew)", ev.Timestamp.Format("2006-01-02T15:04:05Z07:00"), l.ClockSkew)
	}
	return ""
}

// store writes the attributed report and answers with its outcome.
func (h *Hub) store(w http.ResponseWriter, r *http.Request, t Target, ev Event, body []byte) {
	digest := sha256.New()
	digest.Write([]byte(t.Key() + "\n"))
	digest.Write(body)
	rep := store.Report{ControlPlane: t.ControlPlane, Environment: t.Environment, ClusterType: ev.ClusterType, Cluster: ev.Cluster,
		Object: ev.Object, Source: ev.Source, GitOpsCommit: ev.Commit, State: ev.State, Reason: ev.Reason, Message: ev.Message,
		EventAt: ev.Timestamp, ReceivedAt: h.opts.Now(), Digest: hex.EncodeToString(digest.Sum(nil)[:16])}
	outcome, err := h.batch.submit(r.Context(), rep)
	switch {
	case err != nil:
		h.opts.Logger.Warn().Err(err).Str("environment", t.Key()).Msg("storing a report failed")
		w.Header().Set("Retry-After", "5")
		h.refuse(w, "error", http.StatusServiceUnavailable, "the report could not be stored; retry")
	case outcome == store.Replayed:
		h.refuse(w, "replayed", http.StatusConflict, "replayed: this report was accepted before")
	case outcome == store.OverCap:
		h.refuse(w, "over_cap", http.StatusForbidden, fmt.Sprintf("environment %s has %d clusters, its cap (reports.maxClustersPerEnvironment): cluster %s is not registered",
			t.Key(), h.opts.Limits.MaxClusters, ev.Cluster))
	default:
		h.metrics.count("accepted")
		writeAnswer(w, http.StatusAccepted, Answer{Accepted: true, ControlPlane: t.ControlPlane, Environment: t.Environment, Cluster: ev.Cluster})
	}
}

// refuse counts and answers a refused report with its reason.
func (h *Hub) refuse(w http.ResponseWriter, outcome string, status int, reason string) {
	h.metrics.count(outcome)
	writeAnswer(w, status, Answer{Error: reason})
}

func writeAnswer(w http.ResponseWriter, status int, a Answer) {
	body, _ := json.Marshal(a)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
