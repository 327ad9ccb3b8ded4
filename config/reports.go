package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Reports holds the settings of the cluster reports endpoint, POST /api/v1/reports.
type Reports struct {
	// Secret is the HMAC-SHA256 key of signed reports (Flux generic-hmac, the generic JSON)
	// for every control plane without a key of its own.
	Secret Secret `yaml:"secret"`
	// BearerToken authenticates Argo CD reports for every control plane without its own.
	BearerToken Secret `yaml:"bearerToken"`
	// ControlPlanes holds per-control-plane credentials, by OWNER/REPO.
	ControlPlanes map[string]ReportCredentials `yaml:"controlPlanes"`
	MaxAge        Duration                     `yaml:"maxAge"`        // older reports (by their timestamp) are refused
	ClockSkew     Duration                     `yaml:"clockSkew"`     // reports dated further ahead are refused
	MaxBodyBytes  ByteSize                     `yaml:"maxBodyBytes"`  // larger bodies are refused unread
	MaxConcurrent int                          `yaml:"maxConcurrent"` // requests handled at once; others get 503
	// MaxClustersPerEnvironment caps the clusters one environment may register.
	MaxClustersPerEnvironment int      `yaml:"maxClustersPerEnvironment"`
	RetireAfter               Duration `yaml:"retireAfter"` // silence after which a cluster is retired; 0 never
}

// ReportCredentials are one control plane's report credentials.
type ReportCredentials struct {
	Secret      Secret `yaml:"secret" json:"secret"`           // HMAC key of its signed reports
	BearerToken Secret `yaml:"bearerToken" json:"bearerToken"` // token of its Argo CD reports
}

// Defaults of the reports settings.
const (
	DefaultReportsMaxAge        = 5 * time.Minute
	DefaultReportsClockSkew     = time.Minute
	DefaultReportsMaxBodyBytes  = 256 << 10
	DefaultReportsMaxConcurrent = 512
	DefaultReportsMaxClusters   = 100000
	DefaultReportsRetireAfter   = 7 * 24 * time.Hour
	// MinReportKeyBytes is the shortest accepted report secret or bearer token.
	MinReportKeyBytes = 16
)

// defaultReports returns the reports defaults.
func defaultReports() Reports {
	return Reports{MaxAge: Duration(DefaultReportsMaxAge), ClockSkew: Duration(DefaultReportsClockSkew),
		MaxBodyBytes: DefaultReportsMaxBodyBytes, MaxConcurrent: DefaultReportsMaxConcurrent,
		MaxClustersPerEnvironment: DefaultReportsMaxClusters, RetireAfter: Duration(DefaultReportsRetireAfter)}
}

// Enabled reports whether any report credential is set, which turns the endpoint on.
func (r Reports) Enabled() bool {
	return r.Secret != "" || r.BearerToken != "" || len(r.ControlPlanes) > 0
}

