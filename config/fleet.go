package config

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Fleet holds the settings of the fleet view (/fleet, /api/v1/fleet) and of the badges.
type Fleet struct {
	Enabled         bool     `yaml:"enabled"`         // serve /fleet and /api/v1/fleet, behind sign-in with GitHub
	PublicURL       string   `yaml:"publicURL"`       // the app's external URL, for the OAuth callback
	ClientID        string   `yaml:"clientID"`        // the GitHub App's OAuth client ID
	ClientSecret    Secret   `yaml:"clientSecret"`    // the GitHub App's OAuth client secret
	SessionKey      Secret   `yaml:"sessionKey"`      // key sealing session cookies (AES-256-GCM)
	SessionTTL      Duration `yaml:"sessionTTL"`      // lifetime of a session cookie
	SessionRefresh  Duration `yaml:"sessionRefresh"`  // how long a session is trusted before GitHub is asked again
	RefreshInterval Duration `yaml:"refreshInterval"` // how long a fleet snapshot is served before it is read again
	Badges          bool     `yaml:"badges"`          // serve /badges/OWNER/REPO/ENV.svg without sign-in
}

// Defaults of the fleet view.
const (
	DefaultFleetSessionTTL      = 8 * time.Hour
	DefaultFleetSessionRefresh  = 5 * time.Minute
	DefaultFleetRefreshInterval = 15 * time.Second
	// MinSessionKeyBytes is the shortest accepted fleet.sessionKey.
	MinSessionKeyBytes = 32
)

// fleetKeys lists the fleet settings, in documentation order.
func fleetKeys() []Key {
	return []Key{
		key("fleet.enabled", "false", "Serve the fleet view (/fleet and /api/v1/fleet) behind sign-in with GitHub; needs publicURL, clientID, clientSecret and sessionKey.",
			boolean(func(c *Config) *bool { return &c.Fleet.Enabled })),
		key("fleet.publicURL", "", "External URL of the app (https://HOST), for the OAuth callback PUBLIC_URL/fleet/callback.",
			str(func(c *Config) *string { return &c.Fleet.PublicURL })),
		key("fleet.clientID", "", "The GitHub App's client ID, for the user authorization (OAuth web) flow.",
			str(func(c *Config) *string { return &c.Fleet.ClientID })),
		key("fleet.clientSecret", "", "The GitHub App's client secret.",
			secret(func(c *Config) *Secret { return &c.Fleet.ClientSecret })),
		key("fleet.sessionKey", "", "Random key (at least 32 bytes) from which the key sealing the session cookies (AES-256-GCM: encrypted and authenticated) is derived; changing it signs everyone out.",
			secret(func(c *Config) *Secret { return &c.Fleet.SessionKey })),
		key("fleet.sessionTTL", "8h", "Lifetime of a sign-in session; the user signs in again after it.",
			dur(func(c *Config) *Duration { return &c.Fleet.SessionTTL })),
		key("fleet.sessionRefresh", "5m", "How long a session is trusted before the user's token is checked with GitHub again (GET /user); a token revoked by signing out ends the session on every replica within this time.",
			dur(func(c *Config) *Duration { return &c.Fleet.SessionRefresh })),
		key("fleet.refreshInterval", "15s", "How long the fleet view serves what it read from GitHub before reading again (conditional requests); 0 reads on every request.",
			dur(func(c *Config) *Duration { return &c.Fleet.RefreshInterval })),
		key("fleet.badges", "false", "Serve status badges /badges/OWNER/REPO/ENVIRONMENT.svg without sign-in (state and deployed short SHA only).",
			boolean(func(c *Config) *bool { return &c.Fleet.Badges })),
	}
}

// boolean sets a bool field from true or false.
func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("invalid boolean %q (use true or false)", v)
		}
		*field(c) = b
		return nil
	}
}

// fleetProblems checks the fleet settings; the sign-in settings are required only when the
// fleet view is enabled.
func (c *Config) fleetProblems() []string {
	f := c.Fleet
	var p []string
	p = appendIf(p, f.SessionTTL <= 0, "fleet.sessionTTL", "must be positive")
	p = appendIf(p, f.SessionRefresh <= 0 || f.SessionRefresh > f.SessionTTL, "fleet.sessionRefresh", "must be positive and at most "+named("fleet.sessionTTL"))
	p = appendIf(p, f.RefreshInterval < 0, "fleet.refreshInterval", "must not be negative")
	if !f.Enabled {
		return p
	}
	u, err := url.Parse(f.PublicURL)
	p = appendIf(p, err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "",
		"fleet.publicURL", "must be an absolute http(s) URL without query or fragment when fleet.enabled is true")
	p = appendIf(p, f.ClientID == "", "fleet.clientID", "is required when fleet.enabled is true")
	p = appendIf(p, f.ClientSecret == "", "fleet.clientSecret", "is required when fleet.enabled is true")
	return appendIf(p, len(f.SessionKey) < MinSessionKeyBytes, "fleet.sessionKey",
		fmt.Sprintf("must be at least %d bytes when fleet.enabled is true", MinSessionKeyBytes))
}
