package config

import (
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"github.com/palantir/go-githubapp/githubapp"
)

// PrivateKeyPEM returns the App's PEM private key, inline or read from privateKeyFile.
func (c *Config) PrivateKeyPEM() ([]byte, error) {
	if c.GitHub.App.PrivateKey != "" {
		return []byte(c.GitHub.App.PrivateKey.Value()), nil
	}
	if c.GitHub.App.PrivateKeyFile == "" {
		return nil, fmt.Errorf("no private key: set %s or %s", named("github.app.privateKey"), named("github.app.privateKeyFile"))
	}
	b, err := os.ReadFile(c.GitHub.App.PrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("read github.app.privateKeyFile: %w", err)
	}
	return b, nil
}

// GitHubAppConfig builds the equivalent go-githubapp configuration (reading the key file if needed).
func (c *Config) GitHubAppConfig() (githubapp.Config, error) {
	key, err := c.PrivateKeyPEM()
	if err != nil {
		return githubapp.Config{}, err
	}
	var g githubapp.Config
	g.WebURL = c.GitHub.WebURL
	g.V3APIURL = c.GitHub.V3APIURL
	g.V4APIURL = c.GitHub.GraphQLURL
	g.App.IntegrationID = c.GitHub.App.IntegrationID
	g.App.WebhookSecret = c.GitHub.App.WebhookSecret.Value()
	g.App.PrivateKey = string(key)
	return g, nil
}

// APIBaseURL returns the REST API URL without its trailing slash, the form ghinstallation expects.
func (c *Config) APIBaseURL() string {
	return strings.TrimSuffix(c.GitHub.V3APIURL, "/")
}

// PrivateKeyError explains why the App's private key (key, as read) cannot be used: it names
// the setting the key comes from, the file when there is one, and what the PEM holds instead.
// The parser's error stays available to errors.Is and errors.As.
func (c *Config) PrivateKeyError(key []byte, err error) error {
	setting := named("github.app.privateKey")
	if c.GitHub.App.PrivateKey == "" {
		setting = fmt.Sprintf("%s: file %s", named("github.app.privateKeyFile"), c.GitHub.App.PrivateKeyFile)
	}
	what, known := describePEM(key)
	if !known {
		what += ": " + err.Error()
	}
	return &keyError{msg: setting + ": " + what, err: err}
}

// keyError is an unusable private key, described for the operator.
type keyError struct {
	msg string
	err error
}

// Error implements error.
func (e *keyError) Error() string { return e.msg }

// Unwrap returns the parser's error.
func (e *keyError) Unwrap() error { return e.err }

// describePEM says what a PEM text holds, for a key that is not an RSA private key, and
// whether that is the whole explanation.
func describePEM(data []byte) (string, bool) {
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return "not PEM-encoded", true
	case strings.Contains(block.Type, "PUBLIC KEY"):
		return "holds a public key (" + block.Type + "), not the GitHub App's private key (App settings: Private keys, Generate a private key)", true
	case strings.Contains(block.Type, "CERTIFICATE"):
		return "holds a certificate, not the GitHub App's private key", true
	default:
		return "not a usable RSA private key (PEM block " + block.Type + ")", false
	}
}
