package fleetview

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
)

// DefaultSessionRefresh is how long a session is trusted, by default, before its token is
// checked with GitHub again.
const DefaultSessionRefresh = 5 * time.Minute

// session returns the request's session. One whose token GitHub last accepted more than
// SessionRefresh ago is checked again (GET /user with the token) and its cookie renewed: a
// token revoked at sign-out, or by the user on GitHub, ends the session on every replica
// within SessionRefresh. A session signed out on this replica ends at once.
func (s *Service) session(w http.ResponseWriter, r *http.Request) (Session, error) {
	sess, err := s.seal.fromRequest(r)
	if err != nil {
		return Session{}, err
	}
	if s.revoked.has(sess.Token) {
		return Session{}, ErrNoSession
	}
	now := s.opts.Sources.now()
	if now.Sub(sess.Checked) < s.opts.SessionRefresh {
		return sess, nil
	}
	login, err := s.opts.OAuth.login(r.Context(), sess.Token)
	if err != nil {
		return Session{}, err
	}
	if login != sess.Login {
		return Session{}, ErrNoSession
	}
	sess.Checked = now
	value, err := s.seal.seal(sess)
	if err != nil {
		return Session{}, err
	}
	http.SetCookie(w, s.seal.cookie(value, sess.Expires, s.opts.OAuth.secure()))
	return sess, nil
}

// serveLogout ends the session: the user's token is revoked at GitHub (so the session ends
// on every replica within SessionRefresh) and remembered as signed out here (so it ends on
// this replica at once), and the cookie is cleared.
func (s *Service) serveLogout(w http.ResponseWriter, r *http.Request) {
	if sess, err := s.seal.fromRequest(r); err == nil {
		s.revoked.add(sess.Token, s.opts.Sources.now().Add(s.opts.SessionRefresh))
		if err := s.opts.OAuth.revoke(r.Context(), sess.Token); err != nil {
			s.opts.Logger.Warn().Err(err).Str("login", sess.Login).Msg("fleet sign-out: the token could not be revoked at GitHub; other replicas keep the session until it expires")
		}
	}
	http.SetCookie(w, s.clearedSession())
	noStore(w)
	http.Redirect(w, r, "/fleet/signed-out", http.StatusSeeOther)
}

// signedOutPage is shown after sign-out. It does not lead to /fleet/login by itself: that
// would sign the user in again at once while they are signed in to GitHub.
const signedOutPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Signed out of Kalypso</title></head>
<body style="font-family:system-ui,sans-serif;margin:1.5rem">
<h1 style="font-size:1.4rem">Signed out</h1>
<p>You are signed out of the Kalypso fleet view, and its access to your GitHub account is revoked.</p>
<p><a href="/fleet/login">Sign in again</a></p>
</body></html>
`

// serveSignedOut answers /fleet/signed-out.
func (s *Service) serveSignedOut(w http.ResponseWriter, _ *http.Request) {
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	_, _ = w.Write([]byte(signedOutPage))
}

// clearedSession is a cookie that removes the session cookie.
func (s *Service) clearedSession() *http.Cookie {
	c := s.seal.cookie("", time.Unix(0, 0), s.opts.OAuth.secure())
	c.MaxAge = -1
	return c
}

// revoke revokes a user token at GitHub (DELETE /applications/{client_id}/token, with the
// App's client ID and secret); a token GitHub no longer knows is revoked already.
func (o *OAuth) revoke(ctx context.Context, token string) error {
	base := o.HTTP.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client := &http.Client{Timeout: o.HTTP.Timeout, Transport: &github.BasicAuthTransport{Username: o.ClientID, Password: o.ClientSecret, Transport: base}}
	gh, err := github.NewClient(client).WithEnterpriseURLs(o.APIURL, o.APIURL)
	if err != nil {
		return fmt.Errorf("fleet: revoke client: %w", err)
	}
	if _, err := gh.Authorizations.Revoke(ctx, o.ClientID, token); err != nil && !notFound(err) {
		return fmt.Errorf("fleet: revoke the user's token: %w", err)
	}
	return nil
}

// maxRevocations bounds the tokens remembered as signed out on one replica.
const maxRevocations = 10000

// revocations remembers the tokens signed out on this replica until GitHub's own answer
// makes them refused everywhere (SessionRefresh after the sign-out).
type revocations struct {
	mu     sync.Mutex
	now    func() time.Time
	tokens map[[32]byte]time.Time // token digest → until when to remember it
}

func newRevocations(now func() time.Time) *revocations {
	return &revocations{now: now, tokens: map[[32]byte]time.Time{}}
}

// add remembers a token until a time; when full, expired entries go first, then the one
// that would expire soonest.
func (v *revocations) add(token string, until time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.tokens) >= maxRevocations {
		now := v.now()
		var soonest [32]byte
		var first time.Time
		for k, t := range v.tokens {
			if !now.Before(t) {
				delete(v.tokens, k)
			} else if first.IsZero() || t.Before(first) {
				soonest, first = k, t
			}
		}
		if len(v.tokens) >= maxRevocations {
			delete(v.tokens, soonest)
		}
	}
	v.tokens[sha256.Sum256([]byte(token))] = until
}

// has reports whether a token was signed out here and is still remembered.
func (v *revocations) has(token string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	until, ok := v.tokens[sha256.Sum256([]byte(token))]
	return ok && v.now().Before(until)
}
