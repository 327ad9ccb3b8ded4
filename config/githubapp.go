package config

import (
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
