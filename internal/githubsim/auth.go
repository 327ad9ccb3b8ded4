package githubsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v4"
)

// accessToken is an installation access token.
type accessToken struct {
	token   string
	inst    int64
	expires time.Time
}

// GenerateKey returns a new 2048-bit RSA key for a simulated App.
func GenerateKey() (*rsa.PrivateKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("githubsim: generate key: %w", err)
	}
	return key, nil
}

func appKey(opts Options) (*rsa.PrivateKey, error) {
	if opts.PrivateKey != nil {
		return opts.PrivateKey, nil
	}
	if len(opts.PrivateKeyPEM) > 0 {
		key, err := jwt.ParseRSAPrivateKeyFromPEM(opts.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("githubsim: parse private key: %w", err)
		}
		return key, nil
	}
	return GenerateKey()
}

// PrivateKeyPEM returns the App's private key as PKCS#1 PEM, as GitHub issues it.
func (s *Server) PrivateKeyPEM() []byte {
	der := x509.MarshalPKCS1PrivateKey(s.key)
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})
}

// AppID returns the App's ID.
func (s *Server) AppID() int64 { return s.opts.AppID }

// BotLogin returns the login of the App's bot user, "<slug>[bot]".
func (s *Server) BotLogin() string { return s.opts.AppSlug + "[bot]" }

// InstallationToken issues an installation token without a JWT round trip.
func (s *Server) InstallationToken(installationID int64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.installs[installationID]; !ok {
		return "", fmt.Errorf("githubsim: no installation %d", installationID)
	}
	return s.issueTokenLocked(installationID).token, nil
}

// ExpireTokens makes every issued installation token invalid (401 from then on).
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]*accessToken{}
}

func (s *Server) issueTokenLocked(inst int64) *accessToken {
	t := &accessToken{token: "ghs_" + randomString(36), inst: inst, expires: s.now().Add(s.opts.TokenTTL)}
	s.tokens[t.token] = t
	return t
}

// authenticate checks the credentials the route needs and returns the
// rate-limit bucket of the caller.
func (s *Server) authenticate(c *call) (string, error) {
	scheme, cred, _ := strings.Cut(c.r.Header.Get("Authorization"), " ")
	scheme = strings.ToLower(scheme)
	if c.route.auth == authBasic {
		return s.authenticateClient(c)
	}
	if c.route.auth == authJWT {
		if scheme != "bearer" {
			return "", newError(http.StatusUnauthorized, "A JSON web token could not be decoded")
		}
		if err := s.verifyJWT(cred); err != nil {
			return "", newError(http.StatusUnauthorized, "'Expiration time' claim ('exp') or signature is invalid: %v", err)
		}
		c.actor = s.BotLogin()
		return "app", nil
	}
	if scheme != "token" && scheme != "bearer" {
		return "", newError(http.StatusUnauthorized, "Requires authentication")
	}
	if login, ok := s.userOfToken(cred); ok {
		if !userRoute(c.route) {
			return "", newError(http.StatusForbidden, "Resource not accessible by integration")
		}
		c.user, c.actor = login, login
		return "user:" + strings.ToLower(login), nil
	}
	inst, err := s.tokenInstallation(cred)
	if err != nil {
		return "", err
	}
	c.inst, c.actor = inst, s.BotLogin()
	return "inst:" + strconv.FormatInt(inst.id, 10), nil
}

func (s *Server) tokenInstallation(token string) (*installation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[strings.TrimSpace(token)]
	if !ok || !s.now().Before(t.expires) {
		return nil, newError(http.StatusUnauthorized, "Bad credentials")
	}
	inst, ok := s.installs[t.inst]
	if !ok {
		return nil, newError(http.StatusUnauthorized, "Bad credentials")
	}
	if inst.suspended {
		return nil, newError(http.StatusForbidden, "This installation has been suspended")
	}
	return inst, nil
}

// verifyJWT checks an App JWT: RS256, signed by the App key, iss = App ID,
// not expired and not valid for more than ten minutes.
func (s *Server) verifyJWT(raw string) error {
	parser := jwt.Parser{ValidMethods: []string{"RS256"}}
	claims := jwt.MapClaims{}
	_, err := parser.ParseWithClaims(strings.TrimSpace(raw), claims, func(*jwt.Token) (any, error) {
		return &s.key.PublicKey, nil
	})
	if err != nil {
		return fmt.Errorf("parse JWT: %w", err)
	}
	if !issuerMatches(claims["iss"], s.opts.AppID) {
		return errors.New("iss does not match the App ID")
	}
	exp, ok := claims["exp"].(float64)
	if !ok {
		return errors.New("missing exp")
	}
	if time.Until(time.Unix(int64(exp), 0)) > 11*time.Minute {
		return errors.New("exp is too far in the future")
	}
	return nil
}

func issuerMatches(iss any, appID int64) bool {
	switch v := iss.(type) {
	case string:
		return v == strconv.FormatInt(appID, 10)
	case float64:
		return int64(v) == appID
	}
	return false
}

// scopeRepo resolves {owner}/{repo} and hides repositories outside the
// caller's installation.
func (s *Server) scopeRepo(c *call) error {
	if !strings.HasPrefix(c.route.pattern, "/repos/{owner}/{repo}") {
		return nil
	}
	rp := s.lookupRepo(c.params["owner"], c.params["repo"])
	if rp == nil || (c.inst != nil && rp.installID != c.inst.id) {
		return notFound()
	}
	if c.user != "" && !userPermissions(userRole(rp, c.user))["pull"] {
		return notFound()
	}
	c.repo = rp
	return nil
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}
