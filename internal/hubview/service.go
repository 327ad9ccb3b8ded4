package hubview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/hub"
)

// Reader returns the signed-in user of a request and a check of the repositories they can
// read (fleetview.Service.Reader); its error is NoSession without a session.
type Reader func(r *http.Request) (string, func(ctx context.Context, repo string) (bool, error), error)

// Service serves the hub's JSON and pages.
type Service struct {
	hub       *hub.Hub
	reader    Reader
	noSession error
	logger    zerolog.Logger
}

// New returns the service; noSession is the error reader returns without a session.
func New(h *hub.Hub, reader Reader, noSession error, logger zerolog.Logger) *Service {
	return &Service{hub: h, reader: reader, noSession: noSession, logger: logger}
}

// errHidden answers a control plane the user cannot read as not found.
var errHidden = errors.New("not found")

// view computes one answer for a signed-in user allowed to read q's control plane.
type view func(ctx context.Context, q query, canRead func(ctx context.Context, repo string) (bool, error)) (any, error)

// Register adds the routes: /api/v1/hub/* (JSON) and /fleet/hub/* (pages).
func (s *Service) Register(mux *http.ServeMux) {
	for name, v := range s.views() {
		mux.HandleFunc("GET /api/v1/hub/"+name, s.serveJSON(v))
		mux.HandleFunc("GET /fleet/hub/"+name, s.servePage(name, v))
	}
	mux.HandleFunc("GET /fleet/hub", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/fleet/hub/environments", http.StatusSeeOther)
	})
}

// views are the hub's questions, by route name.
func (s *Service) views() map[string]view {
	h := s.hub
	return map[string]view{
		"environments": func(ctx context.Context, _ query, canRead func(context.Context, string) (bool, error)) (any, error) {
			var failed error
			list, err := h.Environments(ctx, func(cp string) bool {
				ok, err := canRead(ctx, cp)
				failed = errors.Join(failed, err)
				return ok
			})
			return list, errors.Join(err, failed)
		},
		"clusters": guarded(func(ctx context.Context, q query) (any, error) {
			return h.Clusters(ctx, q.ControlPlane, q.Environment, q.ClusterType, q.After, q.Limit)
		}, "controlPlane", "environment"),
		"cluster": guarded(func(ctx context.Context, q query) (any, error) {
			return h.Cluster(ctx, q.ControlPlane, q.Environment, q.Cluster)
		}, "controlPlane", "environment", "cluster"),
		"drift": guarded(func(ctx context.Context, q query) (any, error) {
			return h.Drift(ctx, q.ControlPlane, q.Environment)
		}, "controlPlane", "environment"),
		"workloads": guarded(func(ctx context.Context, q query) (any, error) {
			return h.Workloads(ctx, q.ControlPlane)
		}, "controlPlane"),
		"compare": guarded(func(ctx context.Context, q query) (any, error) {
			return h.Compare(ctx, q.ControlPlane, q.From, q.To)
		}, "controlPlane", "from", "to"),
		"history": guarded(func(ctx context.Context, q query) (any, error) {
			return h.History(ctx, q.ControlPlane, q.Environment, q.Workload)
		}, "controlPlane"),
		"dora": guarded(func(ctx context.Context, q query) (any, error) {
			return h.DORA(ctx, q.ControlPlane, q.Environment, q.Days)
		}, "controlPlane", "environment"),
	}
}

// guarded checks the required parameters and that the user can read the control plane.
func guarded(fn func(ctx context.Context, q query) (any, error), required ...string) view {
	return func(ctx context.Context, q query, canRead func(context.Context, string) (bool, error)) (any, error) {
		if err := q.need(required...); err != nil {
			return nil, err
		}
		ok, err := canRead(ctx, q.ControlPlane)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errHidden
		}
		return fn(ctx, q)
	}
}

// answer runs a view for a request: the user, the query, the result.
func (s *Service) answer(r *http.Request, v view) (string, query, any, error) {
	login, canRead, err := s.reader(r)
	if err != nil {
		return "", query{}, nil, err
	}
	q, err := parseQuery(r)
	if err != nil {
		return login, q, nil, err
	}
	out, err := v(r.Context(), q, canRead)
	return login, q, out, err
}

// serveJSON answers a view as JSON: 401 without a session, 400 for a bad parameter, 404 for
// what the user cannot read or the hub does not know.
func (s *Service) serveJSON(v view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _, out, err := s.answer(r, v)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if err != nil {
			status, msg := s.status(err)
			writeJSON(w, status, map[string]string{"message": msg})
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// status maps an error to its HTTP status and the message shown.
func (s *Service) status(err error) (int, string) {
	var bad errBadQuery
	switch {
	case errors.Is(err, s.noSession):
		return http.StatusUnauthorized, "sign in at /fleet/login"
	case errors.As(err, &bad):
		return http.StatusBadRequest, bad.Error()
	case errors.Is(err, errHidden), errors.Is(err, hub.ErrNotFound):
		return http.StatusNotFound, "not found"
	}
	s.logger.Warn().Err(err).Msg("hub query failed")
	return http.StatusInternalServerError, "the hub cannot answer right now"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}
