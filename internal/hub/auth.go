package hub

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Headers of a report request.
const (
	// HeaderSignature carries Flux's generic-hmac signature: sha256=<hex HMAC-SHA256 of the body>.
	HeaderSignature = "X-Signature"
	// HeaderControlPlane names the control plane (OWNER/REPO) whose credentials sign the report.
	HeaderControlPlane = "X-Kalypso-Control-Plane"
)

// Credentials are the keys reports of one control plane are checked with.
type Credentials struct {
	Secret      []byte // HMAC-SHA256 key of signed reports
	BearerToken []byte // token of Argo CD reports
}

// Keys gives the credentials of a control plane ("" for the defaults, used by reports that
// name no control plane).
type Keys func(controlPlane string) Credentials

// ErrUnauthenticated wraps every reason a report is refused as unauthenticated.
var ErrUnauthenticated = errors.New("unauthenticated report")

// Authenticated says how a report was authenticated and with which key, so that it is
// attributed only to control planes that use that key.
type Authenticated struct {
	ControlPlane string // from HeaderControlPlane; "" when the report names none
	Bearer       bool   // authenticated by a bearer token (Argo CD), else by HMAC
	key          []byte
}

// Matches reports whether a control plane's credentials hold the key the report used.
func (a Authenticated) Matches(c Credentials) bool {
	want := c.Secret
	if a.Bearer {
		want = c.BearerToken
	}
	return len(want) > 0 && hmac.Equal(want, a.key)
}

var controlPlaneRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$`)

// authenticate checks a report's signature (X-Signature) or bearer token (Authorization)
// with the credentials of the control plane it names, or the defaults.
func authenticate(r *http.Request, body []byte, keys Keys) (Authenticated, error) {
	a := Authenticated{ControlPlane: r.Header.Get(HeaderControlPlane)}
	if a.ControlPlane != "" && !controlPlaneRE.MatchString(a.ControlPlane) {
		return a, fmt.Errorf("%w: %s is not OWNER/REPO", ErrUnauthenticated, HeaderControlPlane)
	}
	cred := keys(a.ControlPlane)
	if sig := r.Header.Get(HeaderSignature); sig != "" {
		if len(cred.Secret) == 0 {
			return a, fmt.Errorf("%w: no report secret for this control plane (reports.secret, reports.controlPlanes)", ErrUnauthenticated)
		}
		if !ValidSignature(cred.Secret, body, sig) {
			return a, fmt.Errorf("%w: bad %s (sha256=<hex HMAC-SHA256 of the body>)", ErrUnauthenticated, HeaderSignature)
		}
		a.key = cred.Secret
		return a, nil
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return a, fmt.Errorf("%w: unsigned (send %s, or Authorization: Bearer for Argo CD)", ErrUnauthenticated, HeaderSignature)
	}
	if !overHTTPS(r) {
		return a, fmt.Errorf("%w: a bearer token is accepted over HTTPS only", ErrUnauthenticated)
	}
	if len(cred.BearerToken) == 0 || subtle.ConstantTimeCompare(cred.BearerToken, []byte(token)) != 1 {
		return a, fmt.Errorf("%w: bad bearer token", ErrUnauthenticated)
	}
	a.Bearer, a.key = true, cred.BearerToken
	return a, nil
}

// overHTTPS reports whether the request came over TLS, to the app or to the proxy in front
// of it (X-Forwarded-Proto, which such a proxy sets).
func overHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// ValidSignature checks sig = "sha256=" + lowercase hex HMAC-SHA256(body, key), in constant time.
func ValidSignature(key, body []byte, sig string) bool {
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	return hmac.Equal(got, mac(key, body))
}

// Sign returns the X-Signature value of body under key, as Flux's generic-hmac writes it.
func Sign(key, body []byte) string { return "sha256=" + hex.EncodeToString(mac(key, body)) }

func mac(key, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(body)
	return h.Sum(nil)
}
