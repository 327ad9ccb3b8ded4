// Package govapi serves the governance requests of scripts: POST /api/v1/rollback and
// POST /api/v1/release, authenticated by a GitHub user token with write permission on the
// control plane, and POST /api/v1/override, which needs admin permission there.
package govapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/promote"
	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Limits of a request.
const (
	maxBodyBytes  = 4 << 10
	maxReasonLen  = 500
	maxNameLength = 200
)

// ErrUnknownEnvironment: no installation of the app declares the environment.
var ErrUnknownEnvironment = errors.New("no such environment in the control planes the app serves")

// Promoter rolls back and releases environments (implemented by *promote.Promoter).
type Promoter interface {
	RollBack(ctx context.Context, env envref.Env, user, reason string) (promote.Rollback, error)
	RollBackConfig(ctx context.Context, env envref.Env, user, reason string) (promote.Rollback, error)
	Release(ctx context.Context, env envref.Env, user, reason string) (store.Hold, error)
	OverrideWindow(ctx context.Context, env envref.Env, commit, user, reason string) (promote.Overridden, error)
}

// API serves the governance requests.
type API struct {
	Users    audit.Users
	Resolve  func(ctx context.Context, controlPlane envref.Repo, env string) (envref.Env, error)
	Promoter Promoter
	Logger   zerolog.Logger
}

// Request is the body of the requests.
type Request struct {
	ControlPlane string `json:"controlPlane"` // OWNER/REPO
	Environment  string `json:"environment"`
	Reason       string `json:"reason"`
	// Config, for a rollback, reverts the latest config change of the environment branch
	// instead of pinning the previous deployment.
	Config bool `json:"config,omitempty"`
	// Commit, for an override, is the main commit to promote (default: the one a promotion
	// into the environment would pin now).
	Commit string `json:"commit,omitempty"`
}

// needs is the permission on the control plane a request needs.
type needs int

const (
	needsWrite needs = iota
	needsAdmin
)

// Register adds the routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/rollback", a.serveRollback)
	mux.HandleFunc("POST /api/v1/release", a.serveRelease)
	mux.HandleFunc("POST /api/v1/override", a.serveOverride)
}

func (a *API) serveRollback(w http.ResponseWriter, r *http.Request) {
	a.serve(w, r, "rollback", needsWrite, func(ctx context.Context, req Request, env envref.Env, user string) (any, error) {
		if req.Config {
			return a.Promoter.RollBackConfig(ctx, env, user, req.Reason)
		}
		return a.Promoter.RollBack(ctx, env, user, req.Reason)
	})
}

func (a *API) serveRelease(w http.ResponseWriter, r *http.Request) {
	a.serve(w, r, "release", needsWrite, func(ctx context.Context, req Request, env envref.Env, user string) (any, error) {
		return a.Promoter.Release(ctx, env, user, req.Reason)
	})
}

func (a *API) serveOverride(w http.ResponseWriter, r *http.Request) {
	a.serve(w, r, "override", needsAdmin, func(ctx context.Context, req Request, env envref.Env, user string) (any, error) {
		return a.Promoter.OverrideWindow(ctx, env, req.Commit, user, req.Reason)
	})
}

// serve reads and checks a request, authenticates its user and runs do.
func (a *API) serve(w http.ResponseWriter, r *http.Request, what string, perm needs, do func(context.Context, Request, envref.Env, string) (any, error)) {
	req, cp, err := readRequest(r)
	if err != nil {
		reply(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	access, err := a.Users.Access(r.Context(), audit.Token(r), req.ControlPlane)
	switch {
	case errors.Is(err, audit.ErrUnauthenticated):
		reply(w, http.StatusUnauthorized, map[string]string{"error": err.Error()})
		return
	case err != nil:
		a.Logger.Warn().Err(err).Msg(what + " API: checking a user's access")
		reply(w, http.StatusBadGateway, map[string]string{"error": "GitHub could not be asked for the user's access"})
		return
	case perm == needsAdmin && !access.Admin:
		reply(w, http.StatusForbidden, map[string]string{"error": "admin permission on " + req.ControlPlane + " is required"})
		return
	case !access.Write:
		reply(w, http.StatusForbidden, map[string]string{"error": "write permission on " + req.ControlPlane + " is required"})
		return
	}
	env, err := a.Resolve(r.Context(), cp, req.Environment)
	if err != nil {
		reply(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		return
	}
	ctx := a.Logger.With().Str("environment", env.Name).Str("user", access.Login).Logger().WithContext(r.Context())
	out, err := do(ctx, req, env, access.Login)
	switch {
	case errors.Is(err, promote.ErrNothingToRollBack), errors.Is(err, promote.ErrNotHeld), errors.Is(err, promote.ErrNoPromotion),
		errors.Is(err, promote.ErrNotConfigChange), errors.Is(err, promote.ErrNothingToOverride), errors.Is(err, promote.ErrRefused):
		reply(w, http.StatusConflict, map[string]string{"error": err.Error()})
	case err != nil:
		a.Logger.Error().Err(err).Str("environment", env.Name).Msg(what + " failed")
		reply(w, http.StatusInternalServerError, map[string]string{"error": what + " failed: " + err.Error()})
	default:
		reply(w, http.StatusOK, out)
	}
}

// readRequest reads a bounded JSON body and checks its fields.
func readRequest(r *http.Request) (Request, envref.Repo, error) {
	var req Request
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBodyBytes+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, envref.Repo{}, fmt.Errorf("body: a JSON object {controlPlane, environment, reason, config, commit} of at most %d bytes: %w", maxBodyBytes, err)
	}
	owner, name, ok := strings.Cut(req.ControlPlane, "/")
	switch {
	case !ok || owner == "" || name == "" || strings.Contains(name, "/") || len(req.ControlPlane) > maxNameLength:
		return req, envref.Repo{}, fmt.Errorf("controlPlane: %q is not OWNER/REPO", req.ControlPlane)
	case req.Environment == "" || len(req.Environment) > maxNameLength:
		return req, envref.Repo{}, errors.New("environment: required")
	case strings.TrimSpace(req.Reason) == "":
		return req, envref.Repo{}, errors.New("reason: required")
	case len(req.Reason) > maxReasonLen:
		return req, envref.Repo{}, fmt.Errorf("reason: longer than %d bytes", maxReasonLen)
	case req.Commit != "" && !plumbing.IsHash(req.Commit):
		return req, envref.Repo{}, fmt.Errorf("commit: %q is not a full commit ID (40 hexadecimal digits)", ellipsis.Cut(req.Commit, 50))
	}
	req.Commit = strings.ToLower(req.Commit)
	return req, envref.Repo{Owner: owner, Name: name}, nil
}

func reply(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
