package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kalypso-gitops/kalypso/render"
)

// Key describes one setting: its YAML path, environment variable, default and meaning.
type Key struct {
	Path        string // YAML path, such as github.app.webhookSecret
	Env         string // overriding environment variable
	Default     string // default value, as documented
	Description string // one-sentence meaning
	set         func(c *Config, v string) error
}

// Keys lists every setting in documentation order.
func Keys() []Key {
	return slices.Concat([]Key{
		key("server.address", ":8080", "Address of the public listener: the webhook endpoint and the probes (host:port; port 0 picks a free port).",
			str(func(c *Config) *string { return &c.Server.Address })),
		key("server.managementAddress", DefaultManagementAddress, "Address of the management listener: /metrics and the probes. Never expose it publicly.",
			str(func(c *Config) *string { return &c.Server.ManagementAddress })),
		key("server.shutdownTimeout", "30s", "Longest graceful shutdown: queued and running webhook work and the current resync may finish within it.",
			dur(func(c *Config) *Duration { return &c.Server.ShutdownTimeout })),
		key("server.readHeaderTimeout", "10s", "Time a client has to send its request headers; slower connections are closed.",
			dur(func(c *Config) *Duration { return &c.Server.ReadHeaderTimeout })),
		key("server.readTimeout", "30s", "Time a client has to send a whole request, body included.",
			dur(func(c *Config) *Duration { return &c.Server.ReadTimeout })),
		key("server.writeTimeout", "1m", "Time to answer a request, counted from the end of its headers; at least server.readTimeout.",
			dur(func(c *Config) *Duration { return &c.Server.WriteTimeout })),
		key("server.idleTimeout", "1m", "Time a keep-alive connection may wait for its next request.",
			dur(func(c *Config) *Duration { return &c.Server.IdleTimeout })),
		key("server.maxHeaderBytes", "16384", "Largest request header block, in bytes; a connection holds at most this plus 4 KiB of headers it has not finished.",
			integer(func(c *Config) *int { return &c.Server.MaxHeaderBytes })),
		key("server.maxConcurrentBodies", "8", "Webhook bodies read at the same time (each up to 25 MB); when all are taken, deliveries are answered 503 unread.",
			integer(func(c *Config) *int { return &c.Server.MaxConcurrentBodies })),
	}, listenerKeys(), []Key{
		keyEnv("github.v3APIURL", EnvPrefix+"GITHUB_V3_API_URL", DefaultV3APIURL, "GitHub REST API base URL; for GitHub Enterprise Server https://HOST/api/v3/.",
			str(func(c *Config) *string { return &c.GitHub.V3APIURL })),
		key("github.webURL", DefaultWebURL, "GitHub web URL; for GitHub Enterprise Server https://HOST.",
			str(func(c *Config) *string { return &c.GitHub.WebURL })),
		key("github.graphqlURL", "derived from github.v3APIURL", "GitHub GraphQL endpoint (https://api.github.com/graphql, or https://HOST/api/graphql).",
			str(func(c *Config) *string { return &c.GitHub.GraphQLURL })),
		key("github.timeout", "2m", "Time limit of one GitHub API call, including its retries and rate-limit waits.",
			dur(func(c *Config) *Duration { return &c.GitHub.Timeout })),
		key("github.httpCacheMB", "4", "Size in MiB of the conditional-request cache of each installation client (0 disables it).",
			integer(func(c *Config) *int { return &c.GitHub.HTTPCacheMB })),
		key("github.app.integrationID", "(required)", "The GitHub App's ID.",
			int64Setter(func(c *Config) *int64 { return &c.GitHub.App.IntegrationID })),
		key("github.app.webhookSecret", "(required)", "Secret GitHub signs webhook deliveries with; the app refuses to start without it.",
			secret(func(c *Config) *Secret { return &c.GitHub.App.WebhookSecret })),
		key("github.app.privateKey", "", "The App's private key, PEM inline. Exactly one of privateKey and privateKeyFile is required.",
			secret(func(c *Config) *Secret { return &c.GitHub.App.PrivateKey })),
		key("github.app.privateKeyFile", "", "Path of a file holding the App's PEM private key.",
			str(func(c *Config) *string { return &c.GitHub.App.PrivateKeyFile })),
		key("controlPlanes", "(none)", "OWNER/REPO patterns (globs such as my-org/platform-*) of the repositories trusted as control planes; the variable takes a comma-separated list. Any other repository is never read as a control plane.",
			list(func(c *Config) *[]string { return &c.ControlPlanes })),
		key("cache.dir", "", "Directory of the local git cache; empty keeps it in memory (faster; rebuilt from GitHub after a restart either way).",
			str(func(c *Config) *string { return &c.Cache.Dir })),
		key("cache.maxBytes", "1Gi", "Size of the git cache (bytes or a quantity such as 512Mi) above which the least recently used repositories are evicted; 0 means no limit.",
			byteSize(func(c *Config) *ByteSize { return &c.Cache.MaxBytes })),
	}, sourcesKeys(), []Key{
		key("resync.interval", "10m", "Period of the full resync, which also runs at start; 0 disables the periodic run.",
			dur(func(c *Config) *Duration { return &c.Resync.Interval })),
		key("promotion.pollInterval", "15s", "How often cluster commit statuses are polled while a promotion waits for compliance.",
			dur(func(c *Config) *Duration { return &c.Promotion.PollInterval })),
	}, statusKeys(), listKeys(), []Key{
		key("preview.enabled", "true", "Preview open pull requests into control planes and registered workload branches: one check run per affected environment on the head commit.",
			boolean(func(c *Config) *bool { return &c.Preview.Enabled })),
		key("preview.comment", "true", "Keep one comment on each previewed pull request summing up every environment, edited in place.",
			boolean(func(c *Config) *bool { return &c.Preview.Comment })),
		key(render.SettingMaxAssignmentBytes, strconv.Itoa(render.DefaultMaxAssignmentBytes), "Largest output of one assignment, its files together, counted as written in every nested rendering pass.",
			integer(func(c *Config) *int { return &c.Render.MaxAssignmentBytes })),
		key(render.SettingMaxFunctionBytes, strconv.Itoa(render.DefaultMaxFunctionBytes), "Most bytes template functions may make while one assignment renders (strings, and the text size of lists and maps).",
			integer(func(c *Config) *int { return &c.Render.MaxFunctionBytes })),
		key(render.SettingMaxListLength, strconv.Itoa(render.DefaultMaxListLength), "Most elements of a list or map a template function makes (until, untilStep, seq, splitList, list, append, ...).",
			integer(func(c *Config) *int { return &c.Render.MaxListLength })),
		key(render.SettingTimeout, render.DefaultTimeout.String(), "Time limit of rendering one environment; assignments not rendered by then fail and keep their last output.",
			dur(func(c *Config) *Duration { return &c.Render.Timeout })),
	}, fleetKeys(), queueKeys(), storeKeys(), reportsKeys(), []Key{
		key("log.level", DefaultLogLevel, "Minimum log level: trace, debug, info, warn or error.",
			str(func(c *Config) *string { return &c.Log.Level })),
		key("log.format", DefaultLogFormat, "Log format: json (one object per line) or console (human-readable).",
			str(func(c *Config) *string { return &c.Log.Format })),
	})
}

