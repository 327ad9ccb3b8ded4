package fleetview

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// SessionCookie is the name of the session cookie.
const SessionCookie = "kalypso_session"

// ErrNoSession means the request carries no valid, unexpired session.
var ErrNoSession = errors.New("fleet: no valid session")

// Session is a signed-in user. It travels in a cookie sealed with AES-256-GCM under a key
// derived from fleet.sessionKey: authenticated (a changed byte is refused) and unreadable to
// the browser, since it holds the user's GitHub token.
type Session struct {
	Login   string    `json:"l"`
	Token   string    `json:"t"`
	Expires time.Time `json:"e"`
	Checked time.Time `json:"c"` // when GitHub last accepted the token
}

// sealer seals and opens session cookies.
type sealer struct {
	aead cipher.AEAD
	ttl  time.Duration
	now  func() time.Time
}

// newSealer derives the cookie key from the session key.
func newSealer(sessionKey string, ttl time.Duration, now func() time.Time) (*sealer, error) {
	key := sha256.Sum256([]byte("kalypso fleet session\x00" + sessionKey))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("fleet: session cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("fleet: session cipher: %w", err)
	}
	return &sealer{aead: aead, ttl: ttl, now: now}, nil
}

// seal encodes a session as a cookie value.
func (s *sealer) seal(sess Session) (string, error) {
	plain, err := json.Marshal(sess)
	if err != nil {
		return "", fmt.Errorf("fleet: encode session: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := s.aead.Seal(nonce, nonce, plain, []byte(SessionCookie))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// open decodes a cookie value; a forged, damaged or expired one is ErrNoSession.
func (s *sealer) open(value string) (Session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() || len(value) > 4096 {
		return Session{}, ErrNoSession
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(SessionCookie))
	if err != nil {
		return Session{}, ErrNoSession
	}
	var sess Session
	if json.Unmarshal(plain, &sess) != nil || sess.Login == "" || sess.Token == "" || !s.now().Before(sess.Expires) {
		return Session{}, ErrNoSession
	}
	return sess, nil
}

// fromRequest returns the request's session.
func (s *sealer) fromRequest(r *http.Request) (Session, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return Session{}, ErrNoSession
	}
	return s.open(c.Value)
}

// cookie builds the session cookie: HTTP-only, SameSite=Lax (it must come back on the
// redirect from GitHub), Secure on https, expiring with the session.
func (s *sealer) cookie(value string, expires time.Time, secure bool) *http.Cookie {
	return &http.Cookie{Name: SessionCookie, Value: value, Path: "/", Expires: expires,
		MaxAge: max(1, int(time.Until(expires).Seconds())), HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}