// reportsKeys lists the reports settings, in documentation order.
func reportsKeys() []Key {
	return []Key{
		key("reports.secret", "", "HMAC-SHA256 key of signed cluster reports (Flux generic-hmac token, generic JSON) for control planes without their own key; setting any report credential serves POST /api/v1/reports.",
			secret(func(c *Config) *Secret { return &c.Reports.Secret })),
		key("reports.bearerToken", "", "Bearer token of Argo CD reports (which cannot be signed) for control planes without their own; accepted over HTTPS only.",
			secret(func(c *Config) *Secret { return &c.Reports.BearerToken })),
		key("reports.controlPlanes", "(none)", "Per-control-plane report credentials: a map OWNER/REPO → {secret, bearerToken}; the variable takes the same as JSON.",
			jsonMap(func(c *Config) *map[string]ReportCredentials { return &c.Reports.ControlPlanes })),
		key("reports.maxAge", "5m", "Reports whose timestamp is older are refused as stale; also how long digests of accepted bodies are kept to refuse replays.",
			dur(func(c *Config) *Duration { return &c.Reports.MaxAge })),
		key("reports.clockSkew", "1m", "Reports dated further in the future than this are refused.",
			dur(func(c *Config) *Duration { return &c.Reports.ClockSkew })),
		key("reports.maxBodyBytes", "256Ki", "Largest report body; a larger one is refused (413) before it is read.",
			byteSize(func(c *Config) *ByteSize { return &c.Reports.MaxBodyBytes })),
		key("reports.maxConcurrent", "512", "Report requests handled at the same time; further ones are answered 503 with Retry-After, unread.",
			integer(func(c *Config) *int { return &c.Reports.MaxConcurrent })),
		key("reports.maxClustersPerEnvironment", "100000", "Most clusters one environment may register; reports of further new clusters are refused (403).",
			integer(func(c *Config) *int { return &c.Reports.MaxClustersPerEnvironment })),
		key("reports.retireAfter", "168h", "A cluster silent for this long is retired from its environment's inventory (recorded, and it returns on its next report); 0 never retires.",
			dur(func(c *Config) *Duration { return &c.Reports.RetireAfter })),
	}
}

// jsonMap sets a map of report credentials from JSON.
func jsonMap(field func(*Config) *map[string]ReportCredentials) func(*Config, string) error {
	return func(c *Config, v string) error {
		m := map[string]ReportCredentials{}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("invalid JSON object of OWNER/REPO → {secret, bearerToken}: %w", err)
		}
		*field(c) = m
		return nil
	}
}

// ReportCredentialsFor returns the credentials of a control plane: its own, else the defaults.
func (r Reports) ReportCredentialsFor(controlPlane string) ReportCredentials {
	for name, cred := range r.ControlPlanes {
		if strings.EqualFold(name, controlPlane) {
			if cred.Secret == "" {
				cred.Secret = r.Secret
			}
			if cred.BearerToken == "" {
				cred.BearerToken = r.BearerToken
			}
			return cred
		}
	}
	return ReportCredentials{Secret: r.Secret, BearerToken: r.BearerToken}
}

// reportsProblems checks the reports settings.
func (c *Config) reportsProblems() []string {
	r := c.Reports
	var p []string
	short := func(s Secret) bool { return s != "" && len(s) < MinReportKeyBytes }
	p = appendIf(p, short(r.Secret), "reports.secret", fmt.Sprintf("must be at least %d bytes", MinReportKeyBytes))
	p = appendIf(p, short(r.BearerToken), "reports.bearerToken", fmt.Sprintf("must be at least %d bytes", MinReportKeyBytes))
	for _, name := range slices.Sorted(maps.Keys(r.ControlPlanes)) {
		cred := r.ControlPlanes[name]
		owner, repo, ok := strings.Cut(name, "/")
		p = appendIf(p, !ok || owner == "" || repo == "" || strings.ContainsAny(repo, "/*?["), "reports.controlPlanes",
			fmt.Sprintf("%q is not OWNER/REPO", name))
		p = appendIf(p, short(cred.Secret) || short(cred.BearerToken), "reports.controlPlanes",
			fmt.Sprintf("%s: secret and bearerToken must be at least %d bytes", name, MinReportKeyBytes))
	}
	p = appendIf(p, r.MaxAge <= 0, "reports.maxAge", "must be positive")
	p = appendIf(p, r.ClockSkew < 0, "reports.clockSkew", "must not be negative")
	p = appendIf(p, r.MaxBodyBytes <= 0, "reports.maxBodyBytes", "must be positive")
	p = appendIf(p, r.MaxConcurrent <= 0, "reports.maxConcurrent", "must be positive")
	p = appendIf(p, r.MaxClustersPerEnvironment <= 0, "reports.maxClustersPerEnvironment", "must be positive")
	return appendIf(p, r.RetireAfter < 0, "reports.retireAfter", "must not be negative (0 never retires)")
}
