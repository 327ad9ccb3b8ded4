package fleetview

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Badge is what a status badge shows: the environment, its state and its deployed short SHA.
type Badge struct {
	Label   string // the environment
	Message string // state, and the deployed short SHA
	Color   string // a fixed colour of the state
}

// badgeSVG is a shields-style flat badge; every value is escaped.
var badgeSVG = template.Must(template.New("badge").Parse(`<svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="20" role="img" aria-label="{{.B.Label}}: {{.B.Message}}"><title>{{.B.Label}}: {{.B.Message}}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="{{.W}}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="{{.LW}}" height="20" fill="#555"/><rect x="{{.LW}}" width="{{.MW}}" height="20" fill="{{.B.Color}}"/><rect width="{{.W}}" height="20" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11"><text x="{{.LX}}" y="14">{{.B.Label}}</text><text x="{{.MX}}" y="14">{{.B.Message}}</text></g></svg>
`))

// unknownColor is the colour of states without one of their own.
const unknownColor = "#9f9f9f"

// stateColor is the badge colour of a state.
// heldColor is the badge colour of a held environment.
const heldColor = "#fe7d37"

func stateColor(state string) string {
	switch state {
	case StateDeployed:
		return "#4c1"
	case StateFailed:
		return "#e05d44"
	case StateWaiting, StateAwaitingMerge:
		return "#dfb317"
	case StateAwaitingApproval:
		return "#8250df"
	}
	return unknownColor
}

// BadgeFor finds an environment in the fleet; an unknown one gives the "unknown" badge.
func BadgeFor(f *Fleet, repo, env string) Badge {
	b := Badge{Label: env, Message: "unknown", Color: unknownColor}
	for _, cp := range f.ControlPlanes {
		if !strings.EqualFold(cp.Repo, repo) {
			continue
		}
		for _, e := range cp.Environments {
			if e.Name != env {
				continue
			}
			b = badgeOf(e)
		}
	}
	return b
}

// badgeOf is the badge of an environment: a render with errors, with the environment
// branch's commit it read; else the promotion's state with the deployed commit.
func badgeOf(e Environment) Badge {
	if e.Render.State == RenderError {
		b := Badge{Label: e.Name, Message: e.Render.Summary, Color: stateColor(StateFailed)}
		if c := e.Render.Commit; c != nil {
			b.Message += " " + c.Short
		}
		return b
	}
	b := Badge{Label: e.Name, Message: stateText(e.Promotion), Color: stateColor(e.Promotion.State)}
	if d := e.Promotion.Deployed; d != nil {
		b.Message += " " + d.Short
	}
	if e.Governance.Hold != nil {
		b.Message, b.Color = "held · "+b.Message, heldColor
	}
	return b
}

// SVG renders the badge.
func (b Badge) SVG() []byte {
	lw, mw := textWidth(b.Label), textWidth(b.Message)
	var buf bytes.Buffer
	_ = badgeSVG.Execute(&buf, map[string]any{"B": b, "W": lw + mw, "LW": lw, "MW": mw, "LX": lw / 2, "MX": lw + mw/2})
	return buf.Bytes()
}

// textWidth estimates the width of Verdana 11px text, with padding.
func textWidth(s string) int { return 7*utf8.RuneCountInString(s) + 10 }

// maxBadgeName bounds the names taken from the URL.
const maxBadgeName = 100

// serveBadge answers /badges/OWNER/REPO/ENV.svg without sign-in. It shows only the state and
// the deployed short SHA, and the same "unknown" badge for anything it does not know.
func (s *Service) serveBadge(w http.ResponseWriter, r *http.Request) {
	owner, repo, file := r.PathValue("owner"), r.PathValue("repo"), r.PathValue("file")
	env, ok := strings.CutSuffix(file, ".svg")
	if !ok || !nameOK(owner) || !nameOK(repo) || !nameOK(env) {
		http.NotFound(w, r)
		return
	}
	b := Badge{Label: env, Message: "unknown", Color: unknownColor}
	if f, err := s.Snapshot(r.Context()); err == nil {
		b = BadgeFor(f, owner+"/"+repo, env)
	} else {
		s.opts.Logger.Warn().Err(err).Msg("badge: fleet cannot be read")
	}
	body := b.SVG()
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d, s-maxage=%d", badgeMaxAge, badgeMaxAge))
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(body)
}

// badgeMaxAge is how long, in seconds, caches (GitHub's image proxy) may keep a badge.
const badgeMaxAge = 60

// nameOK accepts GitHub owner and repository names and DNS-1123 environment names.
func nameOK(s string) bool {
	if s == "" || len(s) > maxBadgeName {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
