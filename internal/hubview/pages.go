package hubview

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"time"
)

//go:embed templates/hub.html
var templateFS embed.FS

// page is the template of every hub page; html/template escapes every value.
var page = template.Must(template.New("hub.html").Funcs(template.FuncMap{
	"short": func(sha string) string { return sha[:min(7, len(sha))] },
	"ago":   ago,
	"secs":  func(s int64) string { return (time.Duration(s) * time.Second).String() },
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
	"pct": func(f *float64) string {
		if f == nil {
			return "—"
		}
		return fmt.Sprintf("%.0f%%", *f*100)
	},
	"dur": func(f *float64) string {
		if f == nil {
			return "—"
		}
		return (time.Duration(*f) * time.Second).Round(time.Second).String()
	},
	"lead": func(s *int64) string {
		if s == nil {
			return "—"
		}
		return (time.Duration(*s) * time.Second).String()
	},
}).ParseFS(templateFS, "templates/hub.html"))

// pageData is what a hub page shows.
type pageData struct {
	Login string
	View  string
	Q     query
	Data  any
	Now   time.Time
}

// servePage answers a view as HTML: a redirect to sign-in without a session.
func (s *Service) servePage(name string, v view) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		login, q, out, err := s.answer(r, v)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if errors.Is(err, s.noSession) {
			http.Redirect(w, r, "/fleet/login", http.StatusSeeOther)
			return
		}
		if err != nil {
			status, msg := s.status(err)
			http.Error(w, msg, status)
			return
		}
		var buf bytes.Buffer
		if err := page.Execute(&buf, pageData{Login: login, View: name, Q: q, Data: out, Now: time.Now()}); err != nil {
			s.logger.Warn().Err(err).Msg("hub page")
			http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		_, _ = buf.WriteTo(w)
	}
}

// ago says how long ago t was, in whole seconds, minutes or hours.
func ago(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := time.Since(t).Round(time.Second)
	if d > time.Hour {
		d = d.Round(time.Minute)
	}
	return d.String() + " ago"
}