// key builds a Key whose environment variable is derived from its path.
func key(path, def, desc string, set func(*Config, string) error) Key {
	return Key{Path: path, Env: EnvName(path), Default: def, Description: desc, set: set}
}

// keyEnv builds a Key whose environment variable cannot be derived from its path.
func keyEnv(path, env, def, desc string, set func(*Config, string) error) Key {
	return Key{Path: path, Env: env, Default: def, Description: desc, set: set}
}

// EnvName turns a YAML path into its variable: github.app.webhookSecret becomes
// KALYPSO_GITHUB_APP_WEBHOOK_SECRET.
func EnvName(path string) string {
	var b strings.Builder
	b.WriteString(EnvPrefix)
	for i, part := range strings.Split(path, ".") {
		if i > 0 {
			b.WriteByte('_')
		}
		b.WriteString(snake(part))
	}
	return b.String()
}

// snake converts a camelCase word to upper snake case, keeping acronyms together.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && isUpper(c) && (!isUpper(r[i-1]) || (i+1 < len(r) && isLower(r[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteString(strings.ToUpper(string(c)))
	}
	return b.String()
}

func isUpper(c rune) bool { return c >= 'A' && c <= 'Z' }
func isLower(c rune) bool { return c >= 'a' && c <= 'z' }

// str sets a string field.
func str(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

// secret sets a Secret field.
func secret(field func(*Config) *Secret) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = Secret(v); return nil }
}

// dur sets a Duration field.
func dur(field func(*Config) *Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := ParseDuration(v)
		if err != nil {
			return err
		}
		*field(c) = d
		return nil
	}
}

// integer sets an int field.
func integer(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid integer %q", v)
		}
		*field(c) = n
		return nil
	}
}

// int64Setter sets an int64 field.
func int64Setter(field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid integer %q", v)
		}
		*field(c) = n
		return nil
	}
}
