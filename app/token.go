package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"

	"github.com/kalypso-gitops/kalypso/config"
)

// keptTokens is how many recent tokens per installation are remembered for redaction.
const keptTokens = 3

// tokenSource mints installation tokens through one ghinstallation transport
// per installation, which caches each token until a minute before it expires.
type tokenSource struct {
	appID   int64
	key     []byte
	keyFile string
	baseURL string
	timeout time.Duration
	base    http.RoundTripper
	secret  string

	mu     sync.Mutex
	byID   map[int64]*ghinstallation.Transport
	issued map[int64][]string
}

// newTokenSource prepares a token source for the configured App and API URL.
func newTokenSource(cfg *config.Config, key []byte, base http.RoundTripper) *tokenSource {
	return &tokenSource{
		appID:   cfg.GitHub.App.IntegrationID,
		key:     key,
		keyFile: cfg.GitHub.App.PrivateKeyFile,
		baseURL: cfg.APIBaseURL(),
		timeout: cfg.GitHub.Timeout.Std(),
		base:    base,
		secret:  cfg.GitHub.App.WebhookSecret.Value(),
		byID:    map[int64]*ghinstallation.Transport{},
		issued:  map[int64][]string{},
	}
}

// InstallationToken returns a valid installation access token, for git over
// HTTPS (user "x-access-token"). Tokens are cached until shortly before they
// expire; ask again before every fetch or push. Never log the result.
func (s *Server) InstallationToken(ctx context.Context, installationID int64) (string, error) {
	if installationID <= 0 {
		return "", fmt.Errorf("app: installation token: invalid installation ID %d", installationID)
	}
	tr, err := s.tokens.transport(installationID)
	if err != nil {
		return "", fmt.Errorf("app: installation %d token: %w", installationID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.tokens.timeout)
	defer cancel()
	token, err := tr.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("app: installation %d token: %w", installationID, err)
	}
	s.tokens.remember(installationID, token)
	return token, nil
}

// transport returns the installation's cached transport, creating it on first use.
func (t *tokenSource) transport(id int64) (*ghinstallation.Transport, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr, ok := t.byID[id]; ok {
		return tr, nil
	}
	var tr *ghinstallation.Transport
	var err error
	if t.keyFile != "" {
		tr, err = ghinstallation.NewKeyFromFile(t.base, t.appID, id, t.keyFile)
	} else {
		tr, err = ghinstallation.New(t.base, t.appID, id, t.key)
	}
	if err != nil {
		return nil, fmt.Errorf("installation transport: %w", err)
	}
	tr.BaseURL = t.baseURL
	t.byID[id] = tr
	return tr, nil
}

// remember records a token so that redact can hide it.
func (t *tokenSource) remember(id int64, token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.issued[id]
	for _, known := range list {
		if known == token {
			return
		}
	}
	list = append(list, token)
	if len(list) > keptTokens {
		list = list[len(list)-keptTokens:]
	}
	t.issued[id] = list
}

// redact replaces every recent installation token and the webhook secret in s.
func (t *tokenSource) redact(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, list := range t.issued {
		for _, token := range list {
			s = strings.ReplaceAll(s, token, "[redacted]")
		}
	}
	if t.secret != "" {
		s = strings.ReplaceAll(s, t.secret, "[redacted]")
	}
	return s
}
