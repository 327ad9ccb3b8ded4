package fleetview

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/plural"
)

//go:embed templates/fleet.html
var templateFS embed.FS

// page is the /fleet template; html/template escapes every value.
var page = template.Must(template.New("fleet.html").Funcs(template.FuncMap{
	"stateText": stateText,
	"cardState": cardState,
	"duration":  durationText,
	"short":     short,
	"count":     plural.Count,
}).ParseFS(templateFS, "templates/fleet.html"))

// pageData is what the page shows.
type pageData struct {
	Login string
	Fleet *Fleet
}

// RenderPage writes the HTML fleet view of f for login.
func RenderPage(w io.Writer, login string, f *Fleet) error {
	if err := page.Execute(w, pageData{Login: login, Fleet: f}); err != nil {
		return fmt.Errorf("fleet: render page: %w", err)
	}
	return nil
}

// pageCSP is the Content-Security-Policy of the HTML pages: no script, inline styles only.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'"

// servePage answers /fleet: a redirect to sign-in without a session.
func (s *Service) servePage(w http.ResponseWriter, r *http.Request) {
	f, sess, err := s.visible(w, r)
	if err != nil {
		s.fail(w, err, false)
		return
	}
	var buf bytes.Buffer
	if err := RenderPage(&buf, sess.Login, f); err != nil {
		s.fail(w, err, false)
		return
	}
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	_, _ = buf.WriteTo(w)
}

// stateText describes a promotion state in words.
func stateText(p Promotion) string {
	switch p.State {
	case StateWaiting:
		return fmt.Sprintf("waiting %d/%s", p.Compliant, plural.Count(p.Expected, "cluster"))
	case StateDeployed:
		return "deployed to " + plural.Count(p.Expected, "cluster")
	case StateFailed:
		return "failed"
	case StateAwaitingMerge:
		return "awaiting merge"
	case StateAwaitingApproval:
		return "awaiting approval"
	case StateSuperseded:
		return "superseded"
	}
	return "unknown"
}

// cardState is the state an environment's card shows: a render with errors first, then the
// promotion's.
func cardState(e Environment) string {
	if e.Render.State == RenderError {
		return RenderError
	}
	return e.Promotion.State
}

// durationText formats seconds, or a dash.
func durationText(s *Seconds) string {
	if s == nil {
		return "—"
	}
	return (time.Duration(*s) * time.Second).String()
}
