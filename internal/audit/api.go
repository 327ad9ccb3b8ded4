package audit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// Reader reads the audit trail in order (implemented by *store.Store).
type Reader interface {
	Audit(ctx context.Context, after int64, limit int) ([]store.AuditEntry, error)
}

// API serves GET /api/v1/audit to users with read permission on the control plane asked for.
type API struct {
	Trail  Reader
	Users  Users
	Logger zerolog.Logger
}

// scanPage is how many entries are read from the store at a time.
const scanPage = 500

// Register adds GET /api/v1/audit to mux.
func (a *API) Register(mux *http.ServeMux) { mux.HandleFunc("GET /api/v1/audit", a.serve) }

// Page is a page of the JSON answer: the entries, and the sequence number to ask after for
// the next page (0 when the trail ends).
type Page struct {
	Entries []Entry `json:"entries"`
	Next    int64   `json:"next"`
}

// serve answers a JSON page (default) or, with format=jsonl, every matching entry as JSON lines.
func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query())
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	access, err := a.Users.Access(r.Context(), Token(r), f.ControlPlane)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		httpError(w, http.StatusUnauthorized, err)
		return
	case err != nil:
		a.Logger.Warn().Err(err).Msg("audit API: checking a user's access")
		httpError(w, http.StatusBadGateway, errors.New("GitHub could not be asked for the user's access"))
		return
	case !access.Read:
		httpError(w, http.StatusForbidden, errors.New("read permission on "+f.ControlPlane+" is required"))
		return
	}
	if r.URL.Query().Get("format") == "jsonl" {
		a.export(w, r, f)
		return
	}
	page := Page{Entries: []Entry{}}
	err = Scan(r.Context(), a.Trail, f, func(e Entry) bool {
		page.Entries = append(page.Entries, e)
		page.Next = e.Seq
		return len(page.Entries) < f.Limit
	})
	if err != nil {
		httpError(w, http.StatusInternalServerError, errors.New("the audit trail could not be read"))
		return
	}
	if len(page.Entries) < f.Limit {
		page.Next = 0
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// export streams every matching entry as JSON lines.
func (a *API) export(w http.ResponseWriter, r *http.Request, f Filter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="audit.jsonl"`)
	enc := json.NewEncoder(w)
	err := Scan(r.Context(), a.Trail, f, func(e Entry) bool { return enc.Encode(e) == nil })
	if err != nil {
		a.Logger.Warn().Err(err).Msg("audit API: export stopped")
	}
}

// Scan calls fn with each entry that passes f, in order, from after f.After, until fn returns
// false or the trail ends.
func Scan(ctx context.Context, trail Reader, f Filter, fn func(Entry) bool) error {
	after := f.After
	for {
		page, err := trail.Audit(ctx, after, scanPage)
		if err != nil {
			return err
		}
		for _, se := range page {
			after = se.Seq
			if e := decode(se); f.Matches(e) && !fn(e) {
				return nil
			}
		}
		if len(page) < scanPage {
			return nil
		}
	}
}

func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
